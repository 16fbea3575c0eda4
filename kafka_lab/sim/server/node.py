"""A broker's process: the one gate every thread and timer of a broker passes.

A Kafka broker is one JVM process, and all its threads live and die with it: the network processors,
the request handlers, the replica fetchers, the AlterIsr sender, the ``isr-expiration`` scheduler, the
purgatories' expiration reapers. When the process stops (``KafkaServer.shutdown``, after the controlled
shutdown) every thread ends and what it had in hand goes with it: a request read but not handled, a
produce parked in purgatory, an ISR change not yet sent. Every socket closes with it, so its peers see
disconnections (``NetworkClient.handleDisconnections``), and a new connection to it is refused. When it
starts again it is a *new* process: new threads, new sockets, and of the last one only what is on disk
(its logs).

:class:`Node` is that process in the model, one *incarnation* at a time:

- every simulated thread of a broker is started with :meth:`Node.thread` and every timer armed with
  :meth:`Node.timer`. A thread is resumed only while the incarnation that started it lives; a timer
  fires only in its own incarnation;
- :meth:`Node.stop` ends the incarnation: each thread is interrupted where it waits and never resumes,
  each timer armed before is void, and the ``on_stop`` hooks run (the broker closes its sockets there);
- :meth:`Node.start` begins the next incarnation, whose threads the broker starts afresh.

So nothing else in the broker asks whether it is up: a thread that is not running cannot handle, send
or append anything. Every broker thread passes the same gate after each wait (the check is one integer
comparison), which is also where a thread would hold still if its process were paused rather than ended.

Simplification: Kafka's shutdown stops its components one after another over a few milliseconds
(socket server, handlers, replica manager, controller, ZooKeeper session); the model ends them all at
one instant.
"""

from __future__ import annotations

from simpy import Interrupt

__all__ = ["Node", "ProcessStopped"]


class ProcessStopped:
    """The cause of the interrupt a thread gets when its process stops."""

    def __repr__(self) -> str:
        return "ProcessStopped()"


_STOPPED = ProcessStopped()


class _Timer:
    """A timer's callback, called only in the incarnation that armed it (a slotted object: a busy broker has
    thousands of timers pending, one per parked follower fetch)."""

    __slots__ = ("node", "incarnation", "callback")

    def __init__(self, node, incarnation: int, callback):
        self.node = node
        self.incarnation = incarnation
        self.callback = callback

    def __call__(self, event) -> None:
        if self.node.incarnation == self.incarnation:
            self.callback(event)


class Node:
    """One broker's process: its incarnation, and the threads and timers that belong to it."""

    __slots__ = ("env", "name", "incarnation", "alive", "on_stop", "_threads")

    def __init__(self, env, name: str):
        self.env = env
        self.name = name
        self.incarnation = 1  # grows by one at each stop: nothing of an ended process matches it again
        self.alive = True
        self.on_stop: list = []  # callables run when an incarnation ends, after its threads are stopped
        self._threads: set = set()  # the simpy processes of the running incarnation

    def thread(self, gen):
        """Start ``gen`` (a simpy process generator) as a thread of the running incarnation."""
        if not self.alive:
            gen.close()
            raise RuntimeError(f"{self.name} is not running: its process cannot start a thread")
        proc = self.env.process(self._run(gen, self.incarnation))
        self._threads.add(proc)
        proc.callbacks.append(self._ended)
        return proc

    def _run(self, gen, incarnation: int):
        """Drive ``gen``: after each wait, go on only if its incarnation still runs."""
        try:
            event = next(gen)
            while True:
                try:
                    value = yield event
                except Interrupt:
                    return  # its process stopped while it waited
                except BaseException as exc:  # the event failed: the thread's own concern, if it still runs
                    if self.incarnation != incarnation:
                        return
                    event = gen.throw(exc)
                    continue
                if self.incarnation != incarnation:
                    return  # resumed at the instant its process stopped, before the interrupt came
                event = gen.send(value)
        except StopIteration:
            return
        finally:
            gen.close()

    def _ended(self, proc) -> None:
        self._threads.discard(proc)
        if not proc.ok and isinstance(proc.value, Interrupt):
            proc.defused = True  # interrupted before it first ran: it ends, nothing failed

    def timer(self, delay_ms: float, callback) -> None:
        """``callback(event)`` after ``delay_ms``, if this incarnation still runs then."""
        if not self.alive:
            raise RuntimeError(f"{self.name} is not running: its process cannot arm a timer")
        self.env.timeout(delay_ms).callbacks.append(_Timer(self, self.incarnation, callback))

    def stop(self) -> None:
        """End the running incarnation: its threads stop where they wait, its timers are void, then the
        ``on_stop`` hooks run."""
        if not self.alive:
            return
        self.alive = False
        self.incarnation += 1
        active = self.env.active_process
        threads, self._threads = self._threads, set()
        for proc in threads:
            if proc.is_alive and proc is not active:
                proc.interrupt(_STOPPED)
        for hook in list(self.on_stop):
            hook()

    def start(self) -> None:
        """Begin the next incarnation (its owner then starts its threads)."""
        if self.alive:
            raise RuntimeError(f"{self.name} is already running")
        self.alive = True
