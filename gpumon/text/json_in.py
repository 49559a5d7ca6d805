"""A snapshot stream read back: one line of JSON (``json_out``'s document) -> a Snapshot.

The stream is what ``gpumon stream`` prints (over SSH, the remote source reads it) and what a
recording holds: a header line, then one ``gpumon.snapshot/1`` document a line.

    {"stream": "gpumon.stream/1", "gpumon": "0.9.0", "schema": "gpumon.snapshot/1", ...}
    {"schema": "gpumon.snapshot/1", "timestamp_epoch_s": ..., "gpus": [...], ...}

Every line is untrusted: it may come from another machine, a file, a program that is not
gpumon. :func:`decode_snapshot` checks each value's type and range as the schema
(docs/snapshot.schema.json) says, caps every string and list, rejects NaN and infinity, and
raises :class:`StreamError` with a sentence on anything else; it never evaluates anything.
Keys it does not know are ignored, so a newer gpumon's additions are read by an older one.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable
from typing import Any, TypeVar

from gpumon import __version__
from gpumon.i18n import tr
from gpumon.telemetry.model.activity import ActivityState, LinkRate
from gpumon.telemetry.model.metrics import ACTIVITY_PCT_KEYS
from gpumon.telemetry.model.topology import UNKNOWN, GpuPlace, NvLink, Topology
from gpumon.telemetry.model.types import (
    GpuInfo,
    GpuProcess,
    GpuSample,
    MachineInfo,
    MigSample,
    ProcessType,
    Snapshot,
    SourceState,
    SourceStatus,
)
from gpumon.text.json_out import SAMPLE_KEYS, SCHEMA

STREAM = "gpumon.stream/1"
MAX_GPUS = 256
MAX_PROCESSES = 4096
MAX_LIST = 256  # MIG devices of a GPU, NVLinks, topology rows
MAX_TEXT = 4096  # a command line; other strings are cut at MAX_NAME
MAX_NAME = 256
_T = TypeVar("_T")


class StreamError(ValueError):
    """A line that is not what the stream should carry; ``str()`` says what is wrong."""


def header_line(interval_s: float) -> str:
    """The stream's first line: which gpumon and which snapshot schema follow."""
    return json.dumps({"stream": STREAM, "gpumon": __version__, "schema": SCHEMA,
                       "interval_s": interval_s})


@dataclasses.dataclass(frozen=True, slots=True)
class StreamHeader:
    gpumon_version: str
    schema: str
    interval_s: float | None


def _load(line: bytes | str) -> Any:
    try:
        return json.loads(line, parse_constant=_no_constant)
    except (ValueError, RecursionError, UnicodeDecodeError) as exc:
        raise StreamError(tr("a line is not JSON ({error})", error=str(exc)[:100])) from None


def load_line(line: bytes | str) -> Any:
    """One line's JSON (no NaN, no infinity); StreamError with a sentence when it is not."""
    return _load(line)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def decode_header(line: bytes | str) -> StreamHeader:
    """The header line; StreamError when it is not a gpumon stream, or of another schema."""
    doc = _load(line)
    if not isinstance(doc, dict) or doc.get("stream") != STREAM:
        raise StreamError(tr("the first line is not a gpumon stream's header"))
    version = _text(doc.get("gpumon"), "gpumon", MAX_NAME)
    schema = _text(doc.get("schema"), "schema", MAX_NAME)
    if schema != SCHEMA:
        raise StreamError(tr("it sends snapshots of schema {theirs} (gpumon {version}); this "
                             "gpumon reads {ours}: install the same gpumon on both sides",
                             theirs=schema, version=version, ours=SCHEMA))
    interval = doc.get("interval_s")
    return StreamHeader(version, schema, _number(interval, "interval_s")
                        if interval is not None else None)


# -- values ------------------------------------------------------------------------------------
def _bad(key: str) -> StreamError:
    return StreamError(tr("the value of {key} is not valid", key=key[:60]))


