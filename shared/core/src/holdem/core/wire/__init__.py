"""The wire vocabulary shared by the services and the SDK: topic roles and names, record headers,
the id alphabet, the partitioner, and how a client reaches Kafka. No IO at import."""
