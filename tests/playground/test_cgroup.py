"""The cgroup memory limit the size guard honours (v2, v1, none), from fake files."""

from __future__ import annotations

import pytest

from gpumon.playground.kernel import memory
from gpumon.playground.kernel.cgroup import cgroup_headroom


def _reader(files: dict[str, str]):
    return lambda path: files.get(path)


def test_v2_limit_minus_current_usage() -> None:
    files = {"/proc/self/cgroup": "0::/user.slice/app.scope\n",
             "/sys/fs/cgroup/user.slice/app.scope/memory.max": "2147483648",
             "/sys/fs/cgroup/user.slice/app.scope/memory.current": "1073741824"}
    assert cgroup_headroom(_reader(files)) == 1 << 30


def test_v2_max_or_missing_is_no_limit() -> None:
    files = {"/proc/self/cgroup": "0::/\n", "/sys/fs/cgroup/memory.max": "max"}
    assert cgroup_headroom(_reader(files)) is None
    assert cgroup_headroom(_reader({"/proc/self/cgroup": "0::/\n"})) is None


def test_v1_limit_and_its_huge_no_limit_value() -> None:
    own = "12:memory:/\n1:name=systemd:/docker/abc\n"
    files = {"/proc/self/cgroup": own,
             "/sys/fs/cgroup/memory/memory.limit_in_bytes": "536870912",
             "/sys/fs/cgroup/memory/memory.usage_in_bytes": "600000000"}
    assert cgroup_headroom(_reader(files)) == 0  # already over: nothing more fits
    files["/sys/fs/cgroup/memory/memory.limit_in_bytes"] = "9223372036854771712"
    assert cgroup_headroom(_reader(files)) is None


def test_the_guard_uses_the_smaller_of_machine_and_cgroup(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory, "cgroup_headroom", lambda: 1000)
    assert memory.host_available_bytes() == 1000
    with pytest.raises(memory.Refusal, match="would not fit"):
        memory.check_fits(900, "cpu", None)
    monkeypatch.setattr(memory, "cgroup_headroom", lambda: None)
    assert memory.host_available_bytes() > 1000


def test_hybrid_host_uses_the_v1_memory_controller_of_its_own_group() -> None:
    own = "4:memory:/jobs/42\n1:cpu:/\n0::/\n"
    files = {"/proc/self/cgroup": own,
             "/sys/fs/cgroup/memory/jobs/42/memory.limit_in_bytes": "4096",
             "/sys/fs/cgroup/memory/jobs/42/memory.usage_in_bytes": "1024"}
    assert cgroup_headroom(_reader(files)) == 3072
