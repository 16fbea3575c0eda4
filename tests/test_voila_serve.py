"""tools/voila_serve.py: a kernel reply whose wake-up is lost is still found, and a timeout is kept.

The socket below behaves as pyzmq's asyncio socket does when the edge-triggered wake-up for a message
that has already arrived is lost: ``poll`` does not return early, but when its own timeout ends it asks
the socket and reports the message. Waiting with no timeout (what nbclient does for ``execute_reply``)
then never ends, which is how a presentation view stopped at one cell.
"""

from __future__ import annotations

import asyncio
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from queue import Empty

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
import voila_serve
from jupyter_client.channels import AsyncZMQSocketChannel


class LostWakeupSocket:
    """A socket holding a message (or none) whose arrival never wakes a waiting ``poll``."""

    def __init__(self, has_message: bool):
        self.has_message = has_message
        self.polls: list[int | None] = []

    async def poll(self, timeout_ms: int | None = None) -> int:
        self.polls.append(timeout_ms)
        if timeout_ms is None:
            await asyncio.Event().wait()  # the lost wake-up: nothing will ever set it
        await asyncio.sleep(timeout_ms / 1000)
        return 1 if self.has_message else 0  # at its timeout, poll asks the socket itself


class Channel:
    """Just what ``get_msg`` uses of a channel: its socket and ``_recv``."""

    def __init__(self, socket):
        self.socket = socket

    async def _recv(self):
        return {"msg_type": "execute_reply", "parent_header": {"msg_id": "m1"}}


def run(coro, limit_s: float = 3.0):
    """Run ``coro`` to its end or ``limit_s``, on a thread of its own: an earlier test of the session (the
    browser tests' sync Playwright) may leave an event loop running on this one."""

    async def limited():
        return await asyncio.wait_for(coro, limit_s)

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, limited()).result()


def test_without_the_repair_a_lost_wake_up_is_waited_for_for_ever():
    with pytest.raises(asyncio.TimeoutError):
        run(AsyncZMQSocketChannel.get_msg(Channel(LostWakeupSocket(True))), limit_s=1.0)


def test_the_repair_finds_the_reply_within_one_slice():
    sock = LostWakeupSocket(True)
    t0 = time.monotonic()
    msg = run(voila_serve.get_msg_in_slices(Channel(sock)))
    assert msg["msg_type"] == "execute_reply"
    assert time.monotonic() - t0 < voila_serve.SLICE_S + 0.5
    assert sock.polls == [int(voila_serve.SLICE_S * 1000)]  # never a wait without end


def test_the_repair_keeps_a_timeout_asked_for():
    sock = LostWakeupSocket(False)
    t0 = time.monotonic()
    with pytest.raises(Empty):
        run(voila_serve.get_msg_in_slices(Channel(sock), timeout=0.5))
    took = time.monotonic() - t0
    assert 0.5 <= took < 1.2 and all(ms <= voila_serve.SLICE_S * 1000 for ms in sock.polls)
    assert len(sock.polls) >= 3  # 0.5 s in slices of 0.2 s


def test_install_patches_the_asyncio_channels_of_this_process(monkeypatch):
    monkeypatch.setattr(AsyncZMQSocketChannel, "get_msg", AsyncZMQSocketChannel.get_msg)
    voila_serve.install()
    assert AsyncZMQSocketChannel.get_msg is voila_serve.get_msg_in_slices
