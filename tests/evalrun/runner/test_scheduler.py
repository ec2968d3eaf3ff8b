"""The calls' scheduler: each call's deadline runs from its own start, a call past it is abandoned and
another starts in its place, whatever a call raises is that item's outcome."""

import threading

import pytest

from evalrun.runner.scheduler import Calls, TooManyHung
from tests.support.processes import PATIENCE, wait_until


def _outcomes(calls, items):
    return {f.item: f for f in calls.run(items)}


def test_a_deadline_runs_from_the_start_of_its_own_call():
    """Two calls that hang hold their slots for 0.5 s only; the four quick ones run after them, each
    with a deadline of its own, and the run ends while the two still hang (proof that it did not wait
    for them, whatever the machine's speed)."""
    release = threading.Event()

    def call(item):
        if item.startswith("slow"):
            release.wait(PATIENCE)
        return item.upper()

    calls = Calls(call, concurrency=2, timeout=0.5)
    try:
        outcomes = _outcomes(calls, ["slow-1", "slow-2", "a", "b", "c", "d"])
        assert not release.is_set() and calls.hung == 2         # ended before the slow calls did
    finally:
        release.set()
    assert sorted(i for i, f in outcomes.items() if f.timed_out) == ["slow-1", "slow-2"]
    assert {i: f.value for i, f in outcomes.items() if not f.timed_out} == {"a": "A", "b": "B", "c": "C", "d": "D"}
    assert all(outcomes[i].seconds >= 0.5 for i in ("slow-1", "slow-2"))    # not given up on before the deadline
    assert calls.abandoned == 2


def test_at_most_concurrency_calls_run_at_once():
    """Each call waits until three are running together (a barrier, not a sleep that is hoped to
    overlap): three at once is reached every round and a fourth is never there."""
    lock, now, most = threading.Lock(), [0], [0]
    together = threading.Barrier(3, timeout=PATIENCE)

    def call(item):
        with lock:
            now[0] += 1
            most[0] = max(most[0], now[0])
        together.wait()
        with lock:
            now[0] -= 1

    outcomes = list(Calls(call, concurrency=3, timeout=PATIENCE).run(range(12)))
    assert [f.error for f in outcomes] == [None] * 12 and most[0] == 3


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
    wait_until(lambda: calls.hung == 0, "the late call's return")
    assert calls.abandoned == 1


def test_too_many_hung_calls_stop_new_ones():
    never = threading.Event()
    calls = Calls(lambda item: never.wait(), concurrency=2, timeout=0.1, max_hung=2)
    seen = []
    with pytest.raises(TooManyHung, match="2 calls to the target are still running after their 0.1 s timeout"):
        for finished in calls.run(range(10)):
            seen.append(finished.item)
    assert sorted(seen) == [0, 1]          # the two that hung; none of the other eight was started
    never.set()
