"""evalframe._threads: the thread count (threads=, EVALFRAME_THREADS, the cores) and
map_in_order (results in the items' order, whatever the count)."""
import functools
import os
import threading
import time

import pytest

from evalframe._threads import ENV, cached_property, map_in_order, resolve_threads, usable_cores
from evalframe.errors import ParameterError


def test_explicit_count_wins_over_the_environment(monkeypatch):
    monkeypatch.setenv(ENV, "3")
    assert resolve_threads(5) == 5
    assert resolve_threads() == 3


def test_default_is_the_cores_this_process_may_use(monkeypatch):
    monkeypatch.delenv(ENV, raising=False)
    assert resolve_threads() == usable_cores()
    if hasattr(os, "sched_getaffinity"):
        assert usable_cores() == len(os.sched_getaffinity(0))


@pytest.mark.parametrize("bad", [0, -1, 1.5, "2", True])
def test_bad_counts_are_refused_with_the_caller_named(bad):
    with pytest.raises(ParameterError, match="^evaluate: threads must be an int >= 1"):
        resolve_threads(bad, caller="evaluate")


@pytest.mark.parametrize("bad", ["0", "two", "-3"])
def test_bad_environment_values_are_refused(monkeypatch, bad):
    monkeypatch.setenv(ENV, bad)
    with pytest.raises(ParameterError, match=f"environment variable {ENV} must be an int >= 1"):
        resolve_threads()


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_results_keep_the_items_order(threads):
    def slow_square(x):
        time.sleep(0.002 * (10 - x))  # later items finish first
        return x * x
    assert map_in_order(slow_square, range(10), threads=threads) == [x * x for x in range(10)]


def test_work_runs_on_several_threads_only_when_asked():
    seen = set()

    def who(_):
        seen.add(threading.get_ident())
        time.sleep(0.01)
    map_in_order(who, range(4), threads=1)
    assert seen == {threading.get_ident()}
    seen.clear()
    map_in_order(who, range(4), threads=2)
    assert len(seen) == 2 and threading.get_ident() not in seen


def test_an_error_in_a_part_reaches_the_caller():
    def fail_on_three(x):
        if x == 3:
            raise ValueError("three")
        return x
    with pytest.raises(ValueError, match="three"):
        map_in_order(fail_on_three, range(6), threads=2)


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_in_order_gives_results_in_submission_order_with_bounded_flight(threads):
    from evalframe._threads import InOrder
    lock, flying, most = threading.Lock(), [0], [0]

    def slow(x):
        with lock:
            flying[0] += 1
            most[0] = max(most[0], flying[0])
        time.sleep(0.002 * (7 - x % 7))
        with lock:
            flying[0] -= 1
        return -x
    with InOrder(threads) as q:
        got = [r for x in range(20) for r in q.submit(slow, x)]
        got += q.drain()
    assert got == [-x for x in range(20)]
    assert most[0] <= threads


def test_in_order_raises_an_items_error_where_its_result_is_due():
    from evalframe._threads import InOrder

    def fail_on_two(x):
        if x == 2:
            raise KeyError("two")
        return x
    for threads in (1, 2, 3):
        with InOrder(threads) as q:
            got = []
            with pytest.raises(KeyError, match="two"):
                for x in range(5):
                    got += q.submit(fail_on_two, x)
                got += q.drain()
            assert 2 not in got and got == list(range(len(got)))


def test_cached_properties_of_two_objects_are_computed_side_by_side():
    # functools.cached_property (Python 3.11) holds one lock per property for every object of
    # the class: two threads computing it for two objects take turns (the threaded engine's
    # parts each compute their run's doc fingerprints). Each computation here waits for the
    # other to start: taking turns breaks the barrier.
    barrier = threading.Barrier(2, timeout=5)

    class Part:
        @cached_property
        def value(self):
            barrier.wait()
            return id(self)

    parts = [Part(), Part()]
    assert map_in_order(lambda p: p.value, parts, threads=2) == [id(p) for p in parts]
    assert [p.value for p in parts] == [id(p) for p in parts]  # kept: not computed again


def test_cached_property_is_computed_once_and_documented():
    calls = []

    class Thing:
        @cached_property
        def size(self):
            """The size."""
            calls.append(1)
            return 3

    t = Thing()
    assert (t.size, t.size, calls) == (3, 3, [1])
    assert Thing.size.__doc__ == "The size."
    assert isinstance(Thing.__dict__["size"], functools.cached_property)  # Sphinx documents it as a property
