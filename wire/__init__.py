"""The Kafka protocol boundary: kgc serve and, later, black-box conformance (DESIGN.md §2)."""
