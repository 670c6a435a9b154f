// Apache Kafka 4.4's KafkaShareConsumer (KIP-932) against a broker, one scenario per run; every
// line it prints is "<scenario> key=value ...", compared by compat_tests/test_share_groups_java.py.
// Compiled against the 4.4 client only (share consumers do not exist in 3.9).

import java.time.Duration;
import java.util.*;
import java.util.concurrent.*;
import org.apache.kafka.clients.admin.*;
import org.apache.kafka.clients.consumer.*;
import org.apache.kafka.clients.producer.*;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.*;

public class ShareGroupClient {
    static String bootstrap;

    public static void main(String[] args) throws Exception {
        bootstrap = args[1];
        String topic = args[2];
        String group = args.length > 3 ? args[3] : "";
        switch (args[0]) {
            case "produce" -> produce(topic, Integer.parseInt(args[3]), "r");
            case "implicit" -> implicit(topic, group, Integer.parseInt(args[4]));
            case "explicit" -> explicit(topic, group);
            case "split" -> split(topic, group, Integer.parseInt(args[4]));
            case "poison" -> poison(topic, group);
            case "hold" -> hold(topic, group, Integer.parseInt(args[4]), Integer.parseInt(args[5]));
            case "drain" -> drain(topic, group, Integer.parseInt(args[4]));
            default -> throw new IllegalArgumentException(args[0]);
        }
    }

