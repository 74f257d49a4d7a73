"""The API's answer queue: one holder, FIFO hand-on, 429 estimate, leaving while queued or holding."""

from __future__ import annotations

import asyncio

import pytest

from biocite.app.server import QueueFull, SlotQueue, sse_event


def test_fifo_hand_on_and_retry_after() -> None:
    async def scenario() -> None:
        queue = SlotQueue(size=2, first_estimate_s=4.0)
        first = queue.reserve()
        second, third = queue.reserve(), queue.reserve()
        assert first.holding and not second.holding and (queue.running, queue.waiting) == (1, 2)
        with pytest.raises(QueueFull) as full:
            queue.reserve()
        assert full.value.retry_after == 12  # 4 s per request x (1 running + 2 waiting)
        order: list[str] = []

        async def take(ticket, name: str) -> None:
            await ticket.wait()
            order.append(name)
            await asyncio.sleep(0.01)
            ticket.release()

        tasks = [asyncio.create_task(take(third, "third")), asyncio.create_task(take(second, "second"))]
        await asyncio.sleep(0.01)
        assert order == []  # nobody runs while the first holds the slot
        first.release()
        first.release()  # idempotent
        await asyncio.gather(*tasks)
        assert order == ["second", "third"] and (queue.running, queue.waiting) == (0, 0)
        assert queue._seconds < 4.0  # the estimate follows measured run times

    asyncio.run(scenario())


def test_leaving_the_queue_or_the_slot() -> None:
    async def scenario() -> None:
        queue = SlotQueue(size=1, first_estimate_s=1.0)
        holder, waiter = queue.reserve(), queue.reserve()
        waiting = asyncio.create_task(waiter.wait())
        await asyncio.sleep(0)
        waiting.cancel()  # a queued client disconnects
        with pytest.raises(asyncio.CancelledError):
            await waiting
        assert (queue.running, queue.waiting) == (1, 0)
        late = queue.reserve()  # its place is free again
        assert await late.wait(timeout=0.01) is False  # still queued after the timeout, not dropped
        holder.release()
        assert await late.wait(timeout=1) is True and late.holding
        late.release()
        assert (queue.running, queue.waiting) == (0, 0) and queue.reserve().holding

    asyncio.run(scenario())


def test_sse_event_is_one_json_line() -> None:
    assert sse_event("token", {"text": "a\nb"}) == 'event: token\ndata: {"text": "a\\nb"}\n\n'


def test_chat_memory_keeps_the_latest_conversations_only() -> None:
    from biocite.app.server import Conversations

    class Saver:
        def __init__(self) -> None:
            self.deleted: list[str] = []

        def delete_thread(self, thread_id: str) -> None:
            self.deleted.append(thread_id)

    class FakeAgent:
        checkpointer = Saver()

    agent, memory = FakeAgent(), Conversations(limit=2)
    memory.done(agent, "a", keep=True)
    memory.done(agent, "once-1", keep=False)  # one-shot requests are forgotten at once
    memory.done(agent, "b", keep=True)
    memory.done(agent, "a", keep=True)  # a is used again: b is now the oldest
    memory.done(agent, "c", keep=True)
    assert agent.checkpointer.deleted == ["once-1", "b"]
