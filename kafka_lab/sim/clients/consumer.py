"""A consumer of a cluster with its own metadata (Kafka 2.8, reduced).

A :class:`KafkaConsumer` polls each partition's leader every ``poll_interval_ms`` and reads what lies
below the high watermark (``Fetch`` without long poll).

It shares the producer's metadata client (:mod:`.producer`): the same Metadata requests, connection
backoff and KIP-320 epoch check.
"""

from __future__ import annotations

from ..common.options import check_number, check_time
from ..network.request import Request
from .producer import _MetadataClient

__all__ = ["KafkaConsumer"]


class KafkaConsumer(_MetadataClient):
    """Reads every partition of a topic up to its high watermark, polling each leader."""

    def __init__(
        self,
        cluster,
        client_id: str,
        *,
        topic: str,
        poll_interval_ms: float = 50.0,
        retry_backoff_ms: float = 100.0,
        metadata_max_age_ms: float = 300000.0,
    ):
        check_number("poll_interval_ms", poll_interval_ms, least=0, excluded=True)
        check_time("retry_backoff_ms", retry_backoff_ms)
        check_time("metadata_max_age_ms", metadata_max_age_ms)
        super().__init__(
            cluster, client_id, topic=topic, retry_backoff_ms=retry_backoff_ms, metadata_max_age_ms=metadata_max_age_ms
        )
        self.poll_interval_ms = poll_interval_ms
        self.positions: dict = {}
        self.consumed = 0
        self.maybe_refresh()
        self.env.process(self._run())

    def _run(self):
        while True:
            yield self.env.timeout(self.poll_interval_ms)
            per_node: dict = {}
            for tp, (leader, _e) in self.leaders.items():
                if leader >= 0:
                    per_node.setdefault(leader, []).append(tp)
            for bid, tps in per_node.items():
                if self.in_flight.get(bid, 0):
                    continue
                req = Request(
                    "Fetch",
                    0,
                    self.client_id,
                    partitions=tuple(tps),
                    payload={"replica_id": -1, "offsets": {tp: self.positions.get(tp, 0) for tp in tps}},
                    on_done=lambda r, bid=bid: self._answered(r, bid),
                )
                self._send(bid, req)
            if self.update_requested:
                self.maybe_refresh()

    def _answered(self, req, bid) -> None:
        self.in_flight[bid] -= 1
        for tp, (hw, n) in (req.result or {}).items():
            self.consumed += n
            self.positions[tp] = max(self.positions.get(tp, 0), hw)
        if req.partition_errors:
            self.request_update()
