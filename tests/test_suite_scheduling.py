"""The suite's own scheduling under ``-n`` (tests/xdist_groups.py): xdist's ``loadgroup`` keeps
the tests of a module marked ``xdist_group`` in one worker, and every module whose tests share
a module-scoped fixture carries the mark."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def modules_sharing_a_fixture(root: Path = TESTS) -> set[str]:
    """Test files (relative to the repository) whose tests share a module-scoped fixture:
    one they define, or one of a conftest.py that they ask for by name."""
    defined: dict[Path, set[str]] = {}
    params: dict[Path, set[str]] = {}
    for path in root.rglob("*.py"):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError):
            continue
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef):
                continue
            if node.name.startswith("test_") or node.decorator_list:  # tests and fixtures
                params.setdefault(path, set()).update(a.arg for a in node.args.args)
            for deco in node.decorator_list:
                if (isinstance(deco, ast.Call) and any(
                        k.arg == "scope" and isinstance(k.value, ast.Constant)
                        and k.value.value in ("module", "class") for k in deco.keywords)):
                    defined.setdefault(path, set()).add(node.name)
    shared = {name for path, names in defined.items() if path.name == "conftest.py"
              for name in names}
    grouped = set()
    for path in params:
        if not path.name.startswith("test_"):
            continue
        if defined.get(path) or params[path] & shared:
            grouped.add(path.relative_to(root.parent).as_posix())
    return grouped


def xdist_groups(root: Path = TESTS) -> dict[str, str]:
    """The group that each test file's ``pytestmark`` names, by file."""
    groups = {}
    for path in root.rglob("test_*.py"):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if (isinstance(node, ast.Assign)
                    and any(getattr(t, "id", None) == "pytestmark" for t in node.targets)):
                for call in ast.walk(node.value):
                    if (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                            and call.func.attr == "xdist_group"):
                        arg = call.args[0]
                        assert isinstance(arg, ast.Constant), path
                        groups[path.relative_to(root.parent).as_posix()] = arg.value
    return groups


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


def test_each_module_sharing_a_module_fixture_is_a_group_of_its_own() -> None:
    """Only those: any other test is a unit of work of its own, which shares out best."""
    groups = xdist_groups()
    assert set(groups) == modules_sharing_a_fixture()
    assert len(set(groups.values())) == len(groups)


def test_a_group_runs_in_one_worker(tmp_path: Path) -> None:
    """With the installed pytest and xdist, as README's command runs them: the marked module's
    tests all run in one worker."""
    (tmp_path / "test_grouped.py").write_text(textwrap.dedent("""
        import pytest
        pytestmark = pytest.mark.xdist_group("grouped")
        @pytest.mark.parametrize("i", range(6))
        def test_g(i): ...
    """))
    (tmp_path / "conftest.py").write_text(  # as tests/conftest.py has them
        "from xdist_groups import pytest_collection_modifyitems\n")
    (tmp_path / "test_free.py").write_text(textwrap.dedent("""
        import pytest
        @pytest.mark.parametrize("i", range(6))
        def test_f(i): ...
    """))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (str(TESTS), os.environ.get("PYTHONPATH")) if p)}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider",
         "-n", "2", "--dist", "loadgroup", "-v", str(tmp_path)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    ran = re.findall(r"\[(gw\d)\].*PASSED (\S+)", run.stdout)
    assert len(ran) == 12, run.stdout
    assert len({worker for worker, test in ran if "test_g[" in test}) == 1, run.stdout


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
