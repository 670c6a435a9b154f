"""The purgatory: waiters woken per partition, timed out by one timer, nothing lost or leaked."""

from __future__ import annotations

import trio
import trio.testing

from kafkapy.server.replication.purgatory import Purgatory


def run(fn):
    trio.run(fn, clock=trio.testing.MockClock(autojump_threshold=0))


def test_notify_wakes_only_the_waiters_of_that_partition():
    async def main():
        p = Purgatory()
        out = {}
        async with trio.open_nursery() as n:
            await n.start(p.run)

            async def waiter(name, keys, timeout):
                w = p.watch(keys)
                start = trio.current_time()
                woken = await w.wait(start + timeout)
                out[name] = (woken, round(trio.current_time() - start, 3))

            n.start_soon(waiter, "a", [("t", 0)], 1.0)
            n.start_soon(waiter, "b", [("t", 1)], 2.0)
            n.start_soon(waiter, "ab", [("t", 0), ("t", 1)], 3.0)
            await trio.sleep(0.5)
            p.notify(("t", 0))
            await trio.sleep(5)
            n.cancel_scope.cancel()
        assert out == {"a": (True, 0.5), "ab": (True, 0.5), "b": (False, 2.0)}
        assert len(p) == 0

    run(main)


def test_a_change_between_arming_and_waiting_is_not_lost():
    async def main():
        p = Purgatory()
        async with trio.open_nursery() as n:
            await n.start(p.run)
            w = p.watch([("t", 0)])
            p.notify(("t", 0))  # while the caller was still checking the partition
            start = trio.current_time()
            assert await w.wait(start + 10) is True
            assert trio.current_time() == start
            n.cancel_scope.cancel()

    run(main)


def test_deadlines_in_any_order_each_at_its_time():
    async def main():
        p = Purgatory()
        times = {}
        async with trio.open_nursery() as n:
            await n.start(p.run)

            async def waiter(timeout):
                w = p.watch([("t", timeout)])
                start = trio.current_time()
                assert await w.wait(start + timeout) is False
                times[timeout] = round(trio.current_time() - start, 3)

            for t in (3.0, 0.2, 1.5, 0.2, 0.7):  # a later arrival with an earlier deadline too
                n.start_soon(waiter, t)
            await trio.sleep(4)
            n.cancel_scope.cancel()
        assert times == {3.0: 3.0, 0.2: 0.2, 1.5: 1.5, 0.7: 0.7}
        assert len(p) == 0

    run(main)


def test_notify_all_and_the_legacy_event():
    async def main():
        p = Purgatory()
        woken = []
        async with trio.open_nursery() as n:
            await n.start(p.run)
            event = p.waiter()

            async def waiter(k):
                w = p.watch([k])
                woken.append(await w.wait(trio.current_time() + 10))

            for k in range(3):
                n.start_soon(waiter, ("t", k))
            await trio.sleep(1)
            p.notify(("other", 0))  # nobody watches it, but the legacy event hears everything
            assert event.is_set() and woken == []
            p.notify()
            await trio.sleep(0)
            n.cancel_scope.cancel()
        assert woken == [True, True, True]

    run(main)


def test_a_cancelled_waiter_leaves_nothing_behind():
    async def main():
        p = Purgatory()
        async with trio.open_nursery() as n:
            await n.start(p.run)
            with trio.move_on_after(1):  # the connection went away mid-wait
                await p.watch([("t", 0)]).wait(trio.current_time() + 100)
            assert len(p) == 0
            p.notify(("t", 0))  # nothing to wake, nothing raised
            w = p.watch([("t", 0)])
            w.close()  # found data without waiting
            assert len(p) == 0
            n.cancel_scope.cancel()

    run(main)


def test_without_the_timer_task_waits_still_time_out():
    async def main():
        p = Purgatory()
        w = p.watch([("t", 0)])
        start = trio.current_time()
        assert await w.wait(start + 2) is False
        assert trio.current_time() - start == 2
        assert len(p) == 0

    run(main)


def test_woken_waiters_do_not_pile_up_in_the_timer_heap():
    async def main():
        p = Purgatory()
        async with trio.open_nursery() as n:
            await n.start(p.run)

            async def waiter():
                await p.watch([("t", 0)]).wait(trio.current_time() + 3600)

            for _ in range(50):
                for _ in range(100):
                    n.start_soon(waiter)
                await trio.sleep(0.01)
                p.notify(("t", 0))
                await trio.sleep(0.01)
            assert len(p._heap) < 2100  # compacted as it grows past 1,024 stale entries
            n.cancel_scope.cancel()

    run(main)


def test_a_persistent_watch_stays_registered_and_is_rearmed():
    async def main():
        p = Purgatory()
        async with trio.open_nursery() as n:
            await n.start(p.run)
            w = p.watch([("t", k) for k in range(100)], persistent=True)
            start = trio.current_time()
            assert await w.wait(start + 1) is False  # timed out: still registered
            assert len(p) == 1 and trio.current_time() - start == 1
            w.rearm()  # the caller re-arms, then checks its partitions...
            p.notify(("t", 7))  # ...and a change after that is not lost
            assert await w.wait(trio.current_time() + 5) is True
            w.rearm()
            start = trio.current_time()
            n.start_soon(_notify_later, p, 0.5, ("t", 42))
            assert await w.wait(start + 5) is True
            assert trio.current_time() - start == 0.5
            # an earlier arming's deadline does not fire a later arming
            w.rearm()
            start = trio.current_time()
            assert await w.wait(start + 2) is False
            assert trio.current_time() - start == 2
            w.close()
            assert len(p) == 0
            p.notify(("t", 7))
            n.cancel_scope.cancel()

    run(main)


async def _notify_later(p, delay, key):
    await trio.sleep(delay)
    p.notify(key)


def test_closing_a_watch_wakes_its_waiter():
    """A fetch session evicted while its long poll waits: the poll is answered, not left for
    its deadline (which closing disarmed)."""

    async def main():
        p = Purgatory()
        async with trio.open_nursery() as n:
            await n.start(p.run)
            w = p.watch([("t", 0)], persistent=True)

            async def close_later():
                await trio.sleep(0.5)
                w.close()

            n.start_soon(close_later)
            start = trio.current_time()
            assert await w.wait(start + 100) is False
            assert trio.current_time() - start == 0.5 and len(p) == 0
            n.cancel_scope.cancel()

    run(main)
