"""A ScriptedServer that answers the selectors PrometheusSource sends, from a dict of series.

``series`` maps a metric name to ``[(labels, value), ...]``; the server answers instant and
range queries whose selector is ``name``, ``name{matchers}`` or ``{__name__=~"a|b", ...}``
with ``=`` and ``=~`` matchers (anchored, as Prometheus anchors them), adding ``__name__`` as a
real server does for a plain selector. Anything else is answered ``bad_data``, so a query the
source should not send fails the test that sees it.
"""

from __future__ import annotations

import json
import re
import urllib.parse
from collections.abc import Callable

from scripted_http import Answer, ScriptedServer

Series = dict[str, list[tuple[dict[str, str], float]]]
_SELECTOR = re.compile(r'^([A-Za-z_:][A-Za-z0-9_:]*)?(?:\{(.*)\})?$', re.S)
_MATCHER = re.compile(r'\s*([A-Za-z_][A-Za-z0-9_]*)\s*(=~|=)\s*("(?:[^"\\]|\\.)*")\s*,?', re.S)


def ok(data: object) -> Answer:
    return 200, "application/json", json.dumps({"status": "success", "data": data}).encode(), 0


def bad(error: str) -> Answer:
    body = {"status": "error", "errorType": "bad_data", "error": error}
    return 400, "application/json", json.dumps(body).encode(), 0


def select(series: Series, promql: str) -> list[tuple[dict[str, str], float]] | None:
    """The series a selector picks, with ``__name__``; None when it is not a selector."""
    match = _SELECTOR.match(promql.strip())
    if match is None:
        return None
    name, body = match.group(1), match.group(2) or ""
    matchers = []
    pos = 0
    while pos < len(body):
        m = _MATCHER.match(body, pos)
        if m is None:
            return None
        matchers.append((m.group(1), m.group(2), json.loads(m.group(3))))
        pos = m.end()
    out = []
    for metric, found in series.items():
        if name is not None and metric != name:
            continue
        for labels, value in found:
            full = {"__name__": metric, **labels}
            if all(full.get(k, "") == v if op == "=" else re.fullmatch(v, full.get(k, ""))
                   for k, op, v in matchers):
                out.append((full, value))
    return out


def answer_from(series: Series, targets: list[dict[str, object]] | None = None
                ) -> Callable[[str], Answer]:
    def answer(path: str) -> Answer:
        url = urllib.parse.urlsplit(path)
        params = dict(urllib.parse.parse_qsl(url.query))
        if url.path == "/api/v1/targets":
            return ok({"activeTargets": targets or []})
        query = params.get("query", "")
        if query.startswith("last_over_time(DCGM_FI_DEV_GPU_UTIL["):  # GPUs of down targets
            down = {(u.get("job", ""), u.get("instance", "")) for u, v in series.get("up", [])
                    if v != 1.0}
            return ok({"resultType": "vector", "result": [
                {"metric": labels, "value": [1.0, repr(v)]}
                for labels, v in series.get("DCGM_FI_DEV_GPU_UTIL", [])
                if (labels.get("job", ""), labels.get("instance", "")) in down]})
        found = select(series, query)
        if found is None:
            return bad(f"unsupported query {params.get('query')!r}")
        if url.path == "/api/v1/query":
            return ok({"resultType": "vector", "result": [
                {"metric": labels, "value": [1.0, repr(v)]} for labels, v in found]})
        start, end, step = (float(params[k]) for k in ("start", "end", "step"))
        times = [start + k * step for k in range(int((end - start) // step) + 1)]
        return ok({"resultType": "matrix", "result": [
            {"metric": labels, "values": [[t, repr(v)] for t in times]}
            for labels, v in found]})
    return answer


def scripted(series: Series, targets: list[dict[str, object]] | None = None) -> ScriptedServer:
    """A server answering from ``series`` (a dict the test may change between ticks)."""
    return ScriptedServer(answer_from(series, targets))
