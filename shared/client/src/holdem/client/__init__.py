"""The operator's SDK: connect to the game's Kafka, send commands, follow rounds."""
