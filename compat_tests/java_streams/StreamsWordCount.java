// A Kafka Streams 4.4 word count with group.protocol=streams (KIP-1071), run by
// compat_tests/test_streams_java.py: two instances (two KafkaStreams, each its own process id and
// state directory) count the words of the input topic; the second is closed mid-run and the first
// takes over its tasks. Prints, once the output topic holds the expected counts (or at the
// deadline), one line per word: "count <word>=<n>", then "instances <states>" and
// "tasks first=<n> second=<n>" (the active tasks each instance ran while both were up).
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.LongDeserializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.state.Stores;

public class StreamsWordCount {
    static Topology topology(String input, String output) {
        StreamsBuilder b = new StreamsBuilder();
        b.stream(input, Consumed.with(Serdes.String(), Serdes.String()))
            .flatMapValues(v -> Arrays.asList(v.toLowerCase().split("\\W+")))
            .filter((k, w) -> !w.isEmpty())
            .groupBy((k, w) -> w, Grouped.with("words", Serdes.String(), Serdes.String()))
            .count(Materialized.<String, Long>as(Stores.inMemoryKeyValueStore("counts"))
                .withKeySerde(Serdes.String()).withValueSerde(Serdes.Long()))
            .toStream()
            .to(output, Produced.with(Serdes.String(), Serdes.Long()));
        return b.build();
    }

    static KafkaStreams start(String bootstrap, String app, String input, String output, String name)
            throws Exception {
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, app);
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(StreamsConfig.GROUP_PROTOCOL_CONFIG, "streams");
        p.put(StreamsConfig.STATE_DIR_CONFIG, Files.createTempDirectory("wc-" + name).toString());
        p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, "200");
        p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, "0");
        p.put(StreamsConfig.CLIENT_ID_CONFIG, app + "-" + name);
        KafkaStreams s = new KafkaStreams(topology(input, output), p);
        s.start();
        return s;
    }

    static void produce(String bootstrap, String input, List<String> lines) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            int i = 0;
            for (String line : lines) {
                producer.send(new ProducerRecord<>(input, "k" + (i++), line));
            }
            producer.flush();
        }
    }

    static int activeTasks(KafkaStreams s) {
        int[] n = {0};
        s.metadataForLocalThreads().forEach(t -> n[0] += t.activeTasks().size());
        return n[0];
    }

    static void waitRunning(KafkaStreams a, KafkaStreams b, long deadline) throws InterruptedException {
        while (System.currentTimeMillis() < deadline) {
            boolean running = a.state() == KafkaStreams.State.RUNNING
                && (b == null || b.state() == KafkaStreams.State.RUNNING);
            if (running && activeTasks(a) > 0 && (b == null || activeTasks(b) > 0)) {
                return;
            }
            Thread.sleep(100);
        }
    }

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0], app = args[1], input = args[2], output = args[3];
        List<String> first = new ArrayList<>(), second = new ArrayList<>();
        List<String> lines = Files.readAllLines(java.nio.file.Path.of(args[4]));
        for (int i = 0; i < lines.size(); i++) {
            (i % 2 == 0 ? first : second).add(lines.get(i));
        }
        Map<String, Long> expected = new HashMap<>();
        for (String line : lines) {
            for (String w : line.toLowerCase().split("\\W+")) {
                if (!w.isEmpty()) expected.merge(w, 1L, Long::sum);
            }
        }
        long deadline = System.currentTimeMillis() + Long.parseLong(args[5]);

        KafkaStreams a = start(bootstrap, app, input, output, "first");
        KafkaStreams b = start(bootstrap, app, input, output, "second");
        waitRunning(a, b, deadline);
        String tasks = "tasks first=" + activeTasks(a) + " second=" + activeTasks(b);
        produce(bootstrap, input, first);
        Thread.sleep(1500);
        b.close(Duration.ofSeconds(30));  // the second instance stops mid-run: it leaves the group
        produce(bootstrap, input, second);

        Map<String, Long> counts = new TreeMap<>();
        Properties c = new Properties();
        c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        c.put(ConsumerConfig.GROUP_ID_CONFIG, app + "-reader");
        try (KafkaConsumer<String, Long> consumer =
                 new KafkaConsumer<>(c, new StringDeserializer(), new LongDeserializer())) {
            consumer.subscribe(List.of(output));
            while (System.currentTimeMillis() < deadline && !counts.equals(new TreeMap<>(expected))) {
                for (ConsumerRecord<String, Long> r : consumer.poll(Duration.ofMillis(200))) {
                    counts.put(r.key(), r.value());
                }
            }
        }
        String states = "instances first=" + a.state() + " second=" + b.state();
        a.close(Duration.ofSeconds(30));
        for (Map.Entry<String, Long> e : counts.entrySet()) {
            System.out.println("count " + e.getKey() + "=" + e.getValue());
        }
        System.out.println(states);
        System.out.println(tasks);
    }
}
