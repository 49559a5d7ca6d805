"""PrometheusSource and its HTTP client on bad input: not Prometheus, errors, garbage,
timeouts, credentials, odd label values. Each gives one sentence, never a traceback."""

from __future__ import annotations

import json
import logging

import pytest
from scripted_http import Answer, ScriptedServer
from scripted_prometheus import scripted

from gpumon.telemetry.cluster.promapi import PromClient, check_url, parse_header, public_url
from gpumon.telemetry.cluster.prometheus import PrometheusSource
from gpumon.telemetry.model.types import SourceState

TOKEN = "s3cr3t-t0ken"


def ok(data: object) -> Answer:
    return 200, "application/json", json.dumps({"status": "success", "data": data}).encode(), 0


def vector(series: list[tuple[dict[str, str], float]]) -> Answer:
    return ok({"resultType": "vector",
               "result": [{"metric": m, "value": [1.0, str(v)]} for m, v in series]})


def error_of(source: PrometheusSource) -> str:
    snap = source.sample()
    assert snap.status.state is SourceState.ERROR and snap.hosts == ()
    return snap.status.message


@pytest.mark.parametrize(("answer", "words"), [
    ((200, "text/html", b"<html><body>Welcome to nginx!</body></html>", 0),
     "answered, but not as a Prometheus server does (HTTP 200 OK); check the address"),
    ((404, "text/plain", b"404 page not found", 0),
     "answered, but not as a Prometheus server does (HTTP 404 Not Found)"),
    ((200, "application/octet-stream", bytes(range(256)), 0),
     "answered, but not as a Prometheus server does"),
    ((200, "application/json", b'{"status": "success", "data": [1, 2]}', 0),
     "answered, but not as a Prometheus server does (expected a vector result)"),
    ((422, "application/json", b'{"status": "error", "errorType": "execution", '
                               b'"error": "query processing would load too many samples"}', 0),
     "answered with an error: query processing would load too many samples."),
    ((503, "text/plain", b"Service Unavailable", 0),
     "(HTTP 503 Service Unavailable)"),
])
def test_not_prometheus_errors_and_garbage_give_a_sentence(answer: Answer, words: str) -> None:
    with ScriptedServer(lambda _: answer) as server:
        message = error_of(PrometheusSource(server.url))
    assert words in message
    assert message.startswith(("The Prometheus server at", f"{server.url} answered"))


def test_a_query_that_times_out_gives_a_sentence_and_ends_the_tick() -> None:
    asked: list[str] = []
    with ScriptedServer(lambda path: (asked.append(path), (  # type: ignore[func-returns-value]
            200, "application/json", b"{}", 10.0))[1]) as server:
        source = PrometheusSource(server.url, timeout_s=0.5)
        message = error_of(source)
        assert len(asked) == 1  # the first query that times out ends the tick
    assert message == f"The Prometheus server at {server.url} did not answer within 0.5 s."


def test_header_is_sent_and_the_token_never_appears(caplog: pytest.LogCaptureFixture) -> None:
    with ScriptedServer(lambda _: (401, "text/plain", b"Unauthorized", 0)) as server:
        source = PrometheusSource(server.url + "/", {"Authorization": f"Bearer {TOKEN}"})
        with caplog.at_level(logging.DEBUG):
            snap = source.sample()
    assert server.requests[0][1]["Authorization"] == f"Bearer {TOKEN}"
    assert snap.status.message == (f"The server at {server.url} refused gpumon (HTTP 401 "
                                   "Unauthorized); check --prometheus-header.")
    assert TOKEN not in repr(snap) and TOKEN not in caplog.text


def test_url_credentials_are_not_shown() -> None:
    assert public_url("https://user:pw@prom.lab:9090/prom/?x=1") == "https://prom.lab:9090/prom"
    client = PromClient("http://user:pw@127.0.0.1:1")
    assert "pw" not in client.shown_url


@pytest.mark.parametrize(("url", "words"), [
    ("ftp://server", "is not an http:// or https:// address"),
    ("server:9090", "is not an http:// or https:// address"),
    ("http://server:port", "has a port that is not a number"),
])
def test_bad_urls(url: str, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        check_url(url)


def test_headers_from_text_and_file(tmp_path: object) -> None:
    assert parse_header("Authorization: Bearer abc") == ("Authorization", "Bearer abc")
    path = tmp_path / "token"  # type: ignore[operator]
    path.write_text(f"Authorization: Bearer {TOKEN}\n")
    assert parse_header(f"@{path}") == ("Authorization", f"Bearer {TOKEN}")
    for bad in ("Authorization Bearer", ": x", "Bad Name: x"):
        with pytest.raises(ValueError, match="must look like 'Name: value'") as err:
            parse_header(bad)
        assert "x" not in str(err.value).split("for example")[0][-3:]
    with pytest.raises(ValueError, match="cannot read the header file"):
        parse_header(f"@{tmp_path}/missing")


def test_label_values_with_quotes_and_newlines() -> None:
    host = 'lab "A"\nrack \\2'
    labels = {"Hostname": host, "gpu": "0", "modelName": 'Tesla "T4"\n', "UUID": "GPU-1",
              "instance": "10.0.0.1:9401"}

    series = {"DCGM_FI_DEV_GPU_UTIL": [(labels, 42.0)],
              "up": [({"instance": "10.0.0.1:9401"}, 1.0)]}
    with scripted(series) as server:
        snap = PrometheusSource(server.url).sample()
        (view,) = snap.hosts
        assert view.host == host and view.gpus[0].name == 'Tesla "T4"\n'
        assert view.samples[0].gpu_util_pct == 42.0
        process_query = next(p for p, _ in server.requests
                             if "gpumon_process_gpu_memory_bytes" in p)
    assert "instance%3D~%2210%5C%5C.0%5C%5C.0%5C%5C.1%3A9401%22" in process_query


def test_nan_and_odd_series_are_skipped() -> None:
    good = {"Hostname": "h", "gpu": "0", "instance": "i"}

    series = {"DCGM_FI_DEV_GPU_UTIL": [(good, float("nan")), ({"Hostname": "h", "gpu": "x"}, 5.0)],
              "DCGM_FI_DEV_GPU_TEMP": [(good, 61.0)],
              "up": [({"instance": "i"}, 1.0)]}
    with scripted(series) as server:
        (view,) = PrometheusSource(server.url).sample().hosts
    (s,) = view.samples
    assert s.gpu_util_pct is None and s.temperature_c == 61.0
