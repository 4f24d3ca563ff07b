"""Windows process plumbing for :mod:`app.core.proc.runner` (ctypes; nothing here starts a process).

* :class:`Job`: a Job Object that holds one child's whole process tree. The child is started
  suspended, put in the job, then resumed, so no process it starts can be outside the job;
  ending the job (:meth:`Job.terminate`) ends the tree at once, grandchildren whose parent has
  already exited included. ``JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE`` ends the tree when the job's
  last handle closes, even when the assistant itself dies. A program that asks to leave with
  ``CREATE_BREAKAWAY_FROM_JOB`` may (``BREAKAWAY_OK``): it is not refused its start, and the
  runner's descendant scan still finds it on cancel.
* :func:`plain_dll_search`: while a child is created, no DLL directory. PyInstaller's bootloader
  points it at ``sys._MEIPASS`` and children inherit it, so an env's Python could load the
  app's own DLLs; it is restored afterwards for the app's own later imports.
* :func:`unblock_reads`: a thread blocked reading a pipe that a surviving process holds open is
  woken (``CancelSynchronousIo``), so a run can end.

Every function is for Windows only; the runner calls them behind ``sys.platform == "win32"``.
"""
from __future__ import annotations

import sys
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from functools import lru_cache
from types import SimpleNamespace
from typing import Any

CREATE_SUSPENDED = 0x00000004
CREATE_NEW_PROCESS_GROUP = 0x00000200
CREATE_BREAKAWAY_FROM_JOB = 0x01000000
#: a console program gets a console without a window (its own console children share it)
CREATE_NO_WINDOW = 0x08000000

_LIMIT_BREAKAWAY_OK = 0x00000800
_LIMIT_KILL_ON_JOB_CLOSE = 0x00002000
_EXTENDED_LIMIT_INFORMATION = 9  # JobObjectExtendedLimitInformation
_PROCESS_TERMINATE = 0x0001
_PROCESS_SET_QUOTA = 0x0100
_PROCESS_SUSPEND_RESUME = 0x0800
_THREAD_TERMINATE = 0x0001  # the access CancelSynchronousIo needs
#: the exit code of a process ended through its job (TerminateProcess's, as Popen.terminate uses)
TERMINATED_EXIT_CODE = 1

_DLL_LOCK = threading.Lock()


@lru_cache(maxsize=1)
def _api() -> Any:  # the ctypes namespace, loaded on first use (off the start-up path)
    if sys.platform != "win32":  # pragma: no cover - guarded by the callers
        raise OSError("Windows only")
    import ctypes
    from ctypes import wintypes

    class Basic(ctypes.Structure):
        _fields_ = [("PerProcessUserTimeLimit", ctypes.c_int64), ("PerJobUserTimeLimit", ctypes.c_int64),
                    ("LimitFlags", wintypes.DWORD), ("MinimumWorkingSetSize", ctypes.c_size_t),
                    ("MaximumWorkingSetSize", ctypes.c_size_t), ("ActiveProcessLimit", wintypes.DWORD),
                    ("Affinity", ctypes.c_size_t), ("PriorityClass", wintypes.DWORD),
                    ("SchedulingClass", wintypes.DWORD)]

    class Counters(ctypes.Structure):
        _fields_ = [(name, ctypes.c_uint64) for name in ("ReadOps", "WriteOps", "OtherOps", "ReadBytes",
                                                          "WriteBytes", "OtherBytes")]

    class Extended(ctypes.Structure):
        _fields_ = [("BasicLimitInformation", Basic), ("IoInfo", Counters),
                    ("ProcessMemoryLimit", ctypes.c_size_t), ("JobMemoryLimit", ctypes.c_size_t),
                    ("PeakProcessMemoryUsed", ctypes.c_size_t), ("PeakJobMemoryUsed", ctypes.c_size_t)]

    k32 = ctypes.WinDLL("kernel32", use_last_error=True)
    ntdll = ctypes.WinDLL("ntdll")
    handle, dword, boolean = wintypes.HANDLE, wintypes.DWORD, wintypes.BOOL
    for name, res, args in (
            ("CreateJobObjectW", handle, [ctypes.c_void_p, wintypes.LPCWSTR]),
            ("SetInformationJobObject", boolean, [handle, ctypes.c_int, ctypes.c_void_p, dword]),
            ("AssignProcessToJobObject", boolean, [handle, handle]),
            ("TerminateJobObject", boolean, [handle, wintypes.UINT]),
            ("OpenProcess", handle, [dword, boolean, dword]),
            ("OpenThread", handle, [dword, boolean, dword]),
            ("CancelSynchronousIo", boolean, [handle]),
            ("CloseHandle", boolean, [handle]),
            ("GetDllDirectoryW", dword, [dword, wintypes.LPWSTR]),
            ("SetDllDirectoryW", boolean, [wintypes.LPCWSTR])):
        fn = getattr(k32, name)
        fn.restype, fn.argtypes = res, args
    ntdll.NtResumeProcess.restype, ntdll.NtResumeProcess.argtypes = ctypes.c_long, [handle]

    return SimpleNamespace(ctypes=ctypes, k32=k32, ntdll=ntdll, Extended=Extended)


