"""The command line's options with generated values (issue 53): whatever is typed, gpumon
ends with a status and a sentence, never a traceback. A 5,000-digit ``-i`` was a traceback
(int()'s digit limit) and ``-i ,,,`` showed every GPU with status 0: both are argparse's
one-line error with status 2 now."""

from __future__ import annotations

import contextlib
import io

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpumon import i18n
from gpumon.cli import exporter
from gpumon.cli.main import main

PREFIX = ["--once", "--simulate", "2"]  # never the window, never a loop, never NVML


def run(argv: list[str]) -> tuple[int, str, str]:
    """main(argv)'s status, stdout and stderr; SystemExit counts as a status."""
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = main(argv)
            except SystemExit as exc:
                status = exc.code if isinstance(exc.code, int) else 1
    finally:
        i18n.set_language("en")  # a generated --lang must not leak into other tests
    return status, out.getvalue(), err.getvalue()


def one_line_error(err: str) -> bool:
    lines = err.splitlines()
    return len(lines) == 2 and lines[0].startswith("gpumon: error: ") and "--help" in lines[1]


@pytest.mark.parametrize("value", ["9" * 5000, ",,,", " , ", "", "0," + "1" * 7])
def test_ids_that_name_no_gpu_are_an_argument_error(value: str) -> None:
    status, out, err = run([*PREFIX, "-i", value])
    assert status == 2 and out == ""
    assert one_line_error(err), err
    assert "Traceback" not in err


def test_a_good_id_still_selects() -> None:
    status, out, err = run([*PREFIX, "-i", "1", "--csv"])
    assert status == 0 and err == ""
    assert len(out.splitlines()) == 2  # the header and GPU 1


VALUES = st.one_of(
    st.text(st.characters(exclude_characters="\x00"), max_size=40),
    st.integers().map(str),
    st.sampled_from(["9" * 5000, ",,,", "-1", "nan", "inf", "-inf", "1e999", "0x10", "²",
                     "GPU-", "00000000:00:00.0", "--", "-", "=", "zh_CN", "0.000001"]),
)
OPTIONS = ["-i", "--interval", "--count", "--seed", "--lang", "--simulate"]
FLAGS = ["-q", "--json", "--csv", "--uuid", "--no-gpm"]
ARGS = st.lists(st.one_of(st.tuples(st.sampled_from(OPTIONS), VALUES).map(list),
                          st.sampled_from(FLAGS).map(lambda f: [f]), VALUES.map(lambda v: [v])),
                max_size=4).map(lambda parts: [a for part in parts for a in part])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ARGS)
def test_no_option_value_gives_a_traceback(extra: list[str]) -> None:
    status, _, err = run([*PREFIX, *extra])
    assert "Traceback" not in err
    assert status in (0, 1, 2, 6), (status, err)
    if status == 2:
        assert one_line_error(err), err


@settings(max_examples=100, deadline=None)
@given(ARGS)
def test_the_exporters_options_give_no_traceback(extra: list[str]) -> None:
    options = ["--listen", "--web.config.file", "--interval", "--read-timeout",
               "--process-labels", "--hostname", "--seed", "--simulate"]
    argv = [a if a not in OPTIONS else options[OPTIONS.index(a)] for a in extra]
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            exporter.build_parser().parse_args(argv)
        except SystemExit as exc:
            assert exc.code in (0, 2)
    assert "Traceback" not in err.getvalue()
