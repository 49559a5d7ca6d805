"""Which container, batch job or systemd unit a process runs in, from its ``/proc/PID/cgroup``.

A pure parser (no file access): :func:`owner_of` takes the file's text and returns an
:class:`Owner` or ``None`` (the root group, or nothing recognised). The file has one line per
hierarchy, ``ID:CONTROLLERS:PATH``; cgroup v2 has the single line ``0::PATH``, v1 one line per
controller, and hybrid hosts both. Every path is read and the most specific owner wins: a
Slurm job or a container over the systemd unit that holds it (on a hybrid host Docker's v1
lines name the container while the v2 line names ``containerd.service``).

Recognised, by the names the runtimes give their groups:

- Kubernetes (``kubepods``), either cgroup driver: cgroupfs
  ``/kubepods/besteffort/pod<uid>/<id>``, systemd
  ``.../kubepods-...slice/cri-containerd-<id>.scope`` or ``crio-<id>.scope``,
  and containerd's ``kubepods-...slice:cri-containerd:<id>`` form;
- Docker: ``/docker/<id>`` (cgroupfs) and ``docker-<id>.scope`` (systemd, also rootless);
- Podman: ``libpod-<id>.scope`` and ``/libpod_parent/libpod-<id>`` (its conmon is not the
  container: ``libpod-conmon-<id>.scope`` is left to the unit rule);
- Slurm: ``/slurm/uid_N/job_M/...`` (v1; ``/slurm_<node>/`` with several slurmd) and
  ``/system.slice/<node>_slurmstepd.scope/job_M/...`` (v2);
- systemd: the innermost ``.service`` or ``.scope`` unit, else a ``user-N.slice``.

This is not :mod:`gpumon.playground.kernel.cgroup`, which reads the kernel's own memory limit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_ID = r"([0-9a-f]{64})"
_CONTAINER = re.compile(rf"^(?:(docker|libpod|cri-containerd|crio|containerd)-)?{_ID}(?:\.scope)?$")
_COLON_FORM = re.compile(rf":(cri-containerd|crio|docker):{_ID}$")  # containerd's systemd form
_JOB = re.compile(r"^job_(\d+)$")
_SHORT = 12  # characters of a container id shown, as `docker ps` shows them

# Ranks: a higher one wins when the lines of one file disagree.
_RANK = {"slurm": 5, "k8s": 4, "docker": 3, "podman": 3, "containerd": 3, "unit": 2, "user": 1}


@dataclass(frozen=True, slots=True)
class Owner:
    """``kind`` (slurm, k8s, docker, podman, containerd, unit, user) and an id or name."""

    kind: str
    ident: str

    @property
    def label(self) -> str:
        """One short name for a table cell: ``docker:2403ccfe427f``, ``slurm:1870``,
        ``nginx.service``; the same words in every language (they are identifiers)."""
        return self.ident if self.kind in ("unit", "user") else f"{self.kind}:{self.ident}"


def owner_of(text: str) -> Owner | None:
    """The most specific owner any line of a ``/proc/PID/cgroup`` text names, or None."""
    best: Owner | None = None
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        found = owner_of_path(parts[2].strip())
        if found is not None and (best is None or _RANK[found.kind] > _RANK[best.kind]):
            best = found
    return best


def owner_of_path(path: str) -> Owner | None:
    """The owner one cgroup path names (see the module's list), or None."""
    segments = [s for s in path.split("/") if s]
    if not segments:
        return None
    job = _slurm_job(segments)
    if job is not None:
        return Owner("slurm", job)
    container = _container(segments)
    if container is not None:
        runtime, ident = container
        if any(s.startswith("kubepods") for s in segments):
            return Owner("k8s", ident)
        if runtime in ("docker", "podman", "containerd"):
            return Owner(runtime, ident)
    for segment in reversed(segments):
        if segment.endswith((".service", ".scope")) and ":" not in segment:
            return Owner("unit", segment)
    for segment in reversed(segments):
        if re.fullmatch(r"user-\d+\.slice", segment):
            return Owner("user", segment)
    return None


def _slurm_job(segments: list[str]) -> str | None:
    """Slurm's job id: a ``job_M`` segment below ``slurm``/``slurm_<node>`` (v1) or below
    ``<node>_slurmstepd.scope`` (v2)."""
    under_slurm = False
    for segment in segments:
        if segment == "slurm" or segment.startswith("slurm_") or segment.endswith(
                "slurmstepd.scope"):
            under_slurm = True
            continue
        match = _JOB.match(segment)
        if under_slurm and match:
            return match.group(1)
    return None


def _container(segments: list[str]) -> tuple[str, str] | None:
    """(runtime, short id) of the innermost segment that is a container's group."""
    for segment in reversed(segments):
        colon = _COLON_FORM.search(segment)
        if colon:
            return _runtime(colon.group(1)), colon.group(2)[:_SHORT]
        match = _CONTAINER.match(segment)
        if match:
            prefix = match.group(1)
            if prefix is None:  # a bare id: its parent says whose it is
                parent = segments[segments.index(segment) - 1] if segments.index(segment) else ""
                prefix = {"docker": "docker", "libpod_parent": "libpod"}.get(parent, "")
                if not prefix and not parent.startswith(("pod", "kubepods")):
                    prefix = "containerd"  # nerdctl and ctr: /<namespace>/<id>
            return _runtime(prefix), match.group(2)[:_SHORT]
    return None


def _runtime(prefix: str) -> str:
    return {"libpod": "podman", "cri-containerd": "containerd", "crio": "cri-o",
            "": "containerd"}.get(prefix, prefix)
