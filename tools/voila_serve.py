"""Voila, with the one repair the presentation view needs: kernel replies that arrive unnoticed.

    python tools/voila_serve.py VIEW.ipynb [voila options]     # what ./run.sh present runs

Voila runs a view's cells with nbclient, which awaits each cell's ``execute_reply`` on the kernel's shell
channel through pyzmq's asyncio integration. That integration watches ZeroMQ's *edge-triggered* file
descriptor, and now and then the wake-up for a message that has already arrived is lost (the class of
bug of zeromq/pyzmq#1203 and #2173). With no timeout, nbclient then waits for ever: the view stops at
that cell, and every cell below it stays a grey skeleton. We measured it on this project's views with
Chromium while two other jobs loaded the 2 cores: the views of labs 02 and 04 stopped in 12 of 26 loads.
With the repair below, none of 25 loads stopped (14 of labs 02 and 04, then the browser tests' views of
every lab), and a log showed 5 replies in 6 loads that only the repair had found.

The repair: a channel waits in slices of :data:`SLICE_S`. When a slice ends, pyzmq's ``poll`` asks the
socket itself, which sees a message whose wake-up was lost, so a lost wake-up costs at most one slice
instead of the lecture. A timeout asked for is kept (the last slice is shortened to it). Nothing else in
Voila or the kernel changes.
"""

from __future__ import annotations

import sys
import time
from queue import Empty

#: how long a channel waits before it asks the socket again (the most a lost wake-up can cost)
SLICE_S = 0.2


async def get_msg_in_slices(self, timeout: float | None = None) -> dict:
    """``AsyncZMQSocketChannel.get_msg``, waiting in slices so that a lost wake-up is found."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        left = SLICE_S if deadline is None else max(0.0, deadline - time.monotonic())
        if await self.socket.poll(int(min(SLICE_S, left) * 1000)):
            return await self._recv()
        if deadline is not None and time.monotonic() >= deadline:
            raise Empty


def install() -> None:
    """Make every asyncio kernel channel of this process wait in slices."""
    from jupyter_client.channels import AsyncZMQSocketChannel

    AsyncZMQSocketChannel.get_msg = get_msg_in_slices


def main(argv: list[str] | None = None) -> int:
    install()
    from voila.app import main as voila_main

    sys.argv = ["voila", *(sys.argv[1:] if argv is None else argv)]
    return voila_main() or 0


if __name__ == "__main__":
    sys.exit(main())
