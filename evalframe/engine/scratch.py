"""Scratch space of the engines that spill a run to disk: a temporary directory removed on
success, error, Ctrl-C and SIGTERM, a full disk reported as one error naming it and ``TMPDIR``;
and the closing of every file written there.
"""
from __future__ import annotations

import contextlib
import errno
import os
import shutil
import signal
import tempfile
import threading
from typing import Iterator


@contextlib.contextmanager
def scratch_directory(prefix: str, dir: str | None = None) -> Iterator[str]:
    """A temporary directory for a run's spilled partitions (in ``dir``, default the
    system's: ``TMPDIR``), removed on success, error, Ctrl-C and SIGTERM (what ``kill``,
    ``timeout``, ``docker stop`` and batch schedulers send: the process still ends by
    the signal, once the directory is gone).  A disk that fills up while it is written
    is one ``OSError`` naming the directory and ``TMPDIR``."""
    tmp = tempfile.mkdtemp(prefix=prefix, dir=dir)
    terminated: list[int] = []

    def on_sigterm(signum, frame):
        terminated.append(signum)
        raise SystemExit(128 + signum)  # unwinds: every finally runs

    ours = threading.current_thread() is threading.main_thread() and \
        signal.getsignal(signal.SIGTERM) in (signal.SIG_DFL, None)  # never replaces a handler of the caller's
    if ours:
        signal.signal(signal.SIGTERM, on_sigterm)
    try:
        yield tmp
    except OSError as e:
        if e.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise
        raise OSError(e.errno, f"no space left in the temporary directory {os.path.dirname(tmp)} while spilling "
                               "the run to disk: free space there, or set TMPDIR to a directory on a larger disk "
                               "(or raise memory_budget)") from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        if ours:  # the default action back (None: not set from Python, which is the default too)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
        if terminated:
            os.kill(os.getpid(), signal.SIGTERM)  # the default action now: ends as the sender meant


def close_all(files) -> None:
    """Close every file or writer of ``files``, the first error raised once all are tried
    (a Parquet writer whose close failed on a full disk is marked closed: its finaliser
    would try again and print a traceback)."""
    first = None
    for f in files:
        try:
            f.close()
        except Exception as e:  # noqa: BLE001 - re-raised below
            first = first or e
            if getattr(f, "is_open", False):
                f.is_open = False
    if first is not None:
        raise first
