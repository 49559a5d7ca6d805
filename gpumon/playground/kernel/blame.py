"""Whose exception is it: torch's (shown as torch wrote it) or a bug of gpumon's own?

An exception raised while torch ran (inside ``ActionRun.execute``, or in the code line's
own lines) is torch's or the user's. Outside that, gpumon validates and prepares; an
exception there is torch's only when torch raised it: its innermost frame is in torch's
files, or it is one of the types torch's C++ core raises (RuntimeError and its kin, which
surface at gpumon's call site). Anything else there (AttributeError, KeyError, NameError,
AssertionError, ...) is gpumon's bug, shown as an internal error with its traceback.

Every internal error is also logged, once, on the ``gpumon.internal`` logger: by the engine
where it runs in this process, and by the kernel client for what crosses the kernel's pipe
(the kernel itself keeps quiet, so the window logs it once). The test suite fails any test
during which that logger spoke, unless the test is marked ``internal_error``.
"""

from __future__ import annotations

import os
import traceback

from gpumon.i18n import tr
from gpumon.playground.data.errors import INTERNAL, ErrorInfo, Refusal, report_internal
from gpumon.playground.kernel.explain import TORCH_RAISES


def _innermost_file(exc: BaseException) -> str:
    tb = exc.__traceback__
    if tb is None:
        return ""
    while tb.tb_next is not None:
        tb = tb.tb_next
    return tb.tb_frame.f_code.co_filename


def is_gpumon_bug(exc: BaseException) -> bool:
    """True when ``exc``, raised outside the torch call, did not come from torch."""
    if isinstance(exc, Refusal):
        return False
    module = type(exc).__module__
    if module == "torch" or module.startswith("torch."):
        return False
    where = _innermost_file(exc)
    if f"{os.sep}torch{os.sep}" in where:
        return False
    return not isinstance(exc, TORCH_RAISES)


def internal_error(exc: BaseException) -> ErrorInfo:
    """A bug of gpumon's, with its traceback: never shown as torch's error."""
    trace = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)).rstrip()
    report_internal(trace)
    return ErrorInfo(INTERNAL, trace,
                     tr("This is a bug in gpumon, not a torch error; please report it."),
                     by_torch=False)
