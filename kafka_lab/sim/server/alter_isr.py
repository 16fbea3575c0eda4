"""The AlterIsr channel: a leader's ISR changes go to the controller (Kafka 2.8).

:class:`AlterIsrManager` is ``DefaultAlterIsrManager``: ISR changes a leader wants are queued and sent
to the controller as one ``AlterIsr`` request at a time (through the controller broker's inter-broker
listener); the answer is applied per partition. A failed request (an error, a lost connection, a
refused one) is retried after 50 ms, on a new connection if the old one is closed.

The sender is a thread of the broker's process (:mod:`.node`): when it stops it stops, its connection
closes, and the ISR changes it had not sent are gone.

Simplification: a restarted broker's sender continues the correlation ids of the last process's (Kafka's new
``NetworkClient`` starts again at 0), so that in a broker's request log a client and a correlation id name one
request.
"""

from __future__ import annotations

from itertools import count

from ..network.request import IN_FLIGHT, Request
from ..network.socket_server import ConnectionRefused

__all__ = ["AlterIsrManager", "ALTER_ISR_RETRY_MS"]

#: DefaultAlterIsrManager retries a failed request after 50 ms
ALTER_ISR_RETRY_MS = 50.0


class AlterIsrManager:
    """Sends a broker's ISR changes to the controller: one AlterIsr in flight, changes batched.

    It connects to the controller's endpoint of the listener *this* broker's config names for the controller
    (``MetadataCacheControllerNodeProvider``, 2.8: ``control.plane.listener.name``, else the inter-broker
    listener), which the controller's broker serves on its control plane if it names it too: the control
    plane's two sides, in the other direction."""

    #: the request's name, the client id it is sent under, and the key of its correlation ids on the broker
    API = "AlterIsr"
    CLIENT = "alter-isr"
    CORRELATION = "alter-isr"

    def __init__(self, broker, cluster):
        self.broker = broker
        self.cluster = cluster
        self.env = broker.env
        self.pending: dict = {}  # tp -> (leader_epoch, new isr, zk_version)
        self.in_flight = False
        self.connection = None
        self.client_id = f"broker-{broker.id}-{self.CLIENT}"
        self._correlation = broker.correlation_ids.setdefault(f"broker-{broker.id}-{self.CORRELATION}", count())
        self.sent = 0

    def submit(self, partition, new_isr: list) -> None:
        self.pending[partition.tp] = (partition.leader_epoch, list(new_isr), partition.zk_version)
        self._pump()

    def _controller(self):
        """(the controller's node, the listener to reach it on), or None when there is none to send to: 2.8's
        controller broker, on the listener this broker's config names for it."""
        controller = self.cluster.controller_broker()
        if controller is None:
            return None
        return controller, self.broker.config.controller_to_broker_listener_name

    def _pump(self) -> None:
        if self.in_flight or not self.pending:
            return
        found = self._controller()
        if found is None:
            self.broker.node.timer(ALTER_ISR_RETRY_MS, lambda _e: self._pump())
            return
        controller, listener = found
        if self.connection is None or self.connection.closed or self.connection.broker_id != controller.id:
            try:
                self.connection = controller.connect(
                    listener, self.client_id, client_host=f"10.0.1.{self.broker.id % 250}"
                )
            except ConnectionRefused:  # the controller is not running: try again later
                self.connection = None
                self.broker.node.timer(ALTER_ISR_RETRY_MS, lambda _e: self._pump())
                return
        items, self.pending = self.pending, {}
        self.in_flight = True
        req = Request(
            self.API,
            next(self._correlation),
            self.client_id,
            partitions=tuple(items),
            payload={"broker_id": self.broker.id, "broker_epoch": self.broker.broker_epoch, "items": items},
            on_done=self.broker.node.deferred(self._answered),  # a paused broker reads it when it wakes
        )
        self.sent += 1
        self.cluster.log.append(req)
        self.connection.send(req)

    def close(self) -> None:
        """The process stopped: its connection to the controller closes; the changes not sent are gone."""
        if self.connection is not None:
            self.connection.close()
        self.pending = {}

    def _answered(self, req) -> None:
        self.in_flight = False
        rm = self.broker.replica_manager
        if req.error not in ("NONE", IN_FLIGHT) or req.result is None:
            for tp, item in req.payload["items"].items():  # retry the whole batch later
                self.pending.setdefault(tp, item)
            self.broker.node.timer(ALTER_ISR_RETRY_MS, lambda _e: self._pump())
            return
        for tp, (err, isr, epoch, version) in req.result.items():
            rm.isr_changed(tp, isr, epoch, version, err)
        self._pump()
