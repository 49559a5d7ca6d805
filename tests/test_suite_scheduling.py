"""The suite's own scheduling under ``-n`` (tests/conftest.py): the modules whose tests share
a module-scoped fixture are found, so xdist keeps each of them in one worker."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tests.conftest import modules_sharing_a_fixture


def test_modules_defining_or_asking_for_a_module_fixture_are_grouped(tmp_path: Path) -> None:
    root = tmp_path / "tests"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "conftest.py").write_text(textwrap.dedent("""
        import pytest
        @pytest.fixture(scope="module")
        def server(): ...
        @pytest.fixture
        def cheap(): ...
    """))
    (root / "sub" / "test_uses.py").write_text("def test_a(server): ...\n")
    (root / "sub" / "test_cheap.py").write_text("def test_b(cheap): ...\n")
    (root / "test_own.py").write_text(textwrap.dedent("""
        import pytest
        @pytest.fixture(scope="module")
        def run_once(): ...
        def test_c(run_once): ...
    """))
    (root / "test_helper_named_server.py").write_text("def helper(server): ...\n"
                                                         "def test_d(): ...\n")
    assert modules_sharing_a_fixture(root) == {"tests/sub/test_uses.py", "tests/test_own.py"}


def test_this_suite_s_costly_module_fixtures_are_found() -> None:
    grouped = modules_sharing_a_fixture()
    assert {"tests/test_cli_lesson.py",  # the whole lesson, run once as a program
            "tests/cluster/test_cluster_source.py",  # conftest's Prometheus and exporters
            "tests/playground/test_lesson.py"} <= grouped
    assert "tests/test_untrusted.py" not in grouped


def test_the_kernels_environment_stays_the_same_all_session() -> None:
    """One fork server serves a worker's kernels only while their environment is the one it
    was started for: running the conftest again (a module imports it as tests.conftest) and
    torch's first import of torch._dynamo (it records its compiler's cache folder in
    os.environ) must not change it, or the next kernels import torch again and a new server
    is started."""
    import runpy
    import sys

    import torch._inductor.runtime.cache_dir_utils as inductor_cache

    from gpumon.playground.client import forkserver
    from gpumon.playground.client.kernel_client import kernel_env

    before = forkserver._key(sys.executable, kernel_env())
    runpy.run_path(str(Path(__file__).with_name("conftest.py")))
    inductor_cache.cache_dir()
    assert forkserver._key(sys.executable, kernel_env()) == before
