"""Kafka's own coordinator test suites restated as kgc tests, one module per Kafka test file (issue 27)."""
