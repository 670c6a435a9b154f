// Apache Kafka's Java client (4.4) with transactions version 2 (KIP-890 part 2) against a broker
// given on the command line; prints one "name key=value ..." line per check for
// compat_tests/test_txn_v2_java.py: the finalized transaction.version the client sees, the
// producer epoch the coordinator holds after each commit and abort (one bump per transaction),
// the records a read_committed consumer sees, the offsets committed in a transaction without
// AddOffsetsToTxn, and a zombie's late write refused after its transaction ended.
import java.time.Duration;
import java.util.*;
import org.apache.kafka.clients.admin.*;
import org.apache.kafka.clients.consumer.*;
import org.apache.kafka.clients.producer.*;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

public class TxnV2Client {
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

    static String epoch(Admin admin, String txnId) throws Exception {
        TransactionDescription d = admin.describeTransactions(List.of(txnId)).description(txnId).get();
        return d.producerId() + ":" + d.producerEpoch();
    }

    static List<String> readCommitted(String topic, int partitions) {
        Properties c = new Properties();
        c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        c.put(ConsumerConfig.GROUP_ID_CONFIG, "reader-" + UUID.randomUUID());
        c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(c)) {
            List<TopicPartition> tps = new ArrayList<>();
            for (int i = 0; i < partitions; i++) tps.add(new TopicPartition(topic, i));
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            Map<TopicPartition, Long> end = consumer.endOffsets(tps); // the LSOs
            List<String> out = new ArrayList<>();
            long deadline = System.currentTimeMillis() + 20000;
            while (System.currentTimeMillis() < deadline) {
                boolean done = true;
                for (TopicPartition tp : tps) done &= consumer.position(tp) >= end.get(tp);
                if (done) break;
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) out.add(r.value());
            }
            Collections.sort(out);
            return out;
        }
    }

    public static void main(String[] args) throws Exception {
        bootstrap = args[0];
        Properties a = new Properties();
        a.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(a)) {
            admin.createTopics(List.of(new NewTopic("tv2", 2, (short) 1))).all().get();
            FinalizedVersionRange tv = admin.describeFeatures().featureMetadata().get()
                .finalizedFeatures().get("transaction.version");
            System.out.println("features transaction_version=" + (tv == null ? "none" : tv.maxVersionLevel()));

            List<String> epochs = new ArrayList<>();
            try (KafkaProducer<String, String> p = producer("tv2-app")) {
                epochs.add(epoch(admin, "tv2-app"));
                for (int i = 0; i < 3; i++) {
                    p.beginTransaction();
                    p.send(new ProducerRecord<>("tv2", i % 2, "k", "c" + i));
                    p.send(new ProducerRecord<>("tv2", (i + 1) % 2, "k", "d" + i));
                    p.commitTransaction();
                    epochs.add(epoch(admin, "tv2-app"));
                }
                p.beginTransaction();
                p.send(new ProducerRecord<>("tv2", 0, "k", "aborted"));
                p.flush();
                p.abortTransaction();
                epochs.add(epoch(admin, "tv2-app"));
                // offsets in the transaction: TxnOffsetCommit v5 adds the group's partition
                p.beginTransaction();
                p.send(new ProducerRecord<>("tv2", 1, "k", "last"));
                p.sendOffsetsToTransaction(Map.of(new TopicPartition("tv2", 0), new OffsetAndMetadata(7)),
                    new ConsumerGroupMetadata("tv2-group"));
                p.commitTransaction();
                epochs.add(epoch(admin, "tv2-app"));
            }
            String pid = epochs.get(0).split(":")[0];
            StringBuilder e = new StringBuilder();
            for (String s : epochs) {
                if (!s.startsWith(pid + ":")) throw new IllegalStateException("producer id changed: " + epochs);
                e.append(e.length() == 0 ? "" : ",").append(s.split(":")[1]);
            }
            System.out.println("epochs values=" + e);
            System.out.println("read committed=" + String.join(",", readCommitted("tv2", 2)));
            long offset = admin.listConsumerGroupOffsets("tv2-group").partitionsToOffsetAndMetadata().get()
                .get(new TopicPartition("tv2", 0)).offset();
            System.out.println("offsets tv2-group=" + offset);

            // a zombie: a second instance fences the first; the first's writes then fail
            KafkaProducer<String, String> zombie = producer("tv2-z");
            zombie.beginTransaction();
            zombie.send(new ProducerRecord<>("tv2", 0, "k", "zombie-1"));
            zombie.commitTransaction();
            try (KafkaProducer<String, String> fresh = producer("tv2-z")) {
                String fenced = "none";
                try {
                    zombie.beginTransaction();
                    zombie.send(new ProducerRecord<>("tv2", 0, "k", "zombie-2")).get();
                    zombie.commitTransaction();
                } catch (Exception ex) {
                    Throwable t = ex.getCause() != null ? ex.getCause() : ex;
                    fenced = t.getClass().getSimpleName();
                }
                try { zombie.close(Duration.ZERO); } catch (Exception ignored) { }
                fresh.beginTransaction();
                fresh.send(new ProducerRecord<>("tv2", 0, "k", "fresh"));
                fresh.commitTransaction();
                System.out.println("zombie fenced=" + fenced);
            }
            List<String> all = readCommitted("tv2", 2);
            System.out.println("zombie_read committed=" + String.join(",", all.stream().filter(
                v -> v.startsWith("zombie") || v.equals("fresh")).toList()));
        }
    }
}
