"""The cluster view, before and after: queries per tick, tick latency, the first frame of a
machine's panels after a click, and the cost of a tick as the fleet grows.

(a) A real Prometheus scrapes 64 machines x 8 simulated GPUs (``fleet_exporter.py``: one
    process, one port per machine, each served by the exporter's own reader and server) every
    second. In a fresh process each, gpumon at the baseline revision and gpumon here run the
    cluster window on it (offscreen unless QT_QPA_PLATFORM says otherwise, 1400x900, Overview
    shown): per tick, the HTTP queries ``PrometheusSource.sample()`` sends and its latency, and
    the drawn frame (``_on_snapshot`` + ``processEvents()``); per click, the time from
    ``open_host`` to the machine's panels drawn with its history (one tick, not waiting for
    the timer); RSS at the end. Then the same through ``slow_link.py``, a loopback proxy that
    adds ``--delay-ms`` (10) to every request, as a remote server's round trip does.
(b) One tick's cost without HTTP for 1,250 and 12,500 machines x 8 GPUs: a generated answer
    (every series of gpumon's exporter for each GPU, labels as Prometheus gives them) handed
    to ``PrometheusSource.sample()`` in place of the server's decoded JSON. The baseline
    revision at 12,500 machines took minutes; it runs only with ``--full``.

Baseline: the revision before the cluster view's identity rework (``--baseline REV``;
default: the parent of the commit that added gpumon/telemetry/cluster/fleet.py), extracted with
``git archive`` and run the same way in the same run, alternating with this tree (twice each
unless ``--quick``): the load of a shared machine drifts.
Targets: (a) at most 2 queries per tick; click-to-panels no slower than the baseline; frame
median <= 8 ms; RSS <= 300 MB. (b) 12,500 machines cost <= 12x 1,250 (linear: 10x).

Run from the repository root: ``python benchmarks/bench_cluster.py [--quick] [--full]``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
HERE = Path(__file__).resolve().parent
FRAME_TARGET_MS, RSS_TARGET_MB, QUERIES_TARGET, GROWTH_TARGET = 8.0, 300.0, 2, 12.0


# -- the measuring child (runs with PYTHONPATH at one revision) ------------------------------
def _count_queries() -> list[int]:
    """Counts PromClient.get calls (every HTTP query, from any thread) into the list."""
    import threading

    from gpumon.telemetry.cluster import promapi

    count, lock, original = [0], threading.Lock(), promapi.PromClient.get

    def get(self: Any, path: str, params: Any) -> Any:
        with lock:
            count[0] += 1
        return original(self, path, params)

    promapi.PromClient.get = get  # type: ignore[method-assign]
    return count


def measure_window(url: str, ticks: int, clicks: int) -> dict[str, Any]:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    import psutil
    from PySide6.QtWidgets import QApplication

    from gpumon.telemetry.cluster.prometheus import PrometheusSource
    from gpumon.ui.window.cluster_window import ClusterWindow

    count = _count_queries()
    app = QApplication.instance() or QApplication([])
    source = PrometheusSource(url, backfill_s=3600)
    window = ClusterWindow(source, 1.0)
    window.resize(1400, 900)
    window.show()
    window.sampling.set_paused(True)  # this loop ticks; the window's own thread must not
    app.processEvents()
    time.sleep(0.5)
    tick_ms, frame_ms, queries = [], [], []
    snap = None
    for i in range(ticks + 3):
        q0, t0 = count[0], time.perf_counter()
        snap = source.sample()
        t1 = time.perf_counter()
        window._on_snapshot(snap)  # what the sampling thread's signal runs
        app.processEvents()
        t2 = time.perf_counter()
        if i >= 3:  # the first ticks build the panels and fill the history
            tick_ms.append((t1 - t0) * 1e3)
            frame_ms.append((t2 - t1) * 1e3)
            queries.append(count[0] - q0)
        time.sleep(0.05)
    assert snap is not None and snap.status.usable, snap and snap.status
    gpus = sum(len(h.gpus) for h in snap.hosts)
    click_ms, click_queries = [], []
    for k in range(clicks):
        host = snap.hosts[(7 * k + 5) % len(snap.hosts)].host
        q0, t0 = count[0], time.perf_counter()
        window.open_host(host)
        snap = source.sample()
        window._on_snapshot(snap)
        app.processEvents()
        t1 = time.perf_counter()
        panel = window.gpu_panel(0)
        assert panel is not None and host in panel.title.text(), host
        assert window.history.count(0) > 1  # drawn with the server's history
        click_ms.append((t1 - t0) * 1e3)
        click_queries.append(count[0] - q0)
        time.sleep(0.3)
    rss = psutil.Process().memory_info().rss / 1e6
    window.close()
    return {"gpus": gpus, "machines": len(snap.hosts), "queries": queries, "tick_ms": tick_ms,
            "frame_ms": frame_ms, "click_ms": click_ms, "click_queries": click_queries,
            "rss_mb": rss}


def generated(machines: int, gpus: int) -> dict[str, list[dict[str, Any]]]:
    """Every series gpumon's exporter sends, for ``machines`` x ``gpus``, by metric name, as
    a Prometheus answer's ``result`` entries (label dicts shared where Prometheus's JSON
    would give equal ones)."""
    from gpumon.telemetry.model.exported import NVML_UP, READ_BACK

    out: dict[str, list[dict[str, Any]]] = {name: [] for name in [*READ_BACK, "up", NVML_UP]}
    t = time.time()
    for m in range(machines):
        instance = f"10.{m // 62500}.{m // 250 % 250}.{m % 250 + 1}:9401"
        host = f"node-{m:05d}"
        out["up"].append({"metric": {"__name__": "up", "instance": instance, "job": "gpumon"},
                          "value": [t, "1"]})
        out[NVML_UP].append({"metric": {"__name__": NVML_UP, "Hostname": host,
                                        "instance": instance, "job": "gpumon"},
                             "value": [t, "1"]})
        for g in range(gpus):
            base = {"Hostname": host, "gpu": str(g), "UUID": f"GPU-{m:05d}-{g}",
                    "modelName": "NVIDIA H100 80GB HBM3", "pci_bus_id": f"00000000:{g:02X}:00.0",
                    "instance": instance, "job": "gpumon"}
            for name in READ_BACK:
                out[name].append({"metric": {"__name__": name, **base},
                                  "value": [t, str(float((m + g) % 97))]})
    return out


def measure_scale(machines: int, gpus: int, repeats: int) -> dict[str, Any]:
    """Median seconds of one ``sample()`` on a generated answer (no HTTP, no JSON)."""
    from gpumon.telemetry.cluster import promapi
    from gpumon.telemetry.cluster.prometheus import PrometheusSource

    series = generated(machines, gpus)
    everything = [s for found in series.values() for s in found]

    def get(self: Any, path: str, params: Any) -> Any:
        if path.endswith("query_range"):
            return {"resultType": "matrix", "result": []}
        if path.endswith("targets"):
            return {"activeTargets": []}
        query = params["query"]
        if query.startswith("{__name__=~"):
            names = set(query.split('"')[1].split("|"))
            found = everything if names >= set(series) - {"up"} else [
                s for n in names for s in series.get(n, [])]
        else:
            found = series.get(query.split("{")[0], []) if "{" not in query else []
        # the same objects at every call: neither revision changes a tick's answer
        return {"resultType": "vector", "result": found}

    promapi.PromClient.get = get  # type: ignore[method-assign]
    gc.collect()
    gc.freeze()  # the answer exists before the tick: the collector need not scan it
    seconds = []
    for _ in range(repeats):
        source = PrometheusSource("http://127.0.0.1:9")
        t0 = time.perf_counter()
        snap = source.sample()
        seconds.append(time.perf_counter() - t0)
        assert snap.status.usable and sum(len(h.gpus) for h in snap.hosts) == machines * gpus, \
            snap.status
        source.close()
    return {"series": len(everything), "seconds": statistics.median(seconds)}


# -- the parent: servers, revisions, figures -------------------------------------------------
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait(check: Any, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise SystemExit(f"timed out waiting for {what}")


def _query(url: str, promql: str) -> list[Any]:
    with urllib.request.urlopen(f"{url}/api/v1/query?" + urllib.parse.urlencode(
            {"query": promql}), timeout=5) as r:
        return list(json.load(r)["data"]["result"])


def baseline_tree(rev: str | None, tmp: Path) -> tuple[str, Path]:
    if rev is None:
        added = subprocess.run(["git", "log", "--diff-filter=A", "--format=%H", "--",
                                "gpumon/telemetry/cluster/fleet.py"], cwd=REPO, capture_output=True,
                               text=True, check=True).stdout.split()
        if not added:
            raise SystemExit("no baseline: give --baseline REV")
        rev = added[-1] + "^"
    tree = tmp / "baseline"
    tree.mkdir()
    archive = subprocess.run(["git", "archive", rev, "gpumon"], cwd=REPO, capture_output=True,
                             check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    return rev, tree


def child(tree: Path, *args: str) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run([sys.executable, str(Path(__file__).resolve()), *args], env=env,
                          cwd=tree, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the measuring process failed:\n{done.stderr[-3000:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def compare(old: Path, url: str, runs: int, ticks: int, clicks: int
            ) -> dict[str, dict[str, Any]]:
    """Both revisions' window figures on ``url``, alternated (baseline, this tree, baseline,
    ...): a shared machine's load drifts."""
    results: dict[str, dict[str, Any]] = {}
    for _ in range(runs):
        for name, tree in (("baseline", old), ("this tree", REPO)):
            r = child(tree, "--measure", url, "--ticks", str(ticks), "--clicks", str(clicks))
            if name in results:
                for key, value in r.items():
                    if isinstance(value, list):
                        results[name][key] += value
                results[name]["rss_mb"] = max(results[name]["rss_mb"], r["rss_mb"])
            else:
                results[name] = r
    return results


