"""What the broker's config definitions do not hold: kafkapy's one-line description of each broker
config it acts on, for the generated configuration reference (docs/hooks/config_reference.py).
The first element of each entry is kept for reading convenience; the importance the reference
shows is Kafka 4.4's, from the definition table.

Names, types, defaults, valid values, importance, update modes and what is not applied come from
the broker's own definitions (kafkapy/server/config/config_definitions.tsv, checked against the
Kafka 4.4 jars); the reference refuses to build when a config kafkapy acts on has no entry here,
or an entry here names no config, so this table cannot fall behind the broker silently. Topic and
group configs have their descriptions in the broker (DescribeConfigs serves them); broker
synonyms of topic configs take the topic config's description, and configs the broker accepts
without acting on them take the broker's stated reason.
"""

from __future__ import annotations

# name -> (importance, description)
DESCRIPTIONS: dict[str, tuple[str, str]] = {
    # --- the broker, its listeners and log directories ---
    "broker.id": ("high", "The broker's id, unique in the cluster (a negative value asks for a "
                  "generated one in ZooKeeper mode, with broker.id.generation.enable)."),
    "node.id": ("high", "An alias of broker.id (the KRaft-era name)."),
    "broker.id.generation.enable": ("medium", "Whether a broker without an id gets one "
                                    "generated above reserved.broker.max.id."),
    "reserved.broker.max.id": ("medium", "The largest id a broker may be given by hand."),
    "broker.rack": ("medium", "The broker's rack, used to spread replicas across racks."),
    "listeners": ("high", "The listeners to bind, as NAME://host:port, comma-separated."),
    "advertised.listeners": ("high", "The addresses registered for clients and other brokers, "
                             "per listener name (default: listeners)."),
    "listener.security.protocol.map": ("low", "Listener name to security protocol (PLAINTEXT, "
                                       "SSL, SASL_PLAINTEXT, SASL_SSL)."),
    "inter.broker.listener.name": ("medium", "The listener brokers use to reach each other."),
    "security.inter.broker.protocol": ("medium", "The security protocol brokers use to reach "
                                       "each other, when inter.broker.listener.name is not "
                                       "set."),
    "log.dirs": ("high", "The directories partitions are stored in, comma-separated."),
    "log.dir": ("high", "The log directory, when log.dirs is not set (the default is "
                "kafkapy's; Kafka's is /tmp/kafka-logs)."),
    "controlled.shutdown.enable": ("medium", "Whether a stopping broker first moves its "
                                   "leaderships to other replicas."),
    "request.timeout.ms": ("high", "How long the broker waits for other brokers to answer, "
                           "and how long WriteTxnMarkers waits for the ISR."),
    "num.network.threads": ("high", "Kafka's network thread count. kafkapy runs one event "
                            "loop: accepted and validated, not applied."),
    "num.io.threads": ("high", "Kafka's request handler thread count. kafkapy runs one event "
                       "loop: accepted and validated, not applied."),
    "num.recovery.threads.per.data.dir": ("high", "Kafka's log recovery thread count per log "
                                          "directory: accepted and validated, not applied."),
    "background.threads": ("high", "Kafka's background thread count: accepted and "
                           "validated, not applied."),
    "queued.max.requests": ("high", "Kafka's request queue length: accepted and validated, "
                            "not applied (queued.max.request.bytes bounds request memory)."),
    # --- network and memory limits ---
    "socket.request.max.bytes": ("high", "The largest request the broker accepts, in bytes."),
    "socket.send.buffer.bytes": ("high", "SO_SNDBUF of client connections (-1: the OS "
                                 "default)."),
    "socket.receive.buffer.bytes": ("high", "SO_RCVBUF of client connections (-1: the OS "
                                    "default)."),
    "connections.max.idle.ms": ("medium", "A connection with no byte received or sent for "
                                "this long is closed."),
    "max.connections": ("medium", "The most connections the broker accepts; at the limit new "
                        "ones wait in the listen backlog."),
    "max.connections.per.ip": ("medium", "The most connections from one address; more are "
                               "closed at once."),
    "max.connections.per.ip.overrides": ("medium", "Per-address limits overriding "
                                         "max.connections.per.ip, as host:count,..."),
    "max.connection.creation.rate": ("medium", "New connections per second the broker "
                                     "accepts; faster ones are delayed."),
    "queued.max.request.bytes": ("medium", "Memory for received requests; with it used up a "
                                 "connection stops reading (-1: unbounded)."),
    "connection.failed.authentication.delay.ms": ("low", "How long a failed login waits "
                                                  "before it is answered and closed."),
    "connections.max.reauth.ms": ("medium", "Session lifetime after which clients "
                                  "re-authenticate (KIP-368; 0: never)."),
    "delegation.token.secret.key": ("medium", "The key delegation tokens' HMACs are made "
                                    "with (HMAC-SHA512), the same on every broker; without it "
                                    "tokens are disabled."),
    "delegation.token.max.lifetime.ms": ("medium", "The longest a token can live; a request "
                                         "may ask for less."),
    "delegation.token.expiry.time.ms": ("medium", "How long a token lives after its creation or "
                                        "a renewal, unless a shorter period is asked for."),
    "delegation.token.expiry.check.interval.ms": ("low", "How often the controller removes "
                                                  "expired tokens."),
    # --- topics and logs ---
    "num.partitions": ("medium", "Partitions of a topic created without a count (auto-created "
                       "or CreateTopics with -1)."),
    "default.replication.factor": ("medium", "Replication factor of a topic created without "
                                   "one."),
    "auto.create.topics.enable": ("high", "Whether Metadata and Produce create a topic that "
                                  "does not exist."),
    "delete.topic.enable": ("high", "Whether DeleteTopics may delete topics."),
    "message.max.bytes": ("high", "The largest record batch a topic accepts (broker default "
                          "of max.message.bytes)."),
    "fetch.max.bytes": ("medium", "The most bytes one Fetch response returns."),
    "max.incremental.fetch.session.cache.slots": ("medium", "Fetch sessions (KIP-227) the "
                                                  "broker keeps."),
    "log.segment.bytes": ("high", "The size at which a segment is rolled (broker default of "
                          "segment.bytes)."),
    "log.roll.ms": ("high", "The time after which a segment is rolled (broker default of "
                    "segment.ms; overrides log.roll.hours)."),
    "log.roll.hours": ("high", "log.roll.ms in hours."),
    "log.index.interval.bytes": ("medium", "Bytes of records between offset index entries."),
    "log.index.size.max.bytes": ("medium", "The size of a segment's offset index."),
    "log.retention.ms": ("high", "How long records are kept (broker default of retention.ms; "
                         "-1: forever; overrides minutes and hours)."),
    "log.retention.minutes": ("high", "log.retention.ms in minutes (overrides hours)."),
    "log.retention.hours": ("high", "log.retention.ms in hours."),
    "log.retention.bytes": ("high", "The largest size of a partition before old segments are "
                            "deleted (-1: no limit)."),
    "log.retention.check.interval.ms": ("medium", "How often retention deletes old "
                                        "segments."),
    "log.cleanup.policy": ("medium", "delete and/or compact (broker default of "
                           "cleanup.policy)."),
    "log.cleaner.enable": ("medium", "Whether the log cleaner compacts topics."),
    "log.preallocate": ("medium", "Whether segment files are preallocated."),
    "log.message.timestamp.type": ("medium", "CreateTime or LogAppendTime (broker default "
                                   "of message.timestamp.type)."),
    "compression.type": ("high", "The codec batches are stored with, or producer."),
    "min.insync.replicas": ("high", "In-sync replicas an acks=all write needs."),
    "unclean.leader.election.enable": ("high", "Whether a replica outside the ISR may become "
                                       "leader."),
    "log.flush.interval.messages": ("high", "fsync a log after this many records."),
    "log.flush.interval.ms": ("high", "fsync a log after this many milliseconds (default: "
                              "log.flush.scheduler.interval.ms)."),
    "log.flush.scheduler.interval.ms": ("high", "How often logs are checked for a flush "
                                        "due."),
    "log.flush.offset.checkpoint.interval.ms": ("high", "How often recovery points are "
                                                "checkpointed."),
    "log.flush.start.offset.checkpoint.interval.ms": ("high", "How often log start offsets "
                                                      "are checkpointed."),
    "log.cleaner.threads": ("medium", "Kafka's cleaner thread count. kafkapy cleans in one "
                            "process of its own: stored, not applied."),
    "log.cleaner.dedupe.buffer.size": ("medium", "Memory for the cleaner's offset map."),
    "log.cleaner.io.buffer.size": ("medium", "The cleaner's I/O buffer size."),
    "log.cleaner.io.buffer.load.factor": ("medium", "How full the cleaner's offset map may "
                                          "get."),
    "log.cleaner.io.max.bytes.per.second": ("medium", "The cleaner's I/O rate limit, applied "
                                            "and changeable at run time."),
    "log.cleaner.backoff.ms": ("medium", "How long the cleaner sleeps when there is nothing "
                               "to clean."),
    # --- replication ---
    "replica.fetch.max.bytes": ("medium", "Bytes a follower asks per partition."),
    "replica.fetch.min.bytes": ("high", "Bytes a follower's fetch waits for."),
    "replica.fetch.wait.max.ms": ("high", "How long a follower's fetch waits on the leader."),
    "replica.fetch.response.max.bytes": ("medium", "Bytes a follower asks per fetch."),
    "replica.lag.time.max.ms": ("high", "A follower that has not caught up for this long "
                                "leaves the ISR."),
    "replica.socket.timeout.ms": ("high", "The socket timeout of a follower's fetches."),
    "replica.high.watermark.checkpoint.interval.ms": ("high", "How often high watermarks are "
                                                      "checkpointed."),
    "num.replica.fetchers": ("high", "Kafka's fetcher thread count per source broker: "
                             "accepted and validated, not applied."),
    # --- ZooKeeper ---
    "zookeeper.connect": ("high", "host:port[,...][/chroot] of ZooKeeper; unset: the "
                          "embedded metadata store."),
    "zookeeper.session.timeout.ms": ("high", "The ZooKeeper session timeout."),
    "zookeeper.connection.timeout.ms": ("high", "How long to wait for ZooKeeper at start "
                                        "(default: the session timeout)."),
    "zookeeper.max.in.flight.requests": ("high", "Unanswered ZooKeeper requests allowed."),
    # --- groups and offsets ---
    "offsets.topic.num.partitions": ("high", "Partitions of __consumer_offsets."),
    "offsets.topic.replication.factor": ("high", "Replication factor of __consumer_offsets."),
    "offsets.topic.segment.bytes": ("high", "Segment size of __consumer_offsets."),
    "offsets.retention.minutes": ("high", "How long an empty group's committed offsets are "
                                  "kept."),
    "offsets.retention.check.interval.ms": ("high", "How often expired offsets are removed."),
    "offsets.commit.timeout.ms": ("high", "How long a commit waits for __consumer_offsets' "
                                  "replicas."),
    "offset.metadata.max.bytes": ("high", "The largest metadata string of a committed "
                                  "offset."),
    "group.initial.rebalance.delay.ms": ("medium", "How long a new group waits for more "
                                         "members before its first rebalance."),
    "group.min.session.timeout.ms": ("medium", "The shortest session timeout a classic "
                                     "group member may ask for."),
    "group.max.session.timeout.ms": ("medium", "The longest session timeout a classic group "
                                     "member may ask for."),
    "group.max.size": ("medium", "The most members of a classic group."),
    "group.consumer.session.timeout.ms": ("medium", "The session timeout of consumer "
                                          "protocol members (KIP-848)."),
    "group.consumer.min.session.timeout.ms": ("medium", "The lower bound of "
                                              "group.consumer.session.timeout.ms."),
    "group.consumer.max.session.timeout.ms": ("medium", "The upper bound of "
                                              "group.consumer.session.timeout.ms."),
    "group.consumer.heartbeat.interval.ms": ("medium", "The heartbeat interval of consumer "
                                             "protocol members."),
    "group.consumer.min.heartbeat.interval.ms": ("medium", "The lower bound of "
                                                 "group.consumer.heartbeat.interval.ms."),
    "group.consumer.max.heartbeat.interval.ms": ("medium", "The upper bound of "
                                                 "group.consumer.heartbeat.interval.ms."),
    "group.consumer.assignors": ("medium", "The server-side assignors of the consumer "
                                 "protocol, the first the default."),
    "group.consumer.max.size": ("medium", "The most members of a consumer protocol group."),
    "group.consumer.migration.policy": ("medium", "Whether groups migrate online between the "
                                        "classic and consumer protocols."),
    "group.streams.session.timeout.ms": ("medium", "The session timeout of streams group "
                                         "members (KIP-1071)."),
    "group.streams.min.session.timeout.ms": ("medium", "The lower bound of "
                                             "group.streams.session.timeout.ms."),
    "group.streams.max.session.timeout.ms": ("medium", "The upper bound of "
                                             "group.streams.session.timeout.ms."),
    "group.streams.heartbeat.interval.ms": ("medium", "The heartbeat interval of streams group "
                                            "members."),
    "group.streams.min.heartbeat.interval.ms": ("medium", "The lower bound of "
                                                "group.streams.heartbeat.interval.ms."),
    "group.streams.max.heartbeat.interval.ms": ("medium", "The upper bound of "
                                                "group.streams.heartbeat.interval.ms."),
    "group.streams.max.size": ("medium", "The most members of a streams group."),
    "group.streams.num.standby.replicas": ("medium", "The standby replicas of each task of a "
                                           "streams group."),
    "group.streams.max.standby.replicas": ("medium", "The upper bound of "
                                           "group.streams.num.standby.replicas."),
    "group.streams.initial.rebalance.delay.ms": ("medium", "How long the first assignment of an "
                                                 "empty streams group waits for more members."),
    "group.streams.assignment.interval.ms": ("medium", "The least time between two task "
                                             "assignments of a streams group."),
    # --- share groups (KIP-932) ---
    "group.share.session.timeout.ms": ("medium", "The session timeout of share group members."),
    "group.share.min.session.timeout.ms": ("medium", "The lower bound of "
                                           "share.session.timeout.ms."),
    "group.share.max.session.timeout.ms": ("medium", "The upper bound of "
                                           "share.session.timeout.ms."),
    "group.share.heartbeat.interval.ms": ("medium", "The heartbeat interval of share group "
                                          "members."),
    "group.share.min.heartbeat.interval.ms": ("medium", "The lower bound of "
                                              "share.heartbeat.interval.ms."),
    "group.share.max.heartbeat.interval.ms": ("medium", "The upper bound of "
                                              "share.heartbeat.interval.ms."),
    "group.share.max.size": ("medium", "The most members of a share group."),
    "group.share.assignors": ("medium", "The share groups' server-side assignor (simple)."),
    "group.share.record.lock.duration.ms": ("medium", "How long a share consumer holds an "
                                            "acquired record."),
    "group.share.min.record.lock.duration.ms": ("medium", "The lower bound of "
                                                "share.record.lock.duration.ms."),
    "group.share.max.record.lock.duration.ms": ("medium", "The upper bound of "
                                                "share.record.lock.duration.ms."),
    "group.share.delivery.count.limit": ("medium", "Deliveries of a record before it is "
                                         "archived."),
    "group.share.min.delivery.count.limit": ("medium", "The lower bound of "
                                             "share.delivery.count.limit."),
    "group.share.max.delivery.count.limit": ("medium", "The upper bound of "
                                             "share.delivery.count.limit."),
    "group.share.partition.max.record.locks": ("medium", "The most in-flight records of a "
                                               "share-partition."),
    "group.share.min.partition.max.record.locks": ("medium", "The lower bound of "
                                                   "share.partition.max.record.locks."),
    "group.share.max.partition.max.record.locks": ("medium", "The upper bound of "
                                                   "share.partition.max.record.locks."),
    "group.share.max.share.sessions": ("medium", "The most share sessions of the broker."),
    "share.coordinator.state.topic.num.partitions": ("high", "Partitions of "
                                                     "__share_group_state."),
    "share.coordinator.state.topic.replication.factor": ("high", "Replication factor of "
                                                         "__share_group_state (capped at the "
                                                         "live brokers with the embedded "
                                                         "store)."),
    "share.coordinator.state.topic.segment.bytes": ("high", "Segment size of "
                                                    "__share_group_state."),
    "share.coordinator.state.topic.min.isr": ("high", "min.insync.replicas of "
                                              "__share_group_state."),
    # --- transactions and producers ---
    "transaction.state.log.num.partitions": ("high", "Partitions of __transaction_state."),
    "transaction.state.log.replication.factor": ("high", "Replication factor of "
                                                 "__transaction_state (capped at the live "
                                                 "brokers with the embedded store)."),
    "transaction.state.log.min.isr": ("high", "min.insync.replicas of __transaction_state."),
    "transaction.state.log.segment.bytes": ("high", "Segment size of __transaction_state."),
    "transactional.id.expiration.ms": ("high", "How long an idle transactional id is kept."),
    "transaction.max.timeout.ms": ("high", "The longest transaction timeout a producer may "
                                   "ask for."),
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": ("low", "How often "
                                                                    "timed-out transactions "
                                                                    "are aborted."),
    "transaction.remove.expired.transaction.cleanup.interval.ms": ("low", "How often expired "
                                                                   "transactional ids are "
                                                                   "removed."),
    "transaction.partition.verification.enable": ("low", "Whether leaders verify a "
                                                  "producer's first transactional write with "
                                                  "its coordinator (KIP-890)."),
    "producer.id.expiration.ms": ("low", "How long a partition remembers an idle producer "
                                  "without an open transaction."),
    # --- quotas ---
    "quota.window.num": ("low", "Samples kept by client quota rates."),
    "quota.window.size.seconds": ("low", "The span of one client quota sample."),
    # --- security ---
    "ssl.keystore.type": ("medium", "PEM or PKCS12 (JKS is refused with a hint)."),
    "ssl.keystore.location": ("high", "The key store file: for PEM the private key, then the "
                              "certificate chain."),
    "ssl.keystore.password": ("high", "The PKCS12 key store's password."),
    "ssl.key.password": ("high", "The password of the private key, if encrypted."),
    "ssl.keystore.key": ("high", "The private key as PEM text, instead of a file."),
    "ssl.keystore.certificate.chain": ("high", "The certificate chain as PEM text, instead of "
                                       "a file."),
    "ssl.truststore.type": ("medium", "PEM or PKCS12."),
    "ssl.truststore.location": ("high", "The CA certificates trusted for peers' "
                                "certificates."),
    "ssl.truststore.password": ("high", "The PKCS12 trust store's password."),
    "ssl.truststore.certificates": ("high", "Trusted CA certificates as PEM text."),
    "ssl.client.auth": ("medium", "Whether clients are asked for certificates."),
    "ssl.enabled.protocols": ("medium", "The TLS versions served."),
    "ssl.cipher.suites": ("medium", "The cipher suites served (IANA or OpenSSL names; empty: "
                          "the defaults)."),
    "ssl.endpoint.identification.algorithm": ("low", "https: a peer broker's certificate must "
                                              "name its host."),
    "ssl.principal.mapping.rules": ("low", "Rules mapping a certificate's subject DN to the "
                                    "principal name."),
    "sasl.enabled.mechanisms": ("medium", "PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER "
                                "(GSSAPI is not served)."),
    "sasl.server.callback.handler.class": ("medium", "Per listener and mechanism: OAUTHBEARER's "
                                           "OAuthBearerValidatorCallbackHandler checks JWTs "
                                           "against a JWKS; unset, Kafka's unsecured validator."),
    "sasl.oauthbearer.jwks.endpoint.url": ("medium", "The OAuth/OIDC provider's JWKS (https, http "
                                           "or file URL; allowed by the system property "
                                           "org.apache.kafka.sasl.oauthbearer.allowed.urls)."),
    "sasl.oauthbearer.jwks.endpoint.refresh.ms": ("low", "How often the JWKS is fetched again."),
    "sasl.oauthbearer.jwks.endpoint.retry.backoff.ms": ("low", "The first wait before a failed "
                                                        "JWKS fetch is retried."),
    "sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms": ("low", "How long a JWKS fetch is "
                                                            "retried, with growing waits."),
    "sasl.oauthbearer.expected.audience": ("high", "The audiences a token's aud must name one "
                                           "of."),
    "sasl.oauthbearer.expected.issuer": ("high", "The issuer a token's iss must be."),
    "sasl.oauthbearer.allow.unverified.audience": ("medium", "true: accept tokens whatever their "
                                                   "audience (expected.audience unset)."),
    "sasl.oauthbearer.allow.unverified.issuer": ("medium", "true: accept tokens whatever their "
                                                 "issuer (expected.issuer unset)."),
    "sasl.oauthbearer.clock.skew.seconds": ("low", "The clock skew allowed when checking a "
                                            "token's exp, nbf and iat."),
    "sasl.oauthbearer.sub.claim.name": ("low", "The claim naming a token's principal."),
    "sasl.oauthbearer.scope.claim.name": ("low", "The claim holding a token's scope."),
    "sasl.mechanism.inter.broker.protocol": ("medium", "The SASL mechanism brokers log in to "
                                             "each other with."),
    "sasl.jaas.config": ("medium", "JAAS login settings: PLAIN's users, the broker's own "
                         "credentials (usually per listener and mechanism)."),
    "ssl.protocol": ("medium", "The TLS protocol of listener contexts (TLSv1.3 allows 1.2 too)."),
    "ssl.keymanager.algorithm": ("low", "The key manager algorithm (a Java name; kafkapy's TLS "
                                 "uses OpenSSL and accepts the default)."),
    "ssl.trustmanager.algorithm": ("low", "The trust manager algorithm (a Java name; kafkapy's "
                                   "TLS uses OpenSSL and accepts the default)."),
    "sasl.server.max.receive.size": ("low", "The largest SASL message read before "
                                     "authentication."),
    "authorizer.class.name": ("low", "kafka.security.authorizer.AclAuthorizer (or "
                              "StandardAuthorizer's name) turns ACLs on; empty: everything is "
                              "allowed."),
    "super.users": ("-", "Principals that may do anything, separated by ';' (the ACL "
                    "authorizer's setting)."),
    "allow.everyone.if.no.acl.found": ("-", "Whether a resource without any ACL is open to "
                                       "everyone (the ACL authorizer's setting)."),
}
