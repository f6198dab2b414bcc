"""How many threads evalframe's own work runs on, the one way it runs work on them, and
the cached property its objects use (one that threads compute side by side).

``threads=`` of :func:`evalframe.evaluate` and :func:`evalframe.report`, else the
environment variable ``EVALFRAME_THREADS``, else every core this process may run on
(its CPU affinity, as a container or ``taskset`` sets it).  numpy and Arrow release the
GIL in their array work, so parts of whole questions (or blocks of resamples) scored on
threads run side by side; the numbers do not depend on the count: each part is computed
as it would be alone, and the parts are put back in their order.

Examples
--------
>>> from evalframe._threads import resolve_threads, map_in_order
>>> resolve_threads(2)
2
>>> map_in_order(lambda x: x * x, [1, 2, 3], threads=2)
[1, 4, 9]
>>> resolve_threads(0)
Traceback (most recent call last):
...
evalframe.errors.ParameterError: threads must be an int >= 1, got 0
"""
from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable
from typing import TypeVar

from ._validation import Interval, check, error

#: the environment variable read when ``threads=`` is not given
ENV = "EVALFRAME_THREADS"

T = TypeVar("T")
R = TypeVar("R")


def usable_cores() -> int:
    """The cores this process may run on (its affinity where the system says; else all)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - macOS, Windows
        return max(1, os.cpu_count() or 1)


def resolve_threads(threads: int | None = None, *, caller: str | None = None) -> int:
    """``threads`` checked (an int >= 1); None: ``EVALFRAME_THREADS``, else :func:`usable_cores`."""
    if threads is not None:
        return check(caller, "threads", threads, Interval(int, 1, None))
    text = os.environ.get(ENV, "").strip()
    if not text:
        return usable_cores()
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise error(None, f"the environment variable {ENV}", "an int >= 1", text)
    return value


class InOrder:
    """Work handed over one item at a time and run on ``threads`` threads, at most
    ``threads`` items in flight (a producer that reads the next item meanwhile holds no
    more than that); the results come back in the order the items were given.

    :meth:`submit` returns the results finished by then, oldest first (waiting for the
    oldest while ``threads`` are in flight); :meth:`drain` the rest.  With one thread the
    work runs in the caller's thread, at :meth:`submit`.  An error raised by an item is
    raised by the call that would return its result (the work is then abandoned: the
    results given with it are lost; :meth:`close` waits for the items in flight).

    Examples
    --------
    >>> with InOrder(2) as q:
    ...     done = [r for x in range(5) for r in q.submit(lambda v: v * 10, x)]
    ...     done += q.drain()
    >>> done
    [0, 10, 20, 30, 40]
    """

    def __init__(self, threads: int):
        self.threads = threads
        self._pool = None
        self._pending: list = []

    def submit(self, fn: Callable[..., R], *args) -> list[R]:
        """Hand over ``fn(*args)``; the results finished by then, oldest first."""
        if self.threads <= 1:
            return [fn(*args)]
        if self._pool is None:
            from concurrent.futures import ThreadPoolExecutor
            self._pool = ThreadPoolExecutor(self.threads, thread_name_prefix="evalframe")
        self._pending.append(self._pool.submit(fn, *args))
        done = []
        while self._pending and (len(self._pending) >= self.threads or self._pending[0].done()):
            done.append(self._pending.pop(0).result())
        return done

    def drain(self) -> list[R]:
        """The results of the items still in flight, in order."""
        pending, self._pending = self._pending, []
        return [f.result() for f in pending]

    def close(self) -> None:
        """Wait for the items in flight (their results are dropped) and stop the threads."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool, self._pending = None, []

    def __enter__(self) -> "InOrder":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def map_in_order(fn: Callable[[T], R], items: Iterable[T], *, threads: int) -> list[R]:
    """``[fn(x) for x in items]``, on ``threads`` threads (the results in the items' order;
    the first item's error, in that order, is the one raised)."""
    items = list(items)
    with InOrder(min(threads, len(items))) as queue:
        return [r for x in items for r in queue.submit(fn, x)] + queue.drain()


class cached_property(functools.cached_property):
    """``functools.cached_property`` without its lock: on Python 3.11 that lock is one
    per property for every object of the class, so two threads computing the property for
    two objects (the doc fingerprints of two parts' runs) take turns, and two properties
    computed in opposite orders can deadlock (Python 3.12 dropped the lock).  Two threads
    asking the same object at once may both compute it; either value is kept (the same)."""

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        if self.attrname is None:
            raise TypeError("Cannot use cached_property instance without calling __set_name__ on it.")
        value = instance.__dict__[self.attrname] = self.func(instance)  # then found there, not here
        return value