    static Admin admin() {
        return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap));
    }

    static void prepare(String topic, String group, Map<String, String> groupConfigs) throws Exception {
        try (Admin admin = admin()) {
            try {
                admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof org.apache.kafka.common.errors.TopicExistsException)) throw e;
            }
            List<AlterConfigOp> ops = new ArrayList<>();
            ops.add(new AlterConfigOp(new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET));
            groupConfigs.forEach((k, v) -> ops.add(new AlterConfigOp(new ConfigEntry(k, v), AlterConfigOp.OpType.SET)));
            admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.GROUP, group), ops)).all().get();
        }
    }

    static void produce(String topic, int n, String prefix) throws Exception {
        prepare(topic, "unused", Map.of());
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p, new StringSerializer(), new StringSerializer())) {
            for (int i = 0; i < n; i++) producer.send(new ProducerRecord<>(topic, prefix + i)).get();
        }
    }

    static void produceValues(String topic, String... values) throws Exception {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p, new StringSerializer(), new StringSerializer())) {
            for (String v : values) producer.send(new ProducerRecord<>(topic, v)).get();
        }
    }

    static KafkaShareConsumer<String, String> consumer(String group, boolean explicit, int maxPoll) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, String.valueOf(maxPoll));
        p.put("share.acknowledgement.mode", explicit ? "explicit" : "implicit");
        return new KafkaShareConsumer<>(p, new StringDeserializer(), new StringDeserializer());
    }

    static short count(ConsumerRecord<String, String> r) {
        return r.deliveryCount().orElse((short) -1);
    }

    static void implicit(String topic, String group, int n) throws Exception {
        prepare(topic, group, Map.of());
        produce(topic, n, "i");
        Set<String> got = new TreeSet<>();
        int received = 0;
        try (KafkaShareConsumer<String, String> c = consumer(group, false, 500)) {
            c.subscribe(List.of(topic));
            long end = System.currentTimeMillis() + 30_000;
            while (got.size() < n && System.currentTimeMillis() < end) {
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(500))) {
                    got.add(r.value());
                    received++;
                }
            }
            c.commitSync();
        }
        System.out.println("implicit received=" + received + " distinct=" + got.size());
        int again = 0;
        try (KafkaShareConsumer<String, String> c = consumer(group, false, 500)) {
            c.subscribe(List.of(topic));
            long end = System.currentTimeMillis() + 3_000;
            while (System.currentTimeMillis() < end) again += c.poll(Duration.ofMillis(500)).count();
        }
        System.out.println("implicit_again received=" + again);
    }

    static void explicit(String topic, String group) throws Exception {
        prepare(topic, group, Map.of());
        produceValues(topic, "e0", "e1", "e2", "e3", "e4", "e5");
        try (KafkaShareConsumer<String, String> c = consumer(group, true, 500)) {
            c.subscribe(List.of(topic));
            int first = 0;
            long end = System.currentTimeMillis() + 30_000;
            while (first < 6 && System.currentTimeMillis() < end) {
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(500))) {
                    first++;
                    AcknowledgeType t = switch (r.value()) {
                        case "e3" -> AcknowledgeType.RELEASE;
                        case "e4" -> AcknowledgeType.REJECT;
                        default -> AcknowledgeType.ACCEPT;
                    };
                    c.acknowledge(r, t);
                }
            }
            Map<?, ?> failed = c.commitSync();
            String again = "";
            short again_count = 0;
            end = System.currentTimeMillis() + 15_000;
            while (again.isEmpty() && System.currentTimeMillis() < end) {
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(500))) {
                    again += r.value();
                    again_count = count(r);
                    c.acknowledge(r, AcknowledgeType.ACCEPT);
                }
            }
            c.commitSync();
            int after = 0;
            end = System.currentTimeMillis() + 2_000;
            while (System.currentTimeMillis() < end) {
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(500))) {
                    after++;
                    c.acknowledge(r, AcknowledgeType.ACCEPT);
                }
            }
            System.out.println("explicit first=" + first + " redelivered=" + again + " count=" + again_count
                + " after=" + after);
        }
    }

    static void split(String topic, String group, int n) throws Exception {
        prepare(topic, group, Map.of());
        Map<String, Integer> owner = new ConcurrentHashMap<>();
        List<String> dups = Collections.synchronizedList(new ArrayList<>());
        int[] counts = new int[2];
        CountDownLatch ready = new CountDownLatch(2);
        ExecutorService pool = Executors.newFixedThreadPool(2);
        List<Future<?>> tasks = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            final int me = i;
            tasks.add(pool.submit(() -> {
                try (KafkaShareConsumer<String, String> c = consumer(group, false, 5)) {
                    c.subscribe(List.of(topic));
                    c.poll(Duration.ofMillis(200));
                    ready.countDown();
                    long end = System.currentTimeMillis() + 40_000;
                    while (owner.size() < n && System.currentTimeMillis() < end) {
                        for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
                            if (owner.putIfAbsent(r.value(), me) != null) dups.add(r.value());
                            counts[me]++;
                        }
                        Thread.sleep(20);
                    }
                    c.commitSync();
                }
                return null;
            }));
        }
        ready.await(30, TimeUnit.SECONDS);
        Thread.sleep(1000);
        produce(topic, n, "s");
        for (Future<?> f : tasks) f.get();
        pool.shutdown();
        System.out.println("split distinct=" + owner.size() + " dups=" + dups.size()
            + " both=" + (counts[0] > 0 && counts[1] > 0));
    }

    static void poison(String topic, String group) throws Exception {
        prepare(topic, group, Map.of("share.delivery.count.limit", "2"));
        produceValues(topic, "ok1", "poison", "ok2");
        int deliveries = 0;
        short maxCount = 0;
        Set<String> ok = new TreeSet<>();
        try (KafkaShareConsumer<String, String> c = consumer(group, true, 500)) {
            c.subscribe(List.of(topic));
            long end = System.currentTimeMillis() + 6_000;
            while (System.currentTimeMillis() < end) {
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(300))) {
                    if (r.value().equals("poison")) {
                        deliveries++;
                        maxCount = (short) Math.max(maxCount, count(r));
                        c.acknowledge(r, AcknowledgeType.RELEASE);
                    } else {
                        ok.add(r.value());
                        c.acknowledge(r, AcknowledgeType.ACCEPT);
                    }
                }
                c.commitSync();
            }
        }
        System.out.println("poison deliveries=" + deliveries + " max_count=" + maxCount + " ok=" + String.join(",", ok));
    }

    // produce n records, accept the first `accept` delivered and hold the others' locks without
    // acknowledging them: the process is then killed
    static void hold(String topic, String group, int n, int accept) throws Exception {
        prepare(topic, group, Map.of());
        produce(topic, n, "h");
        KafkaShareConsumer<String, String> c = consumer(group, true, n);
        c.subscribe(List.of(topic));
        List<Long> accepted = new ArrayList<>();
        List<Long> held = new ArrayList<>();
        long end = System.currentTimeMillis() + 30_000;
        while (accepted.size() + held.size() < n && System.currentTimeMillis() < end) {
            for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(500))) {
                if (accepted.size() < accept) {
                    c.acknowledge(r, AcknowledgeType.ACCEPT);
                    accepted.add(r.offset());
                } else {
                    held.add(r.offset());
                }
            }
        }
        c.commitSync();
        System.out.println("hold accepted=" + joined(accepted) + " held=" + joined(held));
        System.out.flush();
        Thread.sleep(600_000);
    }

    // consume (implicit acknowledgement) until nothing new came for a while or the time is up
    static void drain(String topic, String group, int seconds) throws Exception {
        List<Long> offsets = new ArrayList<>();
        List<Short> counts = new ArrayList<>();
        try (KafkaShareConsumer<String, String> c = consumer(group, false, 500)) {
            c.subscribe(List.of(topic));
            long end = System.currentTimeMillis() + seconds * 1000L;
            while (System.currentTimeMillis() < end) {
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(500))) {
                    offsets.add(r.offset());
                    counts.add(count(r));
                }
            }
            c.commitSync();
        }
        System.out.println("drain offsets=" + joined(offsets) + " counts=" + joined(counts));
    }

    static String joined(List<?> values) {
        StringBuilder b = new StringBuilder();
        for (Object v : values) {
            if (b.length() > 0) b.append(',');
            b.append(v);
        }
        return b.toString();
    }
}
