"""Security without I/O: principals, SSL principal mapping, TLS contexts built from configs, SASL
mechanisms as sans-io exchanges and SCRAM credentials (authentication); Kafka's ACL model and the
authorizer's decision function (authorization). Nothing here opens a socket; kafkapy.server drives
these objects from its connections."""