def _error(what: str) -> str:
    api = _api()
    code = api.ctypes.get_last_error()
    return f"{what} failed: {api.ctypes.FormatError(code).strip()} (error {code})"


class Job:
    """A Job Object for one child; :meth:`create` gives None where none can be made."""

    def __init__(self, handle: int) -> None:
        self._handle: int | None = handle
        self._lock = threading.Lock()

    @classmethod
    def create(cls) -> Job | None:
        api = _api()
        handle = api.k32.CreateJobObjectW(None, None)  # not inheritable: no child keeps it open
        if not handle:
            return None
        job = cls(handle)
        if not job._limits(_LIMIT_KILL_ON_JOB_CLOSE | _LIMIT_BREAKAWAY_OK):
            job.close(kill=False)
            return None
        return job

    def _limits(self, flags: int) -> bool:
        api = _api()
        info = api.Extended()
        info.BasicLimitInformation.LimitFlags = flags
        return bool(api.k32.SetInformationJobObject(self._handle, _EXTENDED_LIMIT_INFORMATION,
                                                    api.ctypes.byref(info), api.ctypes.sizeof(info)))

    def adopt_and_resume(self, pid: int) -> tuple[bool, str]:
        """Put the suspended process ``pid`` in the job, then let it run.

        Returns (in the job, why it could not be resumed: "" when it runs). Joining can fail
        (an old Windows whose own job forbids nesting): the child then runs outside any job and
        the runner ends it, and the descendants it can find, one by one."""
        api = _api()
        proc = api.k32.OpenProcess(_PROCESS_SET_QUOTA | _PROCESS_TERMINATE | _PROCESS_SUSPEND_RESUME, False, pid)
        if not proc:
            return False, _error("OpenProcess")
        try:
            adopted = bool(api.k32.AssignProcessToJobObject(self._handle, proc))
            status = api.ntdll.NtResumeProcess(proc)
            return adopted, "" if status >= 0 else f"NtResumeProcess failed (NTSTATUS {status & 0xFFFFFFFF:#010x})"
        finally:
            api.k32.CloseHandle(proc)

    def terminate(self) -> None:
        """End every process in the job now."""
        with self._lock:
            if self._handle is not None:
                _api().k32.TerminateJobObject(self._handle, TERMINATED_EXIT_CODE)

    def close(self, *, kill: bool) -> None:
        """Let go of the job: ``kill`` ends what is still in it (KILL_ON_JOB_CLOSE); otherwise
        that limit is lifted first, so what the command left running stays."""
        with self._lock:
            handle, self._handle = self._handle, None
        if handle is None:
            return
        api = _api()
        if not kill:
            info = api.Extended()
            info.BasicLimitInformation.LimitFlags = _LIMIT_BREAKAWAY_OK
            api.k32.SetInformationJobObject(handle, _EXTENDED_LIMIT_INFORMATION, api.ctypes.byref(info),
                                            api.ctypes.sizeof(info))
        api.k32.CloseHandle(handle)


@contextmanager
def plain_dll_search() -> Iterator[None]:
    """No DLL directory while the body runs (a child created there does not inherit the frozen
    app's ``_MEIPASS``); the previous one is restored after. One body at a time."""
    api = _api()
    with _DLL_LOCK:
        buf = api.ctypes.create_unicode_buffer(32768)
        previous = buf.value if api.k32.GetDllDirectoryW(len(buf), buf) else ""
        api.k32.SetDllDirectoryW(None)
        try:
            yield
        finally:
            if previous:
                api.k32.SetDllDirectoryW(previous)


def dll_directory() -> str:
    """The process's DLL directory ("" when none is set)."""
    api = _api()
    buf = api.ctypes.create_unicode_buffer(32768)
    return str(buf.value) if api.k32.GetDllDirectoryW(len(buf), buf) else ""


def unblock_reads(threads: Iterable[threading.Thread]) -> None:
    """Cancel the synchronous read each thread is blocked in (it sees an OSError and ends)."""
    api = _api()
    for t in threads:
        if not t.is_alive() or t.native_id is None:
            continue
        handle = api.k32.OpenThread(_THREAD_TERMINATE, False, t.native_id)
        if handle:
            try:
                api.k32.CancelSynchronousIo(handle)
            finally:
                api.k32.CloseHandle(handle)
