"""Broker and topic configuration (Kafka's KafkaConfig, LogConfig and DynamicBrokerConfig):
parsing server.properties, the known keys and their types, topic-level configs, dynamic
changes from AlterConfigs, and the change notifications that apply them on every broker.
"""
