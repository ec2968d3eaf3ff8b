"""The calls' scheduler: each call's deadline runs from its own start, a call past it is abandoned and
another starts in its place, whatever a call raises is that item's outcome."""

import threading
import time

import pytest

from evalrun.runner.scheduler import Calls, TooManyHung


def _outcomes(calls, items):
    return {f.item: f for f in calls.run(items)}


def test_a_deadline_runs_from_the_start_of_its_own_call():
    """Two calls that hang for 3 s hold their slots for 0.5 s only; the four quick ones run after."""
    def call(item):
        if item.startswith("slow"):
            time.sleep(3)
        return item.upper()

    calls = Calls(call, concurrency=2, timeout=0.5)
    started = time.monotonic()
    outcomes = _outcomes(calls, ["slow-1", "slow-2", "a", "b", "c", "d"])
    took = time.monotonic() - started
    assert sorted(i for i, f in outcomes.items() if f.timed_out) == ["slow-1", "slow-2"]
    assert {i: f.value for i, f in outcomes.items() if not f.timed_out} == {"a": "A", "b": "B", "c": "C", "d": "D"}
    assert took < 2.0                     # 0.5 s for the two slots, then four instant calls; not 3 s
    assert calls.abandoned == 2 and calls.hung == 2


def test_at_most_concurrency_calls_run_at_once():
    lock, now, most = threading.Lock(), [0], [0]

    def call(item):
        with lock:
            now[0] += 1
            most[0] = max(most[0], now[0])
        time.sleep(0.05)
        with lock:
            now[0] -= 1

    list(Calls(call, concurrency=3, timeout=5).run(range(12)))
    assert most[0] == 3


@pytest.mark.parametrize("exc", [SystemExit(3), KeyboardInterrupt(), GeneratorExit(), ValueError("x")])
def test_whatever_a_call_raises_is_its_outcome(exc):
    def call(item):
        if item == 1:
            raise exc
        return item

    outcomes = _outcomes(Calls(call, concurrency=2, timeout=5), [0, 1, 2])
    assert outcomes[1].error is exc and outcomes[0].value == 0 and outcomes[2].value == 2


def test_a_late_result_is_ignored_and_no_longer_counts_as_hung():
    release = threading.Event()

    def call(item):
        if item == "late":
            release.wait()
        return item

    calls = Calls(call, concurrency=1, timeout=0.2)
    outcomes = _outcomes(calls, ["late", "next"])
    assert outcomes["late"].timed_out and outcomes["late"].value is None and outcomes["next"].value == "next"
    assert calls.hung == 1
    release.set()
    time.sleep(0.1)
    assert calls.hung == 0 and calls.abandoned == 1


def test_too_many_hung_calls_stop_new_ones():
    never = threading.Event()
    calls = Calls(lambda item: never.wait(), concurrency=2, timeout=0.1, max_hung=2)
    seen = []
    with pytest.raises(TooManyHung, match="2 calls to the target are still running after their 0.1 s timeout"):
        for finished in calls.run(range(10)):
            seen.append(finished.item)
    assert sorted(seen) == [0, 1]          # the two that hung; none of the other eight was started
    never.set()
