"""Which consumer libraries can run here, and the command line that starts one.

Five libraries: kafka-python, aiokafka and confluent-kafka (librdkafka) are Python packages (the
``clients`` extra) run by wire/clients/runner.py; kafkajs 2.2.4 runs with node from
``.venv/kgc-clients/node`` (wire/clients/kafkajs_runner.js); Apache's Java client kafka-clients 3.9.1
runs wire/clients/java/KgcConsumer.java, compiled here with javac on first use against the jars in
``.venv/kgc-clients/java``. bin/_clients.sh fetches the last two. ``unavailable(lib)`` says in one
sentence why a library cannot run (its runs are then skipped, and reported as skipped).
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
from functools import lru_cache
from pathlib import Path

LIBRARIES = ("kafka-python", "aiokafka", "confluent", "kafkajs", "java")
PYTHON_MODULES = {"kafka-python": "kafka", "aiokafka": "aiokafka", "confluent": "confluent_kafka"}
HERE = Path(__file__).resolve().parent
JARS = ("kafka-clients.jar", "slf4j-api.jar", "lz4-java.jar")
SETUP = "bin/_clients.sh (run bin/kgc or bin/test once)"


def clients_dir() -> Path:
    return Path(os.environ.get("KGC_CLIENTS_DIR") or Path(sys.prefix) / "kgc-clients")


def kafkajs_dir() -> Path:
    return clients_dir() / "node" / "node_modules" / "kafkajs"


@lru_cache(maxsize=None)
def unavailable(lib: str) -> str | None:
    """Why ``lib`` cannot run here (one sentence), or None."""
    if lib in PYTHON_MODULES:
        if importlib.util.find_spec(PYTHON_MODULES[lib]) is None:
            return f"{lib} is skipped: its Python package is not installed (pip install -e '.[clients]')."
        return None
    if lib == "kafkajs":
        if shutil.which("node") is None:
            return "kafkajs is skipped: node is not installed (apt-get install -y nodejs)."
        if not (kafkajs_dir() / "package.json").is_file():
            return f"kafkajs is skipped: the npm package kafkajs 2.2.4 is not in {kafkajs_dir()} ({SETUP})."
        return None
    if lib == "java":
        if shutil.which("javac") is None or shutil.which("java") is None:
            return "java is skipped: javac is not installed (apt-get install -y openjdk-17-jdk-headless)."
        missing = [j for j in JARS if not (clients_dir() / "java" / j).is_file()]
        if missing:
            return f"java is skipped: {', '.join(missing)} not in {clients_dir() / 'java'} ({SETUP})."
        try:
            java_classes()
        except RuntimeError as exc:
            return f"java is skipped: {exc}"
        return None
    return f"{lib} is not a library kgc runs ({', '.join(LIBRARIES)})."


def _classpath() -> list[str]:
    return [str(clients_dir() / "java" / j) for j in JARS]


@lru_cache(maxsize=1)
def java_classes() -> Path:
    """The directory holding the compiled KgcConsumer (compiled once per source version)."""
    source = HERE / "java" / "KgcConsumer.java"
    digest = hashlib.sha256(source.read_bytes()).hexdigest()[:16]
    target = clients_dir() / "java" / f"classes-{digest}"
    if (target / "KgcConsumer.class").is_file():
        return target
    scratch = Path(tempfile.mkdtemp(prefix="classes-", dir=clients_dir() / "java"))
    done = subprocess.run(["javac", "-nowarn", "-cp", os.pathsep.join(_classpath()), "-d", str(scratch),
                           str(source)], capture_output=True, text=True, timeout=180)
    if done.returncode != 0:
        shutil.rmtree(scratch, ignore_errors=True)
        raise RuntimeError(f"javac failed on {source.name}: {done.stderr.strip().splitlines()[:1]}.")
    try:
        scratch.rename(target)
    except OSError:                  # another process compiled it meanwhile
        shutil.rmtree(scratch, ignore_errors=True)
    return target


def command(lib: str, python: str = sys.executable) -> list[str]:
    """The program and leading arguments that run one consumer of ``lib`` (flags follow)."""
    if lib in PYTHON_MODULES:
        return [python, "-m", "wire.clients.runner", "--lib", lib]
    if lib == "kafkajs":
        return ["node", str(HERE / "kafkajs_runner.js")]
    classpath = os.pathsep.join([str(java_classes()), *_classpath()])
    # a small heap and one GC thread: three JVMs at once on two cores stay light
    return ["java", "-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto", "-cp", classpath,
            "KgcConsumer"]
