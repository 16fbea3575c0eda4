"""A broker's network layer, as Kafka's ``kafka.network`` package (``SocketServer``, ``RequestChannel``).

- :mod:`.socket_server`: the acceptor of each listener, the network processors it hands connections to, and a
  connection (one request read at a time, responses sent in order; a closed connection fails what is in flight);
- :mod:`.request_channel`: the bounded request queue between the processors and the request handlers
  (``queued.max.requests``), one per plane;
- :mod:`.request`: the request as it travels (``RequestChannel.Request``), its timestamps, and the request log
  kept of every request, with Kafka's request-log times (``requestQueueTime``, ``localTime``, ...).

The clients and the controller use the same connections and request records to reach a broker. The network
layer knows nothing of what a request asks: that is the server's (:mod:`kafka_lab.sim.server`).
"""
