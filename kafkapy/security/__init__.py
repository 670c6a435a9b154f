"""Security without I/O: principals, SSL principal mapping, TLS contexts built from configs, SASL
mechanisms as sans-io exchanges and SCRAM credentials (authentication); Kafka's ACL model and the
authorizer's decision function (authorization). Nothing here opens a socket; kafkapy.server drives
these objects from its connections.

What a request handler knows about who sent it (the seam authorization builds on): every
``RequestContext`` carries the connection's :class:`~kafkapy.security.session.Session` as
``ctx.session`` (listener name, security protocol, client host and port, SASL mechanism) and its
principal as ``ctx.principal`` (a :class:`~kafkapy.security.principal.KafkaPrincipal`:
``User:ANONYMOUS`` on PLAINTEXT and on SSL without a client certificate, ``User:<mapped DN>`` for a
client certificate, ``User:<name>`` after SASL). ACL principals parse with
:func:`~kafkapy.security.principal.parse_principal`; ``User:*`` is
:data:`~kafkapy.security.principal.WILDCARD`.
"""
