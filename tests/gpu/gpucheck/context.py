"""What every check needs: the results folder, the time left, the environment of the child
processes (gpumon, the kernel, pytest), how to run nvidia-smi, and NVML in this process.

In a dry run the children load the fake NVML library as libnvidia-ml.so.1 and cannot import
Qt (tests/gpu/noqt), nvidia-smi is the stand-in tests/gpu/dryrun/fake_smi.py, and this
process's pynvml is pointed at the same fake library.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[3]
NOQT = REPO / "tests" / "gpu" / "noqt"
FAKE_SMI = REPO / "tests" / "gpu" / "dryrun" / "fake_smi.py"
DRY_RUN_GPUS = 2

TORCH_FACTS = """
import json, torch
ok = torch.cuda.is_available()
n = torch.cuda.device_count() if ok else 0
def has(name):
    try:
        __import__(name)
    except ImportError:
        return False
    return True
present = [m for m in ("PySide6", "pyqtgraph", "pytestqt", "pytest_timeout", "numpy",
                       "hypothesis", "prometheus_client", "psutil", "pynvml") if has(m)]
print(json.dumps({"torch": str(torch.__version__), "cuda": torch.version.cuda,
                  "packages": present,
                  "available": ok, "count": n,
                  "names": [torch.cuda.get_device_name(i) for i in range(n)],
                  "uuids": [str(torch.cuda.get_device_properties(i).uuid) for i in range(n)]}))
"""


@dataclass
class Context:
    out: Path
    dry_run: bool
    deadline: float
    child_env: dict[str, str]
    smi: list[str]
    open_nvml: Callable[[], AbstractContextManager[Any]] = nullcontext
    facts: dict[str, str] = field(default_factory=dict)
    torch: dict[str, Any] = field(default_factory=dict)

    def left(self) -> float:
        """Seconds left before the check must end."""
        return self.deadline - time.monotonic()

    def run(self, args: list[str], timeout: float,
            env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        """Run a child to its end (raises subprocess.TimeoutExpired); its text output."""
        return subprocess.run(args, capture_output=True, text=True, cwd=REPO,
                              timeout=max(1.0, min(timeout, self.left())),
                              env={**self.child_env, **(env or {})}, check=False)

    def gpumon(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "gpumon", *args]

    def save(self, name: str, text: str) -> str:
        (self.out / name).write_text(text, encoding="utf-8")
        return name


def child_env(dry_run: bool, fake_lib: Path | None) -> dict[str, str]:
    """The environment of every child: this repository first on PYTHONPATH; in a dry run also
    the Qt blocker and the fake NVML library."""
    # A child is never an xdist worker, whoever started the check (pytest-benchmark up to 5.2
    # takes PYTEST_XDIST_WORKER for xdist, and warns at configure).
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}
    paths = [str(REPO)]
    if dry_run:
        paths.insert(0, str(NOQT))
    env["PYTHONPATH"] = os.pathsep.join([*paths, *filter(None, [env.get("PYTHONPATH")])])
    if fake_lib is not None:
        sys.path.insert(0, str(REPO / "tests" / "telemetry"))
        from fakenvml import fake_driver_env

        # One compute process, this one, holding 300 MiB on GPU 0 (for the process lists).
        procs = f"0:{os.getpid()}:{300 * 2**20}"
        env = fake_driver_env(fake_lib, fake_lib.parent, gpus=str(DRY_RUN_GPUS),
                              procs=procs) | {"PYTHONPATH": env["PYTHONPATH"]}
    return env


def fake_nvml_opener(fake_lib: Path) -> Callable[[], AbstractContextManager[Any]]:
    """In-process NVML on the fake library, with as many GPUs as the children see."""
    from fakenvml import use_fake_nvml

    @contextmanager
    def opened() -> Iterator[None]:
        with use_fake_nvml(fake_lib) as fake:
            fake.set_gpu_count(DRY_RUN_GPUS)
            yield

    return opened


@contextmanager
def environ(env: Mapping[str, str]) -> Iterator[None]:
    """os.environ replaced by ``env`` for the block (a KernelClient copies os.environ)."""
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def free_port() -> int:
    """A loopback port nobody listens on now (the exporter takes it a moment later)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def torch_facts(ctx: Context) -> dict[str, Any]:
    """torch's version and the CUDA devices it sees, asked in a child (this process stays
    without torch and without a CUDA context)."""
    try:  # before the checks, outside their budget
        proc = subprocess.run([sys.executable, "-c", TORCH_FACTS], capture_output=True,
                              text=True, cwd=REPO, timeout=120, env=ctx.child_env, check=False)
    except subprocess.TimeoutExpired:
        return {"error": "asking torch for its CUDA devices took over 120 s"}
    if proc.returncode != 0:
        return {"error": (proc.stderr.strip().splitlines() or ["no output"])[-1]}
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))
