"""``-i``/``--id`` as nvidia-smi takes it: GPUs by index, UUID or PCI bus id, comma-separated,
for --once, -q, --json and --watch; an id that names no GPU is one sentence and nvidia-smi's
return code 6. ``-i 0`` and ``--id 99`` were "argument COMMAND: invalid choice"."""

from __future__ import annotations

import json

import pytest

from gpumon.cli.gpu_select import matches
from gpumon.cli.main import main
from gpumon.telemetry.model.types import GpuInfo

ARGS = ["--simulate", "3", "--seed", "1"]


def _gpus(capsys: pytest.CaptureFixture[str], *flags: str) -> list[int]:
    assert main([*ARGS, "--once", "--json", *flags]) == 0
    return [g["index"] for g in json.loads(capsys.readouterr().out)["gpus"]]


def test_by_index_uuid_and_bus_id(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*ARGS, "--once", "--json"]) == 0
    every = json.loads(capsys.readouterr().out)
    uuid, bus = every["gpus"][2]["uuid"], every["gpus"][1]["pci_bus_id"]
    assert _gpus(capsys, "-i", "0") == [0]
    assert _gpus(capsys, "--id", "2") == [2]
    assert _gpus(capsys, "-i", "0,2") == [0, 2]
    assert _gpus(capsys, "-i", uuid) == [2]
    assert _gpus(capsys, "-i", uuid.removeprefix("GPU-").upper()) == [2]
    assert _gpus(capsys, "--id", bus.lower()) == [1]
    assert _gpus(capsys, "--id", bus.split(":", 1)[1]) == [1]  # no domain: domain 0
    assert main([*ARGS, "--once", "--json", "-i", "1"]) == 0
    one = json.loads(capsys.readouterr().out)
    assert {p["gpu_index"] for p in one["processes"]} <= {1}


def test_the_table_and_the_detail(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*ARGS, "--once", "-i", "1"]) == 0
    table = capsys.readouterr().out
    assert len([line for line in table.splitlines() if "MiB /" in line]) == 1
    assert main([*ARGS, "--once", "-q", "--id", "1"]) == 0
    assert capsys.readouterr().out.count("\nGPU 00000000:") == 1


def test_a_watch_shows_the_same_gpus_every_time(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*ARGS, "-l", "0.1", "--count", "2", "--json", "-i", "2"]) == 0
    docs = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [[g["index"] for g in d["gpus"]] for d in docs] == [[2], [2]]


@pytest.mark.parametrize("given", ["99", "GPU-00000000-0000-0000-0000-000000000000",
                                   "0000:ff:1f.7", "nvidia0", "0,99"])
def test_an_id_that_names_no_gpu_is_one_sentence_and_code_6(
        capsys: pytest.CaptureFixture[str], given: str) -> None:
    assert main([*ARGS, "--once", "--id", given]) == 6
    out, err = capsys.readouterr()
    wrong = given.split(",")[-1]
    assert out == "" and err == (
        f"gpumon: No devices were found: no GPU matches -i {wrong!r} (the GPUs here: 0, 1, "
        "2; an id is an index, a UUID or a PCI bus id).\n")


def test_without_once_or_watch_it_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as code:
        main([*ARGS, "-i", "0"])
    assert code.value.code == 2
    assert capsys.readouterr().err.splitlines()[0] == (
        "gpumon: error: -i applies to --once or --watch (-l SECONDS)")


def test_bus_ids_are_read_as_nvidia_smi_writes_them() -> None:
    gpu = GpuInfo(index=3, name="x", uuid="GPU-5f3c1a2b-0000-4000-8000-00000000abcd",
                  pci_bus_id="00000000:3B:00.0")
    for given in ("00000000:3B:00.0", "0000:3b:00.0", "3b:00.0", "3", "5F3C1A2B00004000"
                  "800000000000ABCD"):
        assert matches(gpu, given), given
    for given in ("3b:00.1", "4", "GPU-5f3c1a2b", "", "3b:00", "zz:00.0"):
        assert not matches(gpu, given), given
