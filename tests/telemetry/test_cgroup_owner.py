"""A process's container or job from real ``/proc/PID/cgroup`` texts.

Each text was printed on a real machine and published where it says; they are kept as
printed (long lists of identical v1 lines shortened to a few).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from gpumon.telemetry.procs.cgroup_owner import Owner, owner_of, owner_of_path

# Docker, cgroup v1 controllers and the v2 line on a hybrid host (ctrsploit/ctrsploit issue
# 280, "parse container-id from /proc/1/cgroup").
DOCKER_HYBRID = """\
12:net_cls,net_prio:/docker/2403ccfe427f1dc7b6120dccb9ac58c2f8456950380d587a9f33ea7f00dd303d
11:freezer:/docker/2403ccfe427f1dc7b6120dccb9ac58c2f8456950380d587a9f33ea7f00dd303d
10:rdma:/
8:memory:/docker/2403ccfe427f1dc7b6120dccb9ac58c2f8456950380d587a9f33ea7f00dd303d
1:name=systemd:/docker/2403ccfe427f1dc7b6120dccb9ac58c2f8456950380d587a9f33ea7f00dd303d
0::/system.slice/containerd.service
"""

# Docker, cgroup v1, where name=systemd did not follow (moby/moby issue 33352).
DOCKER_V1 = """\
13:pids:/
10:perf_event:/docker/5dace3de0735f73d2b5048f12d41a71741a02e49668de921fdae62f7e65dc498
6:memory:/docker/5dace3de0735f73d2b5048f12d41a71741a02e49668de921fdae62f7e65dc498
1:name=systemd:/
"""

# Docker with the systemd driver on cgroup v2: the group Docker's runtime-metrics page names
# (docs.docker.com "Find the cgroup for a given container"), and the rootless one that
# docker/docs issue 14545 reports, as the /proc line the host shows for the container.
DOCKER_V2_ID = "a2ffe0e97ac22657a2a023ad628e9df837c38a03b1ebc904d3f6d644eb1a1a81"
DOCKER_V2 = f"0::/system.slice/docker-{DOCKER_V2_ID}.scope\n"
DOCKER_ROOTLESS = f"0::/user.slice/user-1000.slice/user@1000.service/user.slice/docker-{DOCKER_V2_ID}.scope\n"  # noqa: E501

# Podman (root, cgroup v2), seen from the host (podman-container-tools/podman issue 20423).
PODMAN = ("0::/user.slice/user-0.slice/user@0.service/machine.slice/"
          "libpod-cf21d19260ace8544fe8b769fc2638bf2c0873dfbfff0b6253f0569b26a1d5eb.scope/"
          "container\n")

# `podman unshare` is not a container: a systemd scope (containers/crun issue 376).
PODMAN_UNSHARE = "0::/user.slice/user-1000.slice/user@1000.service/user.slice/podman-6696.scope\n"

# Kubernetes on containerd, systemd driver, cgroup v1: containerd's "slice:cri-containerd:id"
# form (open-telemetry/opentelemetry-java issue 4507).
K8S_CONTAINERD_SYSTEMD = """\
11:perf_event:/kubepods-besteffort-pod0125ec2f_b64a_4868_8f5b_94b56cbab864.slice:cri-containerd:ee4b20e90ac7f42a10bd004d05646b13d8ab5e2c5e7cbc01abf8006bac016459
10:blkio:/system.slice/containerd.service/kubepods-besteffort-pod0125ec2f_b64a_4868_8f5b_94b56cbab864.slice:cri-containerd:ee4b20e90ac7f42a10bd004d05646b13d8ab5e2c5e7cbc01abf8006bac016459
"""

# Kubernetes, cgroupfs driver, cgroup v2 (spiffe/spire issue 2578, Fedora 33).
K8S_CGROUPFS_V2 = ("0::/kubelet/kubepods/besteffort/poddfd874dc-ab52-4793-af47-d06b78b68337/"
                   "a3804295d867b752119eab99a9e6364fdf7fe6a4be5af0b11f9915fa7b64ff95\n")

# Kubernetes on CRI-O, systemd driver, cgroup v1 (opencontainers/runc issue 4620).
K8S_CRIO = """\
13:freezer:/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-poda5c1f8d5_1919_434d_add7_4afaafdaef89.slice/crio-5eed917563583925ffdbd40a64efb2aaffe58638e57add8becaf460fe74f5b1c.scope
11:files:/
"""

# Slurm: cgroup v1 (NordicHPC/sonar's job-id test, "older data") and v2 (the same test,
# "from a Fox compute node on 2025-03-13").
SLURM_V1 = "10:devices:/slurm/uid_2101171/job_280678/step_interactive/task_0\n"
SLURM_V2 = "0::/system.slice/slurmstepd.scope/job_1392969/step_0/user/task_0\n"

# systemd: an ssh login and a desktop app (gsauthof/cgmemtime issue 5, Ubuntu 22.04 and
# Fedora 36); a v1 host's session (opencontainers/runc issue 1189); a service (the v2 line of
# docker/for-linux issue 1293); the user's slice alone (NordicHPC/sonar's test).
SSH_SESSION = "0::/user.slice/user-1000.slice/session-3.scope\n"
DESKTOP_APP = "0::/user.slice/user-1000.slice/user@1000.service/app.slice/app-gnome-kitty-3842.scope\n"  # noqa: E501
V1_SESSION = """\
10:pids:/test
9:memory:/user.slice/user-1000.slice/session-67.scope/test
1:name=systemd:/user.slice/user-1000.slice/session-67.scope/test
"""
SERVICE = "0::/system.slice/containerd.service\n"
USER_SLICE = "0::/user.slice/user-1000.slice\n"


@pytest.mark.parametrize(("text", "owner"), [
    (DOCKER_HYBRID, Owner("docker", "2403ccfe427f")),
    (DOCKER_V1, Owner("docker", "5dace3de0735")),
    (DOCKER_V2, Owner("docker", "a2ffe0e97ac2")),
    (DOCKER_ROOTLESS, Owner("docker", "a2ffe0e97ac2")),
    (PODMAN, Owner("podman", "cf21d19260ac")),
    (PODMAN_UNSHARE, Owner("unit", "podman-6696.scope")),
    (K8S_CONTAINERD_SYSTEMD, Owner("k8s", "ee4b20e90ac7")),
    (K8S_CGROUPFS_V2, Owner("k8s", "a3804295d867")),
    (K8S_CRIO, Owner("k8s", "5eed91756358")),
    (SLURM_V1, Owner("slurm", "280678")),
    (SLURM_V2, Owner("slurm", "1392969")),
    (SSH_SESSION, Owner("unit", "session-3.scope")),
    (DESKTOP_APP, Owner("unit", "app-gnome-kitty-3842.scope")),
    (V1_SESSION, Owner("unit", "session-67.scope")),
    (SERVICE, Owner("unit", "containerd.service")),
    (USER_SLICE, Owner("user", "user-1000.slice")),
])
def test_real_texts(text: str, owner: Owner) -> None:
    assert owner_of(text) == owner


def test_labels() -> None:
    assert Owner("docker", "a2ffe0e97ac2").label == "docker:a2ffe0e97ac2"
    assert Owner("slurm", "1870").label == "slurm:1870"
    assert Owner("unit", "nginx.service").label == "nginx.service"


@pytest.mark.parametrize("text", ["", "0::/\n", "0::/init\n", "garbage", "1:net_cls:/\n0::/\n",
                                  "0::/job_42/step_extern\n"])
def test_no_owner(text: str) -> None:
    # The root group, a group no runtime made, and a job_ outside Slurm's tree.
    assert owner_of(text) is None


def test_multiple_slurmd_names_its_tree_after_the_node() -> None:
    # plazonic/cgroup_exporter pull 5: /slurm_<node>/uid_<uid>/job_<id>/step_<s>/task_<t>.
    assert owner_of_path("/slurm_gpu07/uid_1000/job_55/step_0/task_0") == Owner("slurm", "55")
    assert owner_of_path("/system.slice/gpu07_slurmstepd.scope/job_56/step_batch/user/task_0"
                         ) == Owner("slurm", "56")


def test_this_process_live() -> None:
    """This very process: whatever group it runs in parses without error, and a systemd scope
    made for a child (where systemd-run --user --scope works here) is named."""
    text = Path("/proc/self/cgroup").read_text(encoding="utf-8")
    owner_of(text)  # any machine's text parses
    run = shutil.which("systemd-run")
    if run is None or not os.environ.get("DBUS_SESSION_BUS_ADDRESS"):
        pytest.skip("no user systemd here to make a scope in")
    done = subprocess.run([run, "--user", "--scope", "--unit", "gpumon-test-scope",
                           "cat", "/proc/self/cgroup"], capture_output=True, text=True,
                          timeout=20, check=False)
    if done.returncode != 0:
        pytest.skip(f"systemd-run --user --scope failed here: {done.stderr.strip()}")
    assert owner_of(done.stdout) == Owner("unit", "gpumon-test-scope.scope")
