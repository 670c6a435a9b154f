// Delegation tokens with Apache Kafka's Java client: the Admin API creates, describes, renews and
// expires a token on one broker; a producer and a consumer authenticate with it (SCRAM with
// tokenauth=true) on another broker of the same cluster.
//
// Compiled and run by compat_tests/suites/test_delegation_tokens.py:
//     java -cp CLASSPATH TokenClient BOOTSTRAP_A BOOTSTRAP_B TOPIC
// BOOTSTRAP_A and _B are SASL_PLAINTEXT listeners serving PLAIN (users admin and bob) and
// SCRAM-SHA-512. Each check prints one line, "check key=value ...".

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ExecutionException;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.CreateDelegationTokenOptions;
import org.apache.kafka.clients.admin.ExpireDelegationTokenOptions;
import org.apache.kafka.clients.admin.RenewDelegationTokenOptions;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.token.delegation.DelegationToken;
import org.apache.kafka.common.security.token.delegation.TokenInformation;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

public class TokenClient {
    static Properties plain(String bootstrap, String user, String password) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("security.protocol", "SASL_PLAINTEXT");
        p.put("sasl.mechanism", "PLAIN");
        p.put("sasl.jaas.config", "org.apache.kafka.common.security.plain.PlainLoginModule required"
            + " username=\"" + user + "\" password=\"" + password + "\";");
        return p;
    }

    static Properties token(String bootstrap, String tokenId, String hmac) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("security.protocol", "SASL_PLAINTEXT");
        p.put("sasl.mechanism", "SCRAM-SHA-512");
        p.put("sasl.jaas.config", "org.apache.kafka.common.security.scram.ScramLoginModule required"
            + " username=\"" + tokenId + "\" password=\"" + hmac + "\" tokenauth=true;");
        p.put("request.timeout.ms", "5000");
        p.put("default.api.timeout.ms", "5000");
        return p;
    }

    static String error(Throwable t) {
        Throwable cause = t instanceof ExecutionException && t.getCause() != null ? t.getCause() : t;
        return cause.getClass().getSimpleName();
    }

    // "ok" once an Admin with these settings sees the cluster, else the last error's class
    static String login(Properties props, boolean expectOk) throws InterruptedException {
        String last = "none";
        long deadline = System.currentTimeMillis() + 20000;
        while (System.currentTimeMillis() < deadline) {
            try (Admin admin = Admin.create(props)) {
                admin.describeCluster().nodes().get();
                last = "ok";
            } catch (Exception e) {
                last = error(e);
            }
            if (last.equals("ok") == expectOk) return last;
            Thread.sleep(300);
        }
        return last;
    }

    static String describe(TokenInformation info) {
        List<String> renewers = new ArrayList<>();
        for (KafkaPrincipal r : info.renewers()) renewers.add(r.toString());
        return "owner=" + info.owner() + " requester=" + info.tokenRequester()
            + " renewers=" + String.join(",", renewers);
    }

    public static void main(String[] args) throws Exception {
        String a = args[0], b = args[1], topic = args[2];
        try (Admin admin = Admin.create(plain(a, "admin", "admin-secret"));
             Admin bob = Admin.create(plain(b, "bob", "bob-secret"))) {
            DelegationToken created = admin.createDelegationToken(new CreateDelegationTokenOptions()
                .renewers(Collections.singletonList(new KafkaPrincipal("User", "bob")))).delegationToken().get();
            TokenInformation info = created.tokenInfo();
            String id = info.tokenId(), hmac = created.hmacAsBase64String();
            System.out.println("check created " + describe(info)
                + " lifetime_ms=" + (info.maxTimestamp() - info.issueTimestamp())
                + " expiry_ms=" + (info.expiryTimestamp() - info.issueTimestamp()));

            List<DelegationToken> described = bob.describeDelegationToken().delegationTokens().get();
            boolean same = described.size() == 1 && described.get(0).equals(created);
            System.out.println("check described_by_renewer count=" + described.size() + " same=" + same);

            String hmacB64 = Base64.getEncoder().encodeToString(created.hmac());
            System.out.println("check login_other_broker " + login(token(b, id, hmacB64), true));
            System.out.println("check wrong_hmac " + login(token(b, id, "AAAA" + hmacB64.substring(4)), false));
            System.out.println("check unknown_token " + login(token(b, "no-such-token", hmacB64), false));

            try (KafkaProducer<String, String> producer = new KafkaProducer<>(
                     with(token(b, id, hmac), ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName(),
                          ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName()))) {
                for (String v : new String[] {"t0", "t1", "t2"})
                    producer.send(new ProducerRecord<>(topic, v)).get();
            }
            List<String> values = new ArrayList<>();
            try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(
                     with(token(b, id, hmac), ConsumerConfig.GROUP_ID_CONFIG, "token-group",
                          ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
                          ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName(),
                          ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName()))) {
                consumer.subscribe(Collections.singletonList(topic));
                long deadline = System.currentTimeMillis() + 30000;
                while (values.size() < 3 && System.currentTimeMillis() < deadline)
                    for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(500)))
                        values.add(r.value());
            }
            System.out.println("check token_round_trip values=" + String.join(",", values));

            try (Admin tokenAdmin = Admin.create(token(b, id, hmac))) {
                tokenAdmin.createDelegationToken().delegationToken().get();
                System.out.println("check token_creates_token error=none");
            } catch (ExecutionException e) {
                System.out.println("check token_creates_token error=" + error(e));
            }

            long renewed = bob.renewDelegationToken(created.hmac(),
                new RenewDelegationTokenOptions().renewTimePeriodMs(60000)).expiryTimestamp().get();
            TokenInformation after = bob.describeDelegationToken().delegationTokens().get().get(0).tokenInfo();
            System.out.println("check renewed_by_renewer matches=" + (after.expiryTimestamp() == renewed)
                + " within_ms=" + (renewed - System.currentTimeMillis() <= 60000));

            try {
                admin.renewDelegationToken("not-an-hmac".getBytes(StandardCharsets.UTF_8)).expiryTimestamp().get();
                System.out.println("check renew_unknown error=none");
            } catch (ExecutionException e) {
                System.out.println("check renew_unknown error=" + error(e));
            }

            long expired = admin.expireDelegationToken(created.hmac(),
                new ExpireDelegationTokenOptions().expiryTimePeriodMs(-1)).expiryTimestamp().get();
            System.out.println("check expired now=" + (Math.abs(expired - System.currentTimeMillis()) < 10000)
                + " left=" + admin.describeDelegationToken().delegationTokens().get().size());
            System.out.println("check login_after_expire " + login(token(b, id, hmac), false));
        }
    }

    static Properties with(Properties p, String... kv) {
        for (int i = 0; i < kv.length; i += 2) p.put(kv[i], kv[i + 1]);
        return p;
    }
}
