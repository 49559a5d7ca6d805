"""Shared test setup. No Qt here: telemetry and playground tests run without it.

Every test fails if gpumon's own code failed while it ran: each InternalError (an Outcome's,
a card's, or the kernel's answer to a request) is logged on ``gpumon.internal``
(gpumon/playground/data/errors.py), and :func:`_no_internal_error` listens there. A test that
provokes one on purpose says so with ``@pytest.mark.internal_error``.
"""

from __future__ import annotations

import getpass
import logging
import os
import re
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# The suite measures the window in pixels with known fonts at scale 1, whatever the desktop
# that runs it (desktop_env.py): a KDE session's QT_SCREEN_SCALE_FACTORS, a 150 % scale, Noto
# fonts installed. A pass at another scale or with Noto asks for it (.ci/run's second pass).
# (By its path: this module is also loaded as a plugin, -p tests.conftest, from elsewhere.)
if str(Path(__file__).parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).parent))
from desktop_env import pin_fonts_and_scale

pin_fonts_and_scale(os.environ)
# Every process the tests start, this one included, runs the lesson's timing step on a short
# budget (quick_benchmark/sitecustomize.py); xdist's workers are started after these lines.
# Each change of the environment would cost the kernels a fork server (one per environment:
# playground/client/forkserver.py), so these lines leave it as they find it when they run again
# (a test imports this module as tests.conftest).
_QUICK = str(Path(__file__).resolve().parent / "quick_benchmark")
if _QUICK not in os.environ.get("PYTHONPATH", "").split(os.pathsep):
    os.environ["PYTHONPATH"] = os.pathsep.join(
        p for p in (_QUICK, os.environ.get("PYTHONPATH")) if p)
# torch sets this when it first imports torch._dynamo (a lesson step on a meta tensor, run in
# this process): set beforehand to the folder torch would choose, it never changes.
try:
    _USER = getpass.getuser()
except (KeyError, OSError):  # no name for this uid (a container without it in /etc/passwd)
    _USER = f"uid_{os.getuid()}"
os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", os.path.join(
    tempfile.gettempdir(), "torchinductor_" + re.sub(r'[\\/:*?"<>|]', "_", _USER)))
sys.path.insert(0, _QUICK)
import sitecustomize  # noqa: E402, F401 - a worker has it already; this process then too

sys.path.remove(_QUICK)

from xdist_groups import pytest_collection_modifyitems  # noqa: E402, F401

from gpumon import i18n  # noqa: E402


@pytest.fixture(autouse=True)
def _english_unless_a_test_says_otherwise() -> Iterator[None]:
    """Every test starts in English, whatever the machine's locale, and a test that switches
    to another language (``main(["--lang", "zh_CN", ...])``) does not leak it to the next."""
    i18n.set_language(i18n.ENGLISH)
    yield
    i18n.set_language(i18n.ENGLISH)


@pytest.fixture
def chinese() -> None:
    """The test runs in Simplified Chinese (English again afterwards, as for every test)."""
    i18n.set_language(i18n.CHINESE)


def _start_fork_server() -> Any:
    """This process's kernels' fork server (started now if it is not running), or None."""
    from gpumon.playground.client import forkserver
    from gpumon.playground.client.kernel_client import kernel_env

    return forkserver.start_server(sys.executable, kernel_env()) if forkserver.enabled() else None


def pytest_sessionstart(session: pytest.Session) -> None:
    """A pytest-xdist worker runs a share of the whole suite, kernels included: it starts its
    fork server at once, so that the server's ``import torch`` runs while the worker collects
    the tests instead of while its first kernel test waits."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        _start_fork_server()


@pytest.fixture(scope="session")
def kernel_fork_server() -> None:
    """The kernels of this test process are forked from one server (Linux), started at first
    use (in a pytest-xdist worker, at its start): each test's kernel is then a fork, not an
    ``import torch``. Waiting for it once costs what one kernel of its own would; the kernels
    that would start the ordinary way while it imports would each cost as much."""
    server = _start_fork_server()
    if server is not None:
        server.wait_ready(60)


@pytest.fixture
def kernels_import_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every kernel of the test starts the ordinary way and imports torch itself, for the
    tests of what happens while it does: none is forked from a server that imported it
    already (playground/client/forkserver.py)."""
    monkeypatch.setenv("GPUMON_KERNEL_FORKSERVER", "0")


@pytest.fixture
def no_nvml_library(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """pynvml cannot load libnvidia-ml.so.1, as on a machine without the driver."""
    import ctypes

    import pynvml

    def missing(*args: object, **kwargs: object) -> ctypes.CDLL:
        raise OSError("libnvidia-ml.so.1: cannot open shared object file")

    with pynvml.libLoadLock:
        saved = (pynvml.nvmlLib, pynvml._nvmlLib_refcount)
        pynvml.nvmlLib = None
    monkeypatch.setattr(pynvml, "CDLL", missing)
    yield
    with pynvml.libLoadLock:
        pynvml.nvmlLib, pynvml._nvmlLib_refcount = saved


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@pytest.fixture(autouse=True)
def _no_internal_error(request: pytest.FixtureRequest) -> Iterator[list[str]]:
    """Fail the test if an InternalError was produced, unless it is marked internal_error."""
    logger = logging.getLogger("gpumon.internal")
    handler = _Collect()
    logger.addHandler(handler)
    try:
        yield handler.messages
    finally:
        logger.removeHandler(handler)
    if handler.messages and request.node.get_closest_marker("internal_error") is None:
        first = handler.messages[0]
        pytest.fail(f"gpumon's own code failed during this test ({len(handler.messages)} "
                    f"internal error(s)); the first:\n{first}", pytrace=False)


#: ini keys in pyproject.toml that belong to plugins a machine may lack (a GPU machine with
#: torch and NVML but no Qt has neither pytest-qt nor pytest-timeout), by plugin name.
_PLUGIN_INI_KEYS = {"pytest-qt": ("qt_api",), "timeout": ("timeout", "timeout_method")}


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    """Declare a missing plugin's ini keys, so they are ignored instead of stopping pytest
    ("Unknown config option", an error under filterwarnings=error) before any test runs."""
    for plugin, keys in _PLUGIN_INI_KEYS.items():
        if not pluginmanager.has_plugin(plugin):
            for key in keys:
                parser.addini(key, f"used by {plugin}, which is not installed here")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: two workers for each CPU this process may use. Many tests wait on a
    child (a kernel importing torch, sshd and a remote kernel, an exporter, a Prometheus
    server), so more workers than CPUs fill those waits. On 2 cores, the whole suite (2,464
    tests) took 430 s with 3 workers and 351 s with 4, one after the other on a quiet machine;
    an earlier, smaller suite 202 s with 3, 251 s with 2 and 211 s with 4. At most 16: each
    worker holds torch and Qt (~0.4 GB). ``PYTEST_XDIST_AUTO_NUM_WORKERS``, which xdist's own
    answer reads, still decides where it is set."""
    asked = os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS", "")
    if asked.strip().isdigit():  # (xdist ignores one that is not a number, with a warning)
        return int(asked)
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return min(16, 2 * cores)