def _number(value: Any, key: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _bad(key)
    number = float(value)
    if not math.isfinite(number):
        raise _bad(key)
    return number


def _integer(value: Any, key: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or abs(value) > 1 << 63:
        raise _bad(key)
    return value


def _flag(value: Any, key: str) -> bool:
    if not isinstance(value, bool):
        raise _bad(key)
    return value


def _text(value: Any, key: str, cap: int = MAX_NAME) -> str:
    if not isinstance(value, str):
        raise _bad(key)
    return value[:cap]


def _opt(check: Callable[[Any, str], _T], value: Any, key: str) -> _T | None:
    return None if value is None else check(value, key)


def _list(value: Any, key: str, cap: int) -> list[Any]:
    if not isinstance(value, list):
        raise _bad(key)
    if len(value) > cap:
        raise StreamError(tr("{key} has {n} entries, more than {most}", key=key, n=len(value),
                             most=cap))
    return value


def _object(value: Any, key: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _bad(key)
    return value


def _checker(annotation: str) -> Callable[[Any, str], Any]:
    kind = annotation.split("|")[0].strip()
    checks: dict[str, Callable[[Any, str], Any]] = {
        "int": _integer, "float": _number, "bool": _flag, "str": _text}
    return checks[kind]


# Each GpuSample field the document carries, with its check (from the field's own type).
_SAMPLE_CHECKS = {f.name: _checker(str(f.type)) for f in dataclasses.fields(GpuSample)
                  if f.name in SAMPLE_KEYS}
_PCT_LIKE = {k for k in SAMPLE_KEYS if k.endswith("_pct")}


def _sample_value(key: str, value: Any) -> Any:
    if value is None:
        return None
    got = _SAMPLE_CHECKS[key](value, key)
    if key in _PCT_LIKE and not 0.0 <= got <= 100.0 + 1e-6 and key != "fan_pct":
        raise _bad(key)
    if key.endswith("_bytes") and got < 0:
        raise _bad(key)
    return got


def _activity(value: Any, key: str) -> ActivityState | None:
    if value is None:
        return None
    try:
        return ActivityState(value)
    except ValueError:
        raise _bad(key) from None


# -- parts ---------------------------------------------------------------------------------
def _gpu(doc: dict[str, Any], sim: bool) -> tuple[GpuInfo, GpuSample, list[MigSample]]:
    index = _integer(doc.get("index"), "index")
    if not 0 <= index < 4096:
        raise _bad("index")
    lost = _flag(doc.get("lost", False), "lost")
    values = {k: _sample_value(k, doc.get(k)) for k in SAMPLE_KEYS}
    if values["energy_mj"] is not None:
        values["energy_mj"] = float(values["energy_mj"])
    links = tuple(LinkRate(_integer(_object(r, "nvlink_links").get("link"), "link"),
                           _opt(_number, r.get("rx_bytes_per_s"), "rx_bytes_per_s"),
                           _opt(_number, r.get("tx_bytes_per_s"), "tx_bytes_per_s"))
                  for r in _list(doc.get("nvlink_links", []), "nvlink_links", MAX_LIST))
    supported = doc.get("processes_supported")
    sample = GpuSample(
        index=index,
        timestamp_s=_number(doc.get("timestamp_epoch_s"), "timestamp_epoch_s"),
        lost=lost, message=_opt(_text, doc.get("lost_message"), "lost_message") or "",
        processes_supported=True if supported is None else _flag(supported,
                                                                 "processes_supported"),
        activity_state=_activity(doc.get("activity_state"), "activity_state"),
        nvlink_links=links, **values)
    info = GpuInfo(index=index, name=_opt(_text, doc.get("name"), "name") or "",
                   uuid=_opt(_text, doc.get("uuid"), "uuid") or "",
                   pci_bus_id=_opt(_text, doc.get("pci_bus_id"), "pci_bus_id") or "",
                   mem_total_bytes=values["mem_total_bytes"],
                   simulated=sim or _flag(doc.get("simulated", False), "simulated"))
    migs = [_mig(index, _object(m, "mig_devices"))
            for m in _list(doc.get("mig_devices", []), "mig_devices", MAX_LIST)]
    return info, sample, migs


def _mig(gpu_index: int, doc: dict[str, Any]) -> MigSample:
    pct = {k: _opt(_number, doc.get(k), k) for k in ACTIVITY_PCT_KEYS}
    return MigSample(
        gpu_index=gpu_index,
        gpu_instance_id=_opt(_integer, doc.get("gpu_instance_id"), "gpu_instance_id"),
        compute_instance_id=_opt(_integer, doc.get("compute_instance_id"),
                                 "compute_instance_id"),
        uuid=_text(doc.get("uuid"), "uuid"), name=_text(doc.get("name"), "name"),
        mem_total_bytes=_opt(_integer, doc.get("mem_total_bytes"), "mem_total_bytes"),
        mem_used_bytes=_opt(_integer, doc.get("mem_used_bytes"), "mem_used_bytes"),
        activity_state=_activity(doc.get("activity_state"), "activity_state"), **pct)


def _process(doc: dict[str, Any]) -> GpuProcess:
    try:
        kind = ProcessType(doc.get("type"))
    except ValueError:
        raise _bad("type") from None
    pid = _integer(doc.get("pid"), "pid")
    if pid < 0:
        raise _bad("pid")
    return GpuProcess(
        gpu_index=_integer(doc.get("gpu_index"), "gpu_index"), pid=pid, type=kind,
        gpu_mem_bytes=_opt(_integer, doc.get("gpu_mem_bytes"), "gpu_mem_bytes"),
        name=_opt(_text, doc.get("name"), "name"), user=_opt(_text, doc.get("user"), "user"),
        command=(None if doc.get("command") is None
                 else _text(doc.get("command"), "command", MAX_TEXT)),
        is_self=False,  # the remote gpumon's own process is not this one
        container=_opt(_text, doc.get("container"), "container"),
        sm_util_pct=_opt(_number, doc.get("sm_util_pct"), "sm_util_pct"),
        mem_bw_util_pct=_opt(_number, doc.get("mem_bw_util_pct"), "mem_bw_util_pct"),
        enc_util_pct=_opt(_number, doc.get("enc_util_pct"), "enc_util_pct"),
        dec_util_pct=_opt(_number, doc.get("dec_util_pct"), "dec_util_pct"),
        cpu_pct=_opt(_number, doc.get("cpu_pct"), "cpu_pct"),
        host_rss_bytes=_opt(_integer, doc.get("host_rss_bytes"), "host_rss_bytes"),
        started_s=_opt(_number, doc.get("started_epoch_s"), "started_epoch_s"))


def _codes(rows: Any, key: str, n: int) -> tuple[tuple[str, ...], ...]:
    out = []
    for row in _list(rows, key, MAX_LIST):
        cells = _list(row, key, MAX_LIST)
        out.append(tuple(UNKNOWN if c is None else _text(c, key, 8) for c in cells))
    if len(out) != n or any(len(r) != n for r in out):
        raise _bad(key)
    return tuple(out)


def _topology(doc: Any) -> Topology | None:
    if doc is None:
        return None
    doc = _object(doc, "topology")
    places = []
    for p in _list(doc.get("gpus"), "topology", MAX_LIST):
        p = _object(p, "topology")
        links = tuple(NvLink(_integer(n.get("link"), "link"),
                             _text(n.get("remote_pci_bus_id"), "remote_pci_bus_id"),
                             _text(n.get("remote"), "remote", 16),
                             _opt(_integer, n.get("remote_gpu_index"), "remote_gpu_index"))
                      for n in map(lambda x: _object(x, "nvlinks"),
                                   _list(p.get("nvlinks", []), "nvlinks", MAX_LIST)))
        places.append(GpuPlace(
            index=_integer(p.get("index"), "index"), bus_id=_text(p.get("pci_bus_id"),
                                                                  "pci_bus_id"),
            nvlinks=links, links_total=_opt(_integer, p.get("nvlinks_total"), "nvlinks_total"),
            cpu_affinity=_opt(_text, p.get("cpu_affinity"), "cpu_affinity"),
            numa_affinity=_opt(_text, p.get("numa_affinity"), "numa_affinity"),
            numa_id=_opt(_integer, p.get("numa_id"), "numa_id")))
    n = len(places)
    return Topology(places=tuple(places), paths=_codes(doc.get("paths"), "paths", n),
                    p2p_read=_codes(doc.get("p2p_read"), "p2p_read", n),
                    read_at_s=_number(doc.get("read_epoch_s", 0.0), "read_epoch_s"))


def decode_snapshot(line: bytes | str) -> Snapshot:
    """One stream line as the Snapshot it describes; StreamError when it is not one."""
    doc = _load(line)
    if not isinstance(doc, dict):
        raise StreamError(tr("a line is not a snapshot"))
    if doc.get("schema") != SCHEMA:
        raise StreamError(tr("a line is not a snapshot of schema {schema}", schema=SCHEMA))
    status = _object(doc.get("status"), "status")
    try:
        state = SourceState(status.get("state"))
    except ValueError:
        raise _bad("status") from None
    m = _object(doc.get("machine"), "machine")
    simulated = _flag(doc.get("simulated"), "simulated")
    machine = MachineInfo(
        host_name=_text(m.get("host_name"), "host_name"),
        source_name=_text(m.get("source"), "source", 32),
        driver_version=_opt(_text, m.get("driver_version"), "driver_version"),
        cuda_driver_version=_opt(_text, m.get("cuda_driver_version"), "cuda_driver_version"),
        nvml_version=_opt(_text, m.get("nvml_version"), "nvml_version"), simulated=simulated)
    parts = [_gpu(_object(g, "gpus"), simulated)
             for g in _list(doc.get("gpus"), "gpus", MAX_GPUS)]
    if len({info.index for info, _, _ in parts}) != len(parts):
        raise StreamError(tr("two GPUs of a snapshot have the same index"))
    duration = _number(doc.get("read_duration_s", 0.0), "read_duration_s")
    return Snapshot(
        timestamp_s=_number(doc.get("timestamp_epoch_s"), "timestamp_epoch_s"),
        machine=machine,
        status=SourceStatus(state, _text(status.get("message"), "message", MAX_TEXT),
                            _text(status.get("hint", ""), "hint", MAX_TEXT)),
        gpus=tuple(info for info, _, _ in parts),
        samples=tuple(sample for _, sample, _ in parts),
        migs=tuple(m for _, _, migs in parts for m in migs),
        processes=tuple(_process(_object(p, "processes"))
                        for p in _list(doc.get("processes", []), "processes", MAX_PROCESSES)),
        read_duration_s=max(0.0, duration), simulated=simulated,
        topology=_topology(doc.get("topology")))
