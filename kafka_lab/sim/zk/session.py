"""A broker's ZooKeeper session, as the cluster's faults need it (Kafka 2.8, ZooKeeper mode).

Every broker holds one ZooKeeper session; its registration ``/brokers/ids/<id>`` is an ephemeral znode of
that session, and so is ``/controller`` while the broker is the controller. The ZooKeeper client keeps the
session alive with a ping when it has sent nothing for a third of ``zookeeper.session.timeout.ms``
(18000 in 2.8, ``KafkaConfig``); the server ends a session it has not heard from for the whole timeout,
deletes its ephemeral znodes and fires the watches set on them: the controller's on
``/brokers/ids`` (``BrokerChangeHandler``, then ``onBrokerFailure``) and every broker's on ``/controller``
(a new election).

- a **controlled shutdown** closes the session: its znodes go at once (:meth:`ZkSessions.close`);
- a **crash** stops the pings: the session, and the broker's place in the cluster, outlive the process
  by the session timeout (:meth:`ZkSessions.silent`, then the expiry);
- a **pause** stops them too, but the process is still there: when it wakes after its session expired,
  its client reconnects and is told ``Expired`` (``ZooKeeperClient``: ``scheduleReinitialize``), the
  controller's ``Expire`` event resigns whatever it still believed, and a new session registers the broker
  again with a new broker epoch (``RegisterBrokerAndReelect``); a pause shorter than the timeout leaves the
  session as it was.

Simplifications: the server hears a client last at the instant it stops (Kafka's last ping may be up to a
third of the timeout earlier, so a real session can expire a little sooner), and expiry is exact (the server
checks in ``tickTime`` buckets). ZooKeeper's own data tree is :mod:`.zookeeper`; here only the sessions'
lives are kept, and the tree is told when one ends (:attr:`ZkSessions.on_ended`: the controller closes the
broker's session there, and ``/controller`` goes with it when it held it). The registrations ``/brokers/ids/<id>``
are not in the tree yet, and the broker epoch is a counter, not their ``czxid`` (docs/architecture.md).
"""

from __future__ import annotations

__all__ = ["ZkSessions", "ZK_SESSION_TIMEOUT_MS"]

#: ``zookeeper.session.timeout.ms``'s default in 2.8 (``Defaults.ZkSessionTimeoutMs``, KafkaConfig; 6000 up to 2.4)
ZK_SESSION_TIMEOUT_MS = 18000


class ZkSessions:
    """Each broker's session: its id (a new one at each registration), and since when ZooKeeper has not heard
    from it (None: its client pings)."""

    def __init__(self, env, brokers: dict, on_expired):
        self.env = env
        self.brokers = brokers
        self.on_expired = on_expired  # called with the broker id when ZooKeeper ends its session
        self.session = dict.fromkeys(brokers, 1)
        self.silent_since: dict = dict.fromkeys(brokers)
        self.expired: dict = dict.fromkeys(brokers, False)
        #: closed cleanly (a controlled shutdown), and not opened again yet: its znodes are gone
        self.closed: dict = dict.fromkeys(brokers, False)
        self.expirations: list = []  # (time_ms, broker id, the session's id)
        #: called with the broker id whenever one of its sessions ends (closed or expired): ZooKeeper's data tree
        #: deletes that session's ephemeral znodes then (the cluster's controller: ``zk_session_ended``)
        self.on_ended = None

    def timeout_ms(self, bid: int) -> float:
        return float(self.brokers[bid].config.zk_session_timeout_ms)

    def silent(self, bid: int) -> None:
        """ZooKeeper hears nothing more from ``bid``'s client (its process crashed or froze): unless it is heard
        from again, its session ends ``zookeeper.session.timeout.ms`` later. (Already silent: unchanged.)"""
        if self.silent_since[bid] is not None or self.expired[bid]:
            return
        since = self.silent_since[bid] = self.env.now
        session = self.session[bid]

        def check(_e):
            if self.session[bid] == session and self.silent_since[bid] == since and not self.expired[bid]:
                self.expired[bid] = True
                self.expirations.append((self.env.now, bid, session))
                if self.on_ended is not None:
                    self.on_ended(bid)
                self.on_expired(bid)

        self.env.timeout(self.timeout_ms(bid)).callbacks.append(check)

    def heard(self, bid: int) -> None:
        """Its client pings again (a pause ended before the timeout): the session lives on."""
        if not self.expired[bid]:
            self.silent_since[bid] = None

    def close(self, bid: int) -> None:
        """A clean close (``KafkaServer.shutdown``): the session ends now; nothing of it expires later."""
        if self.on_ended is not None:
            self.on_ended(bid)
        self.session[bid] += 1
        self.silent_since[bid] = None
        self.expired[bid] = False
        self.closed[bid] = True

    def renew(self, bid: int) -> None:
        """A new session (a start-up, or the client's reinitialization after ``Expired``), and the broker's
        registration ``/brokers/ids/<id>`` in it."""
        self.close(bid)
        self.closed[bid] = False

    def registered(self, bid: int) -> bool:
        """Whether ``/brokers/ids/<bid>`` exists now: its session neither closed nor expired (a crashed broker's
        stays until the session expires). What the controller reads when it handles a ``BrokerChange``."""
        return not self.closed[bid] and not self.expired[bid]
