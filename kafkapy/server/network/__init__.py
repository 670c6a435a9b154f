"""The broker's network layer (Kafka's SocketServer and NetworkClient): listeners, the
acceptor and its connection limits, connections and their byte channels (TCP, TLS),
request memory, idle expiry, and the broker-to-broker client connections.
"""
