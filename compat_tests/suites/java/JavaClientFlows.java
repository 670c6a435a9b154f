// Apache Kafka's Java client (producer, consumer groups, AdminClient) against a broker.
//
// Compiled and run by compat_tests/suites/test_java_client.py:
//     java -cp CLASSPATH JavaClientFlows BOOTSTRAP FLOW PREFIX
// FLOW is produce, cooperative, static, consumer-protocol, admin or sessions; PREFIX keeps topic
// and group
// names of one run apart. Each check prints one line, "check key=value ...", that the Python test
// asserts on; an unexpected exception ends the program with exit status 1 and its stack trace.

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.function.BooleanSupplier;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

public final class JavaClientFlows {
    private static final Duration POLL = Duration.ofMillis(100);
    private static final long DEADLINE_MS = 60_000;

    private final String bootstrap;
    private final String prefix;

    private JavaClientFlows(String bootstrap, String prefix) {
        this.bootstrap = bootstrap;
        this.prefix = prefix;
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 3) {
            System.err.println("usage: JavaClientFlows BOOTSTRAP FLOW PREFIX");
            System.exit(2);
        }
        JavaClientFlows flows = new JavaClientFlows(args[0], args[2]);
        switch (args[1]) {
            case "produce" -> flows.produce();
            case "cooperative" -> flows.cooperative();
            case "static" -> flows.staticMembership();
            case "consumer-protocol" -> flows.consumerProtocol();
            case "admin" -> flows.adminFlow();
            case "sessions" -> flows.sessions();
            default -> {
                System.err.println("unknown flow " + args[1]);
                System.exit(2);
            }
        }
    }

    // ---- clients ------------------------------------------------------------------------------

    private Admin admin() {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        return Admin.create(p);
    }

    private KafkaProducer<String, String> producer(Map<String, String> extra) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        p.putAll(extra);
        return new KafkaProducer<>(p);
    }

    private KafkaConsumer<String, String> consumer(Map<String, String> extra) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.putAll(extra);
        return new KafkaConsumer<>(p);
    }

    private void createTopic(Admin admin, String topic, int partitions) throws Exception {
        admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get();
    }

    private static void waitFor(String what, BooleanSupplier cond) {
        long end = System.currentTimeMillis() + DEADLINE_MS;
        while (!cond.getAsBoolean()) {
            if (System.currentTimeMillis() > end) {
                throw new IllegalStateException("timed out waiting for " + what);
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        }
    }

    private static void say(String line) {
        System.out.println(line);
        System.out.flush();
    }

    /** Sends n keyed records with a header to one partition; returns the acknowledged count. */
    private static int send(KafkaProducer<String, String> producer, String topic, int partition,
                            int n, long baseTimestamp) throws Exception {
        List<java.util.concurrent.Future<RecordMetadata>> acks = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            ProducerRecord<String, String> r = new ProducerRecord<>(
                topic, partition, baseTimestamp < 0 ? null : baseTimestamp + i, "k" + i,
                "value-" + i + "-" + "x".repeat(i % 50));
            r.headers().add("seq", Integer.toString(i).getBytes(StandardCharsets.UTF_8));
            acks.add(producer.send(r));
        }
        producer.flush();
        int ok = 0;
        for (var f : acks) {
            f.get();
            ok++;
        }
        return ok;
    }

    /** Reads partition 0 of each topic from the start until n records arrived from each;
     *  checks keys, values, headers and offsets; returns the count read per topic. */
    private Map<String, Integer> readBack(List<String> topics, int n) {
        Map<String, List<ConsumerRecord<String, String>>> got = new java.util.HashMap<>();
        List<TopicPartition> tps = new ArrayList<>();
        for (String t : topics) {
            tps.add(new TopicPartition(t, 0));
            got.put(t, new ArrayList<>());
        }
        try (KafkaConsumer<String, String> c = consumer(Map.of())) {
            c.assign(tps);
            c.seekToBeginning(tps);
            waitFor(n + " records from each of " + topics, () -> {
                c.poll(POLL).forEach(r -> got.get(r.topic()).add(r));
                return got.values().stream().allMatch(l -> l.size() >= n);
            });
        }
        Map<String, Integer> counts = new java.util.HashMap<>();
        for (var e : got.entrySet()) {
            List<ConsumerRecord<String, String>> rs = e.getValue();
            for (int i = 0; i < rs.size(); i++) {
                ConsumerRecord<String, String> r = rs.get(i);
                Header h = r.headers().lastHeader("seq");
                String seq = h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
                if (!("k" + i).equals(r.key()) || !r.value().startsWith("value-" + i + "-")
                    || !Integer.toString(i).equals(seq) || r.offset() != i) {
                    throw new IllegalStateException("record " + i + " read back as " + r);
                }
            }
            counts.put(e.getKey(), rs.size());
        }
        return counts;
    }

    /** One poll; the records go into `seen` by partition and offset (a record read again after
     *  a rebalance, from the last commit, counts once: consumption is at least once). */
    private static void poll(KafkaConsumer<String, String> c, Set<String> seen) {
        c.poll(POLL).forEach(r -> seen.add(r.partition() + "@" + r.offset()));
    }

    /** Whether the consumer's position is at the end (10) of each of its partitions, so that a
     *  commit now covers every record. */
    private static boolean atEnd(KafkaConsumer<String, String> c) {
        return c.assignment().stream().allMatch(tp -> c.position(tp) >= 10);
    }

    /** A topic of 4 partitions with 10 records in each. */
    private void fourPartitionsOfTen(Admin admin, String topic) throws Exception {
        createTopic(admin, topic, 4);
        try (KafkaProducer<String, String> p = producer(Map.of())) {
            for (int part = 0; part < 4; part++) {
                send(p, topic, part, 10, -1);
            }
        }
    }

    /** The sum of a group's committed offsets. */
    private static long committedSum(Admin admin, String group) throws Exception {
        long sum = 0;
        for (OffsetAndMetadata o : admin.listConsumerGroupOffsets(group)
                .partitionsToOffsetAndMetadata().get().values()) {
            sum += o.offset();
        }
        return sum;
    }

    // ---- flows --------------------------------------------------------------------------------

    /** Every codec with acks 0, 1 and all (all: the default idempotent producer). */
    private void produce() throws Exception {
        try (Admin admin = admin()) {
            Map<String, Integer> sent = new java.util.LinkedHashMap<>();
            List<NewTopic> topics = new ArrayList<>();
            for (String codec : List.of("none", "gzip", "snappy", "lz4", "zstd")) {
                for (String acks : List.of("0", "1", "all")) {
                    String topic = prefix + "-produce-" + codec + "-" + acks;
                    topics.add(new NewTopic(topic, 1, (short) 1));
                    sent.put(topic, 0);
                }
            }
            admin.createTopics(topics).all().get();
            for (String topic : sent.keySet()) {
                String[] parts = topic.substring(prefix.length() + "-produce-".length())
                    .split("-");
                // enable.idempotence is left at its default: true, which the client drops by
                // itself for acks 0 and 1
                try (KafkaProducer<String, String> p = producer(Map.of(
                        ProducerConfig.COMPRESSION_TYPE_CONFIG, parts[0],
                        ProducerConfig.ACKS_CONFIG, parts[1]))) {
                    sent.put(topic, send(p, topic, 0, 200, -1));
                }
            }
            Map<String, Integer> read = readBack(new ArrayList<>(sent.keySet()), 200);
            List<TopicPartition> tps = sent.keySet().stream()
                .map(t -> new TopicPartition(t, 0)).toList();
            var described = admin.describeProducers(tps).all().get();
            for (String topic : sent.keySet()) {
                String[] parts = topic.substring(prefix.length() + "-produce-".length())
                    .split("-");
                List<ProducerState> producers = described.get(new TopicPartition(topic, 0))
                    .activeProducers();
                long pid = producers.isEmpty() ? -1 : producers.get(0).producerId();
                say("produce codec=" + parts[0] + " acks=" + parts[1] + " sent=" + sent.get(topic)
                    + " read=" + read.get(topic) + " idempotent_producers=" + producers.size()
                    + " producer_id_valid=" + (pid >= 0));
            }
        }
    }

    /** Two consumers with the cooperative-sticky assignor: the second join moves half of the
     *  partitions, the first consumer gives up only those (incremental rebalance). */
    private void cooperative() throws Exception {
        String topic = prefix + "-coop";
        String group = prefix + "-coop-group";
        try (Admin admin = admin()) {
            fourPartitionsOfTen(admin, topic);
            Map<String, String> conf = Map.of(
                ConsumerConfig.GROUP_ID_CONFIG, group,
                ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG,
                "org.apache.kafka.clients.consumer.CooperativeStickyAssignor");
            Set<TopicPartition> revoked1 = new HashSet<>();
            Set<String> consumed = new HashSet<>();  // distinct records
            try (KafkaConsumer<String, String> c1 = consumer(conf);
                 KafkaConsumer<String, String> c2 = consumer(conf)) {
                c1.subscribe(List.of(topic), new ConsumerRebalanceListener() {
                    public void onPartitionsRevoked(Collection<TopicPartition> ps) {
                        revoked1.addAll(ps);
                    }

                    public void onPartitionsAssigned(Collection<TopicPartition> ps) {
                    }
                });
                waitFor("c1 assigned 4", () -> {
                    poll(c1, consumed);
                    return c1.assignment().size() == 4;
                });
                c1.commitSync();
                int gen1 = c1.groupMetadata().generationId();
                c2.subscribe(List.of(topic));
                waitFor("2 + 2 partitions", () -> {
                    poll(c1, consumed);
                    poll(c2, consumed);
                    return c1.assignment().size() == 2 && c2.assignment().size() == 2;
                });
                waitFor("40 records", () -> {
                    poll(c1, consumed);
                    poll(c2, consumed);
                    return consumed.size() >= 40 && atEnd(c1) && atEnd(c2);
                });
                c1.commitSync();
                c2.commitSync();
                Set<TopicPartition> both = new HashSet<>(c1.assignment());
                both.addAll(c2.assignment());
                say("cooperative c1=" + c1.assignment().size() + " c2=" + c2.assignment().size()
                    + " union=" + both.size() + " c1_revoked=" + revoked1.size()
                    + " generation_advanced=" + (c1.groupMetadata().generationId() > gen1)
                    + " consumed=" + consumed.size());
            }
            long committed = committedSum(admin, group);
            ConsumerGroupDescription d = admin.describeConsumerGroups(List.of(group))
                .describedGroups().get(group).get();
            say("cooperative-committed sum=" + committed + " protocol=" + d.partitionAssignor()
                + " state=" + d.state());
        }
    }

    /** Static membership (KIP-345): a member that restarts with its group.instance.id gets its
     *  partitions back without a rebalance, and close() does not leave the group. */
    private void staticMembership() throws Exception {
        String topic = prefix + "-static";
        String group = prefix + "-static-group";
        try (Admin admin = admin()) {
            createTopic(admin, topic, 3);
            Map<String, String> conf = Map.of(
                ConsumerConfig.GROUP_ID_CONFIG, group,
                ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, "instance-1",
                ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "30000");
            int genBefore;
            Set<TopicPartition> before;
            try (KafkaConsumer<String, String> c = consumer(conf)) {
                c.subscribe(List.of(topic));
                waitFor("assignment", () -> {
                    c.poll(POLL);
                    return c.assignment().size() == 3;
                });
                genBefore = c.groupMetadata().generationId();
                before = new TreeSet<>(java.util.Comparator.comparing(TopicPartition::toString));
                before.addAll(c.assignment());
            }
            ConsumerGroupDescription mid = admin.describeConsumerGroups(List.of(group))
                .describedGroups().get(group).get();
            String instance = mid.members().isEmpty() ? "none"
                : mid.members().iterator().next().groupInstanceId().orElse("none");
            say("static-after-close members=" + mid.members().size() + " instance=" + instance);
            try (KafkaConsumer<String, String> c = consumer(conf)) {
                c.subscribe(List.of(topic));
                waitFor("assignment again", () -> {
                    c.poll(POLL);
                    return c.assignment().size() == 3;
                });
                say("static-rejoin generation_before=" + genBefore + " generation_after="
                    + c.groupMetadata().generationId() + " same_assignment="
                    + before.containsAll(c.assignment()));
            }
        }
    }

    /** The KIP-848 consumer group protocol (group.protocol=consumer), server-side assignment. */
    private void consumerProtocol() throws Exception {
        String topic = prefix + "-kip848";
        String group = prefix + "-kip848-group";
        try (Admin admin = admin()) {
            fourPartitionsOfTen(admin, topic);
            Map<String, String> conf = Map.of(
                ConsumerConfig.GROUP_ID_CONFIG, group,
                ConsumerConfig.GROUP_PROTOCOL_CONFIG, "consumer");
            Set<String> consumed = new HashSet<>();  // distinct records
            try (KafkaConsumer<String, String> c1 = consumer(conf);
                 KafkaConsumer<String, String> c2 = consumer(conf)) {
                c1.subscribe(List.of(topic));
                c2.subscribe(List.of(topic));
                waitFor("2 + 2 partitions and 40 records", () -> {
                    poll(c1, consumed);
                    poll(c2, consumed);
                    return c1.assignment().size() == 2 && c2.assignment().size() == 2
                        && consumed.size() >= 40 && atEnd(c1) && atEnd(c2);
                });
                c1.commitSync();
                c2.commitSync();
                ConsumerGroupDescription d = admin.describeConsumerGroups(List.of(group))
                    .describedGroups().get(group).get();
                say("consumer-protocol c1=" + c1.assignment().size() + " c2="
                    + c2.assignment().size() + " consumed=" + consumed.size() + " type=" + d.type()
                    + " members=" + d.members().size() + " state=" + d.state());
            }
            long committed = committedSum(admin, group);
            say("consumer-protocol-committed sum=" + committed);
        }
    }

    private static String configValue(Admin admin, ConfigResource res, String key)
            throws Exception {
        Config c = admin.describeConfigs(List.of(res)).all().get().get(res);
        ConfigEntry e = c.get(key);
        return e == null ? "missing" : e.value() + "/" + e.source();
    }

    /** The AdminClient: topics, configs, partitions, offsets, records deletion, groups. */
    /** A consumer of 30 partitions (fetch sessions, KIP-227): 3 records in every partition,
     *  then rounds of idle polling followed by 3 records in a few partitions; every record must
     *  be read once, with the value it was sent with. */
    private void sessions() throws Exception {
        String topic = prefix + "-sessions";
        int partitions = 30;
        try (Admin admin = admin()) {
            createTopic(admin, topic, partitions);
        }
        Map<String, String> expected = new java.util.HashMap<>();
        Map<String, String> seen = new java.util.HashMap<>();
        int[] duplicates = {0};
        try (KafkaProducer<String, String> p = producer(Map.of());
             KafkaConsumer<String, String> c = consumer(
                 Map.of(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "100"))) {
            List<TopicPartition> tps = new ArrayList<>();
            for (int i = 0; i < partitions; i++) {
                tps.add(new TopicPartition(topic, i));
            }
            c.assign(tps);
            c.seekToBeginning(tps);
            for (int round = 0; round < 4; round++) {
                List<Integer> targets = new ArrayList<>();
                if (round == 0) {
                    for (int i = 0; i < partitions; i++) {
                        targets.add(i);
                    }
                } else {
                    long idleEnd = System.currentTimeMillis() + 1000;
                    while (System.currentTimeMillis() < idleEnd) {
                        if (!c.poll(POLL).isEmpty()) {
                            throw new IllegalStateException("records while nothing was sent");
                        }
                    }
                    targets = List.of(round, 7 * round % partitions, partitions - 1);
                }
                for (int t : targets) {
                    for (int i = 0; i < 3; i++) {
                        String value = round + "-" + t + "-" + i;
                        RecordMetadata md = p.send(new ProducerRecord<>(topic, t, null, value)).get();
                        expected.put(md.partition() + "@" + md.offset(), value);
                    }
                }
                waitFor("round " + round, () -> {
                    c.poll(POLL).forEach(r -> {
                        if (seen.put(r.partition() + "@" + r.offset(), r.value()) != null) {
                            duplicates[0]++;
                        }
                    });
                    return seen.keySet().containsAll(expected.keySet());
                });
            }
        }
        long mismatched = expected.entrySet().stream()
            .filter(e -> !e.getValue().equals(seen.get(e.getKey()))).count();
        say("sessions sent=" + expected.size() + " read=" + seen.size() + " duplicates="
            + duplicates[0] + " mismatched=" + mismatched);
    }

    private void adminFlow() throws Exception {
        String topic = prefix + "-admin";
        String group = prefix + "-admin-group";
        try (Admin admin = admin()) {
            DescribeClusterResult cluster = admin.describeCluster();
            say("cluster nodes=" + cluster.nodes().get().size() + " cluster_id_set="
                + (cluster.clusterId().get() != null) + " controller_set="
                + (cluster.controller().get() != null));

            admin.createTopics(List.of(new NewTopic(topic, 2, (short) 1).configs(Map.of(
                "retention.ms", "3600000", "cleanup.policy", "delete")))).all().get();
            String again;
            try {
                createTopic(admin, topic, 2);
                again = "created";
            } catch (ExecutionException e) {
                again = e.getCause().getClass().getSimpleName();
            }
            TopicDescription td = admin.describeTopics(List.of(topic)).allTopicNames().get()
                .get(topic);
            say("topics listed=" + admin.listTopics().names().get().contains(topic)
                + " partitions=" + td.partitions().size() + " topic_id_set="
                + (td.topicId() != null && !td.topicId().toString().equals(
                    "AAAAAAAAAAAAAAAAAAAAAA")) + " create_again=" + again);

            ConfigResource res = new ConfigResource(ConfigResource.Type.TOPIC, topic);
            say("configs retention.ms=" + configValue(admin, res, "retention.ms")
                + " segment.bytes=" + configValue(admin, res, "segment.bytes"));
            admin.incrementalAlterConfigs(Map.of(res, List.of(
                new AlterConfigOp(new ConfigEntry("retention.ms", "7200000"),
                    AlterConfigOp.OpType.SET),
                new AlterConfigOp(new ConfigEntry("cleanup.policy", ""),
                    AlterConfigOp.OpType.DELETE)))).all().get();
            say("configs-altered retention.ms=" + configValue(admin, res, "retention.ms")
                + " cleanup.policy=" + configValue(admin, res, "cleanup.policy"));
            ConfigResource brokerRes = new ConfigResource(ConfigResource.Type.BROKER,
                Integer.toString(cluster.nodes().get().iterator().next().id()));
            say("broker-config message.max.bytes="
                + configValue(admin, brokerRes, "message.max.bytes"));

            admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(3))).all().get();
            waitFor("3 partitions", () -> {
                try {
                    return admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic)
                        .partitions().size() == 3;
                } catch (Exception e) {
                    return false;
                }
            });
            say("partitions increased_to=3");

            long t0 = 1_700_000_000_000L;
            try (KafkaProducer<String, String> p = producer(Map.of())) {
                send(p, topic, 0, 30, t0);
            }
            TopicPartition tp = new TopicPartition(topic, 0);
            say("offsets earliest=" + offset(admin, tp, OffsetSpec.earliest())
                + " latest=" + offset(admin, tp, OffsetSpec.latest())
                + " max_timestamp=" + offset(admin, tp, OffsetSpec.maxTimestamp())
                + " for_timestamp=" + offset(admin, tp, OffsetSpec.forTimestamp(t0 + 12)));
            long low = admin.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(10)))
                .lowWatermarks().get(tp).get().lowWatermark();
            say("delete-records low_watermark=" + low + " earliest="
                + offset(admin, tp, OffsetSpec.earliest()));

            try (KafkaConsumer<String, String> c = consumer(Map.of(
                    ConsumerConfig.GROUP_ID_CONFIG, group))) {
                c.subscribe(List.of(topic));
                int[] n = {0};
                waitFor("20 records", () -> {
                    n[0] += c.poll(POLL).count();
                    return n[0] >= 20;
                });
                c.commitSync();
            }
            boolean listed = admin.listConsumerGroups().all().get().stream()
                .anyMatch(g -> g.groupId().equals(group));
            ConsumerGroupDescription d = admin.describeConsumerGroups(List.of(group))
                .describedGroups().get(group).get();
            Map<TopicPartition, OffsetAndMetadata> committed = admin
                .listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
            say("groups listed=" + listed + " state=" + d.state() + " members="
                + d.members().size() + " committed_p0=" + committed.get(tp).offset());
            admin.alterConsumerGroupOffsets(group, Map.of(tp, new OffsetAndMetadata(15)))
                .all().get();
            long altered = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata()
                .get().get(tp).offset();
            admin.deleteConsumerGroupOffsets(group, Set.of(tp)).all().get();
            boolean gone = !admin.listConsumerGroupOffsets(group)
                .partitionsToOffsetAndMetadata().get().containsKey(tp);
            admin.deleteConsumerGroups(List.of(group)).all().get();
            boolean groupGone = admin.listConsumerGroups().all().get().stream()
                .noneMatch(g -> g.groupId().equals(group));
            say("group-offsets altered=" + altered + " offset_deleted=" + gone
                + " group_deleted=" + groupGone);

            admin.deleteTopics(List.of(topic)).all().get();
            waitFor("topic deleted", () -> {
                try {
                    return !admin.listTopics().names().get().contains(topic);
                } catch (Exception e) {
                    return false;
                }
            });
            say("delete-topic gone=true");
        }
    }

    private static long offset(Admin admin, TopicPartition tp, OffsetSpec spec) throws Exception {
        Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> r =
            admin.listOffsets(Map.of(tp, spec)).all().get();
        return r.get(tp).offset();
    }
}
