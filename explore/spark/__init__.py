"""The Spark engine: the local engine's BFS as a level-synchronous PySpark job (``engine.bfs``), the
session it runs in (``session.spark_session``) and a loopback standalone cluster (``cluster``)."""
