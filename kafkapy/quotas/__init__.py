"""Client quotas as Kafka enforces them, without I/O: sampled rates with Kafka's window
arithmetic (rate.py), the per user/client-id quota managers for produce bytes, fetch bytes and
request time (client_quotas.py), and connection creation rates per IP and broker-wide
(connection_rate.py). kafkapy.server.quota_enforcement drives them from connections."""