def report(results: dict[str, dict[str, Any]]) -> None:
    med = statistics.median
    for name, r in results.items():
        p95 = statistics.quantiles(r["frame_ms"], n=20)[18]
        print(f"    {name:>9}: {med(r['queries']):g} queries per tick, tick median "
              f"{med(r['tick_ms']):.1f} ms; click to panels median {med(r['click_ms']):.0f} ms "
              f"({med(r['click_queries']):g} queries); frame median {med(r['frame_ms']):.2f} ms, "
              f"p95 {p95:.2f} ms; RSS {r['rss_mb']:.0f} MB ({r['gpus']} GPUs)")
    old_r, new_r = results["baseline"], results["this tree"]
    print(f"    tick latency {med(old_r['tick_ms']) / med(new_r['tick_ms']):.2f}x faster, "
          f"click to panels {med(old_r['click_ms']) / med(new_r['click_ms']):.2f}x faster, "
          f"queries per tick {med(old_r['queries']):g} -> {med(new_r['queries']):g}")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--full", action="store_true", help="the baseline at 12,500 machines")
    parser.add_argument("--baseline", default=None, metavar="REV")
    parser.add_argument("--delay-ms", type=float, default=10.0,
                        help="the delay of the proxy that stands for a remote server")
    parser.add_argument("--measure", metavar="URL", help=argparse.SUPPRESS)
    parser.add_argument("--scale", type=int, metavar="MACHINES", help=argparse.SUPPRESS)
    parser.add_argument("--ticks", type=int, default=20, help=argparse.SUPPRESS)
    parser.add_argument("--clicks", type=int, default=5, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure_window(args.measure, args.ticks, args.clicks)))
        return 0
    if args.scale:
        print(json.dumps(measure_scale(args.scale, 8, 1 if args.scale > 5000 else 3)))
        return 0
    sys.path.insert(0, str(HERE))
    from machine import describe

    print(describe())
    prometheus = shutil.which("prometheus")
    if prometheus is None:
        raise SystemExit("the prometheus binary is not installed")
    ticks, clicks = (10, 3) if args.quick else (20, 6)
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        rev, old = baseline_tree(args.baseline, tmp)
        print(f"baseline: {rev}")
        fleet = subprocess.Popen([sys.executable, str(HERE / "fleet_exporter.py"),
                                  "--machines", "64", "--gpus", "8"], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, text=True,
                                 env={**os.environ, "PYTHONPATH": str(REPO)})
        server = None
        try:
            assert fleet.stdout is not None
            ports = fleet.stdout.readline().split()
            port = _free_port()
            url = f"http://127.0.0.1:{port}"
            targets = ", ".join(f"'127.0.0.1:{p}'" for p in ports)
            (tmp / "prometheus.yml").write_text(
                "global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\nscrape_configs:\n"
                f"  - job_name: gpumon\n    static_configs:\n      - targets: [{targets}]\n")
            server = subprocess.Popen(
                [prometheus, f"--config.file={tmp / 'prometheus.yml'}",
                 f"--storage.tsdb.path={tmp / 'data'}", f"--web.listen-address=127.0.0.1:{port}"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            _wait(lambda: len(_query(url, "DCGM_FI_DEV_GPU_UTIL")) == 512, 60,
                  "Prometheus to scrape 512 GPUs")
            time.sleep(5)  # a few seconds of history for the panels
            results = compare(old, url, 1 if args.quick else 2, ticks, clicks)
            from slow_link import SlowLink

            link = SlowLink(url, args.delay_ms / 1e3)
            try:
                remote = compare(old, link.url, 1, ticks // 2, clicks // 2 + 1)
            finally:
                link.close()
        finally:
            if server is not None:
                server.terminate()
                server.wait(15)
            if fleet.stdin is not None:
                fleet.stdin.close()
            try:
                fleet.wait(30)
            except subprocess.TimeoutExpired:
                fleet.kill()
                fleet.wait(5)
        scale = {"this tree": {n: child(REPO, "--scale", str(n)) for n in (1250, 12500)},
                 "baseline": {n: child(old, "--scale", str(n))
                              for n in ((1250, 12500) if args.full else (1250,))}}

    med = statistics.median
    runs = 1 if args.quick else 2
    print(f"(a) 64 machines x 8 GPUs on a real Prometheus, {runs} x ({ticks} ticks, {clicks} "
          "clicks), alternated")
    report(results)
    print(f"    the same through a proxy adding {args.delay_ms:g} ms to every request "
          f"(a remote server), 1 x ({ticks // 2} ticks, {clicks // 2 + 1} clicks)")
    report(remote)
    old_r, new_r = results["baseline"], results["this tree"]
    print("(b) one tick without HTTP on a generated answer (8 GPUs per machine)")
    for name, by_size in scale.items():
        line = ", ".join(f"{n:,} machines ({r['series']:,} series) {r['seconds']:.2f} s"
                         for n, r in by_size.items())
        print(f"    {name:>9}: {line}")
    ours = scale["this tree"]
    growth = ours[12500]["seconds"] / ours[1250]["seconds"]
    print(f"    this tree: 12,500 / 1,250 machines = {growth:.1f}x (10x is linear); "
          f"at 1,250 machines {scale['baseline'][1250]['seconds'] / ours[1250]['seconds']:.1f}x "
          "faster than the baseline")
    checks = {
        f"queries per tick <= {QUERIES_TARGET}": med(new_r["queries"]) <= QUERIES_TARGET,
        "click to panels no slower than the baseline":
            med(new_r["click_ms"]) <= med(old_r["click_ms"]),
        f"frame median <= {FRAME_TARGET_MS:g} ms": med(new_r["frame_ms"]) <= FRAME_TARGET_MS,
        f"RSS <= {RSS_TARGET_MB:g} MB": new_r["rss_mb"] <= RSS_TARGET_MB,
        f"growth <= {GROWTH_TARGET:g}x": growth <= GROWTH_TARGET}
    for what, met in checks.items():
        print(f"    target {what}: {'met' if met else 'NOT met'}")
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
