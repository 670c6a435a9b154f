/*
 * Prints the config definitions of the Apache Kafka jars on the class path, one JSON object a
 * line: the broker's (AbstractKafkaConfig.CONFIG_DEF, with DynamicBrokerConfig's update mode
 * and brokerConfigSynonyms), the topics' (LogConfig.configKeys, with ServerTopicConfigSynonyms)
 * and the groups' (GroupConfig.CONFIG_DEF, with its broker synonym). Facts only: names, types,
 * defaults, validators, importance; no documentation text.
 * compat_tests/test_config_definitions.py compiles and runs it against Kafka 4.4's jars.
 */

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.coordinator.group.GroupConfig;
import org.apache.kafka.server.config.AbstractKafkaConfig;
import org.apache.kafka.server.config.ConfigSynonym;
import org.apache.kafka.server.config.DynamicBrokerConfig;
import org.apache.kafka.server.config.ServerTopicConfigSynonyms;
import org.apache.kafka.storage.internals.log.LogConfig;

public class ConfigDefDump {
    static String json(String s) {
        if (s == null) return "null";
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') b.append('\\').append(c);
            else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
            else b.append(c);
        }
        return b.append('"').toString();
    }

    static String jsonList(List<String> items) {
        StringBuilder b = new StringBuilder("[");
        for (int i = 0; i < items.size(); i++) {
            if (i > 0) b.append(',');
            b.append(json(items.get(i)));
        }
        return b.append(']').toString();
    }

    static void print(String scope, ConfigDef.ConfigKey key, String mode, List<String> synonyms) {
        String dflt;
        if (!key.hasDefault()) dflt = "<required>";
        else if (key.defaultValue == null) dflt = null;
        else dflt = ConfigDef.convertToString(key.defaultValue, key.type);
        String validator = key.validator == null ? null : key.validator.toString();
        System.out.println("{\"scope\":" + json(scope) + ",\"name\":" + json(key.name)
            + ",\"type\":" + json(key.type.name()) + ",\"default\":" + json(dflt)
            + ",\"validator\":" + json(validator) + ",\"importance\":"
            + json(key.importance == null ? null : key.importance.name())
            + ",\"internal\":" + key.internalConfig + ",\"mode\":" + json(mode)
            + ",\"synonyms\":" + jsonList(synonyms) + "}");
    }

    public static void main(String[] args) {
        Map<String, String> modes = DynamicBrokerConfig.dynamicConfigUpdateModes();
        for (ConfigDef.ConfigKey key : new TreeMap<>(AbstractKafkaConfig.CONFIG_DEF.configKeys()).values()) {
            print("broker", key, modes.getOrDefault(key.name, "read-only"),
                DynamicBrokerConfig.brokerConfigSynonyms(key.name, true));
        }
        for (ConfigDef.ConfigKey key : new TreeMap<>(LogConfig.configKeys()).values()) {
            List<ConfigSynonym> syn = ServerTopicConfigSynonyms.ALL_TOPIC_CONFIG_SYNONYMS.get(key.name);
            List<String> names = syn == null ? List.of()
                : syn.stream().map(ConfigSynonym::name).toList();
            print("topic", key, null, names);
        }
        for (ConfigDef.ConfigKey key : new TreeMap<>(GroupConfig.CONFIG_DEF.configKeys()).values()) {
            Optional<String> syn = GroupConfig.brokerSynonym(key.name);
            print("group", key, null, syn.map(List::of).orElse(List.of()));
        }
    }
}
