"""Windows: every kernel in a Job object that kills what is in it when the window ends.

POSIX has the kernel's parent-death signal and process groups (kernel/lifeline.py,
kernel_client.py); Windows has neither. A Job object with ``KILL_ON_JOB_CLOSE`` is its
equivalent: the window holds the job's only handle, every process the kernel starts joins
the job too, and when the window's process ends for any reason (a crash included) Windows
closes the handle and ends every process in the job.

Not run on Windows by this project's tests (they run on Linux); each call's failure leaves
the kernel without a job, never without a kernel, and the kernel's own watch thread still
ends it when the window is gone.
"""

from __future__ import annotations

import subprocess
import sys

_JOB: int | None = None  # the window's one job handle, made on first use


def put_in_job(proc: subprocess.Popen[bytes]) -> bool:
    """Add ``proc`` to the window's kill-on-close job (Windows); False elsewhere or on failure."""
    if sys.platform != "win32":
        return False
    try:
        return _assign(proc)
    except (OSError, AttributeError, ValueError):
        return False


if sys.platform == "win32":
    import ctypes
    from ctypes import wintypes

    _JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE = 0x2000
    _JOB_OBJECT_EXTENDED_LIMIT_INFORMATION = 9  # the JOBOBJECTINFOCLASS value

    class _IoCounters(ctypes.Structure):
        _fields_ = [(name, ctypes.c_ulonglong) for name in (
            "ReadOperationCount", "WriteOperationCount", "OtherOperationCount",
            "ReadTransferCount", "WriteTransferCount", "OtherTransferCount")]

    class _BasicLimits(ctypes.Structure):
        _fields_ = [("PerProcessUserTimeLimit", ctypes.c_int64),
                    ("PerJobUserTimeLimit", ctypes.c_int64),
                    ("LimitFlags", wintypes.DWORD),
                    ("MinimumWorkingSetSize", ctypes.c_size_t),
                    ("MaximumWorkingSetSize", ctypes.c_size_t),
                    ("ActiveProcessLimit", wintypes.DWORD),
                    ("Affinity", ctypes.c_size_t),
                    ("PriorityClass", wintypes.DWORD),
                    ("SchedulingClass", wintypes.DWORD)]

    class _ExtendedLimits(ctypes.Structure):
        _fields_ = [("BasicLimitInformation", _BasicLimits),
                    ("IoInfo", _IoCounters),
                    ("ProcessMemoryLimit", ctypes.c_size_t),
                    ("JobMemoryLimit", ctypes.c_size_t),
                    ("PeakProcessMemoryUsed", ctypes.c_size_t),
                    ("PeakJobMemoryUsed", ctypes.c_size_t)]

    def _assign(proc: subprocess.Popen[bytes]) -> bool:
        global _JOB
        kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
        kernel32.CreateJobObjectW.restype = wintypes.HANDLE
        if _JOB is None:
            job = kernel32.CreateJobObjectW(None, None)
            if not job:
                return False
            limits = _ExtendedLimits()
            limits.BasicLimitInformation.LimitFlags = _JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
            if not kernel32.SetInformationJobObject(
                    wintypes.HANDLE(job), _JOB_OBJECT_EXTENDED_LIMIT_INFORMATION,
                    ctypes.byref(limits), ctypes.sizeof(limits)):
                kernel32.CloseHandle(wintypes.HANDLE(job))
                return False
            _JOB = int(job)
        handle = int(proc._handle)  # type: ignore[attr-defined]  # Popen's own
        return bool(kernel32.AssignProcessToJobObject(wintypes.HANDLE(_JOB),
                                                      wintypes.HANDLE(handle)))
else:
    def _assign(proc: subprocess.Popen[bytes]) -> bool:
        return False
