"""Shared test setup. No Qt here: telemetry and playground tests run without it.

Every test fails if gpumon's own code failed while it ran: each InternalError (an Outcome's,
a card's, or the kernel's answer to a request) is logged on ``gpumon.internal``
(gpumon/playground/data/errors.py), and :func:`_no_internal_error` listens there. A test that
provokes one on purpose says so with ``@pytest.mark.internal_error``.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Iterator

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

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


@pytest.fixture(scope="session")
def kernel_fork_server() -> None:
    """The kernels of this test process are forked from one server (Linux), started in the
    background at first use: each test's kernel is then a fork, not an ``import torch``. A
    kernel that comes before the server is ready starts the ordinary way."""
    from gpumon.playground.client import forkserver
    from gpumon.playground.client.kernel_client import kernel_env

    if forkserver.enabled():
        forkserver.start_server(sys.executable, kernel_env())


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
    """``-n auto``: one worker more than this process may use CPUs. Many tests wait on a
    child (a kernel importing torch, an exporter, a Prometheus server), so an extra worker
    fills those waits: on 2 cores the whole suite took 202 s with 3 workers, 251 s with 2 and
    211 s with 4 (measured in one sitting)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return cores + 1
