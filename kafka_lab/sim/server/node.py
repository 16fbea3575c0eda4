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
comparison).

A process can also be *paused* (a stop-the-world garbage collection, a VM frozen by its host):
:meth:`Node.pause` holds every thread at the gate when it next wakes (the event it waited for has come;
it does not see it yet), and every timer that comes due is held too; :meth:`Node.resume` lets them all go
on, each with what it had in hand, in the order they came due, as a JVM does after a long GC. Nothing of
the process is lost by a pause: its sockets stay open (its peers' requests wait in them, unread), its
memory is as it was. Code that runs on behalf of the process from outside a thread (a response's
callback, run by the peer that answers) passes :meth:`Node.deferred`, which holds it the same way. A
process stopped while paused (a crash during a GC) ends as any stop does.

Simplification: Kafka's shutdown stops its components one after another over a few milliseconds
(socket server, handlers, replica manager, controller, ZooKeeper session); the model ends them all at
one instant.
"""

from __future__ import annotations

from simpy import Interrupt

__all__ = ["Node", "ProcessStopped", "PEER_REQUEST_TIMEOUT_MS", "check_pause_length"]

#: a peer's request timeout (2.8 and 4.0: the clients' ``request.timeout.ms``, the follower's
#: ``replica.socket.timeout.ms``, 2.8's controller channel's ``controller.socket.timeout.ms``, all 30000): a pause this
#: long would time out its peers' requests, which the model's peers do not have; both modes' pauses stop short of it
PEER_REQUEST_TIMEOUT_MS = 30000.0


def check_pause_length(for_ms: float) -> None:
    """A stop-the-world pause the model holds: shorter than :data:`PEER_REQUEST_TIMEOUT_MS` (``for_ms`` already a
    time in ms), else a ValueError that says why."""
    if for_ms >= PEER_REQUEST_TIMEOUT_MS:
        raise ValueError(
            f"a pause of {for_ms} ms is past what the model holds: its peers' requests to the paused broker would "
            f"time out after {PEER_REQUEST_TIMEOUT_MS:.0f} ms (request.timeout.ms, replica.socket.timeout.ms, "
            "controller.socket.timeout.ms in 2.8) and the model's peers have no request timeout; pause less"
        )


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
        node = self.node
        if node.incarnation != self.incarnation:
            return
        if node.paused:  # held at the gate until the process resumes
            node._held.append((self, event))
            return
        self.callback(event)


class Node:
    """One broker's process: its incarnation, and the threads and timers that belong to it."""

    __slots__ = (
        "env",
        "name",
        "incarnation",
        "alive",
        "paused",
        "on_stop",
        "on_resume",
        "_threads",
        "_held",
        "_resumed",
    )

    def __init__(self, env, name: str):
        self.env = env
        self.name = name
        self.incarnation = 1  # grows by one at each stop: nothing of an ended process matches it again
        self.alive = True
        self.paused = False  # a stop-the-world pause: every thread and timer holds at the gate
        self.on_stop: list = []  # callables run when an incarnation ends, after its threads are stopped
        self.on_resume: list = []  # callables run when a pause ends, after the held timers and callbacks
        self._threads: set = set()  # the simpy processes of the running incarnation
        self._held: list = []  # (timer or callback, its argument) that came due during a pause, in order
        self._resumed = None  # the event the threads held at the gate wait for

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
            while self.paused:  # started during a pause: it begins when the process resumes
                try:
                    yield self._resumed
                except Interrupt:
                    return
            if self.incarnation != incarnation:
                return
            event = next(gen)
            while True:
                try:
                    value = yield event
                except Interrupt:
                    return  # its process stopped while it waited
                except BaseException as exc:  # the event failed: the thread's own concern, if it still runs
                    if self.incarnation != incarnation:
                        return
                    while self.paused and not isinstance(exc, GeneratorExit):
                        try:
                            yield self._resumed
                        except Interrupt:
                            return
                    event = gen.throw(exc)
                    continue
                while self.paused and self.incarnation == incarnation:  # the gate: held until the pause ends
                    try:
                        yield self._resumed
                    except Interrupt:
                        return
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

    def deferred(self, callback):
        """``callback`` wrapped for a caller outside the process (a response's ``on_done``, run by the peer that
        answers): called at once while this incarnation runs, held until the pause ends while it is paused,
        dropped once the incarnation has ended."""
        return _Timer(self, self.incarnation, callback)

    def gate(self):
        """For a simpy generator that acts for this process without being one of its threads: ``yield from
        node.gate()`` holds it while the process is paused (nothing to wait for otherwise)."""
        while self.paused:
            yield self._resumed

    def pause(self) -> None:
        """A stop-the-world pause begins: every thread holds at the gate when it next wakes, every timer and
        deferred callback that comes due is held (see the module)."""
        if not self.alive:
            raise RuntimeError(f"{self.name} is not running: its process cannot be paused")
        if self.paused:
            return
        self.paused = True
        self._resumed = self.env.event()

    def resume(self) -> None:
        """The pause ends: the held timers and callbacks run in the order they came due, the held threads go on
        (each with the event it had waited for), then the ``on_resume`` hooks run."""
        if not self.paused:
            return
        self.paused = False
        resumed, self._resumed = self._resumed, None
        held, self._held = self._held, []
        for timer, event in held:
            timer(event)
        resumed.succeed()
        for hook in list(self.on_resume):
            hook()

    def stop(self) -> None:
        """End the running incarnation: its threads stop where they wait, its timers are void, then the
        ``on_stop`` hooks run."""
        if not self.alive:
            return
        self.alive = False
        self.incarnation += 1
        self.paused, self._held = False, []  # a pause ends with its process; what it held is gone
        resumed, self._resumed = self._resumed, None
        active = self.env.active_process
        threads, self._threads = self._threads, set()
        for proc in threads:
            if proc.is_alive and proc is not active:
                proc.interrupt(_STOPPED)
        if resumed is not None:
            resumed.succeed()  # a thread started during the pause, not yet begun, sees the new incarnation
        for hook in list(self.on_stop):
            hook()

    def start(self) -> None:
        """Begin the next incarnation (its owner then starts its threads)."""
        if self.alive:
            raise RuntimeError(f"{self.name} is already running")
        self.alive = True
