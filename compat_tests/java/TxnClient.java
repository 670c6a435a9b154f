// Apache Kafka's Java client (3.9) through the transactional paths, against a broker given on the
// command line; prints one "name key=value ..." line per check for compat_tests/test_txn_java.py.
import java.time.Duration;
import java.util.*;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.*;
import org.apache.kafka.clients.consumer.*;
import org.apache.kafka.clients.producer.*;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

public class TxnClient {
    static String bootstrap;

    static KafkaProducer<String, String> producer(String txnId) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, txnId);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        KafkaProducer<String, String> producer = new KafkaProducer<>(p);
        producer.initTransactions();
        return producer;
    }

    static KafkaConsumer<String, String> consumer(String group, String isolation) {
        Properties c = new Properties();
        c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        c.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        return new KafkaConsumer<>(c);
    }

    static List<String> readAll(String topic, String isolation) {
        try (KafkaConsumer<String, String> c = consumer("reader-" + UUID.randomUUID(), isolation)) {
            TopicPartition tp = new TopicPartition(topic, 0);
            c.assign(List.of(tp));
            c.seekToBeginning(List.of(tp));
            long end = c.endOffsets(List.of(tp)).get(tp); // the LSO for read_committed
            List<String> out = new ArrayList<>();
            long deadline = System.currentTimeMillis() + 20000;
            while (c.position(tp) < end && System.currentTimeMillis() < deadline)
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) out.add(r.value());
            return out;
        }
    }

    public static void main(String[] args) throws Exception {
        bootstrap = args[0];
        Properties a = new Properties();
        a.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(a)) {
            admin.createTopics(List.of(new NewTopic("jtx", 1, (short) 1), new NewTopic("jin", 1, (short) 1),
                new NewTopic("jout", 1, (short) 1), new NewTopic("jz", 1, (short) 1))).all().get();

            try (KafkaProducer<String, String> p = producer("j-app")) {
                p.beginTransaction();
                for (int i = 0; i < 3; i++) p.send(new ProducerRecord<>("jtx", "j" + i));
                p.commitTransaction();
                p.beginTransaction();
                p.send(new ProducerRecord<>("jtx", "dropped"));
                p.flush();
                p.abortTransaction();
                p.beginTransaction();
                p.send(new ProducerRecord<>("jtx", "jlast"));
                p.commitTransaction();
            }
            System.out.println("read committed=" + String.join(",", readAll("jtx", "read_committed"))
                + " uncommitted=" + String.join(",", readAll("jtx", "read_uncommitted")));

            // consume-transform-produce with sendOffsetsToTransaction
            try (KafkaProducer<String, String> p = producer("j-plain")) {
                p.beginTransaction();
                for (int i = 0; i < 20; i++) p.send(new ProducerRecord<>("jin", "v" + i));
                p.commitTransaction();
            }
            int done = 0;
            try (KafkaConsumer<String, String> c = consumer("j-ctp", "read_committed");
                 KafkaProducer<String, String> p = producer("j-ctp-app")) {
                c.subscribe(List.of("jin"));
                long deadline = System.currentTimeMillis() + 30000;
                while (done < 20 && System.currentTimeMillis() < deadline) {
                    ConsumerRecords<String, String> recs = c.poll(Duration.ofMillis(200));
                    if (recs.isEmpty()) continue;
                    p.beginTransaction();
                    Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
                    for (ConsumerRecord<String, String> r : recs) {
                        p.send(new ProducerRecord<>("jout", "x" + r.value()));
                        offsets.put(new TopicPartition(r.topic(), r.partition()), new OffsetAndMetadata(r.offset() + 1));
                        done++;
                    }
                    p.sendOffsetsToTransaction(offsets, c.groupMetadata());
                    p.commitTransaction();
                }
            }
            long committed = admin.listConsumerGroupOffsets("j-ctp").partitionsToOffsetAndMetadata().get()
                .get(new TopicPartition("jin", 0)).offset();
            List<String> out = readAll("jout", "read_committed");
            System.out.println("ctp processed=" + done + " out=" + out.size() + " distinct="
                + new HashSet<>(out).size() + " committed=" + committed);

            // a zombie: a second instance of the transactional id fences the first
            KafkaProducer<String, String> zombie = producer("j-z");
            zombie.beginTransaction();
            zombie.send(new ProducerRecord<>("jz", "zombie"));
            zombie.flush();
            try (KafkaProducer<String, String> fresh = producer("j-z")) {
                fresh.beginTransaction();
                fresh.send(new ProducerRecord<>("jz", "fresh"));
                fresh.commitTransaction();
            }
            String fenced = "none";
            try {
                zombie.commitTransaction();
            } catch (ProducerFencedException e) {
                fenced = e.getClass().getSimpleName();
            } finally {
                zombie.close(Duration.ZERO);
            }
            System.out.println("zombie fenced=" + fenced + " committed=" + String.join(",", readAll("jz", "read_committed")));

            // the admin API behind kafka-transactions.sh
            producer("j-empty").close();
            TransactionDescription app = admin.describeTransactions(List.of("j-app")).description("j-app").get();
            TransactionDescription empty = admin.describeTransactions(List.of("j-empty")).description("j-empty").get();
            System.out.println("describe app=" + app.state() + " app_start=" + app.transactionStartTimeMs().isPresent()
                + " empty=" + empty.state() + " empty_start=" + empty.transactionStartTimeMs().isPresent()
                + " epoch=" + empty.producerEpoch());
            Collection<TransactionListing> listed = admin.listTransactions().all().get();
            System.out.println("list ids=" + listed.stream().map(TransactionListing::transactionalId).sorted()
                .collect(Collectors.joining(",")));
            DescribeProducersResult.PartitionProducerState ps = admin.describeProducers(List.of(new TopicPartition("jtx", 0)))
                .partitionResult(new TopicPartition("jtx", 0)).get();
            System.out.println("producers count=" + ps.activeProducers().size()
                + " open=" + ps.activeProducers().stream().filter(s -> s.currentTransactionStartOffset().isPresent()).count());
        }
    }
}
