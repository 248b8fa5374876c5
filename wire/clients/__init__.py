"""Real Kafka consumers as test drivers, and the client-visible properties judged from their logs."""
