"""A Kafka 2.8 cluster's logs, written from the simulation (lab 08)."""
