"""A Spark standalone cluster on 127.0.0.1 — one master, one worker — started from the installed pyspark
package with ``bin/spark-class`` (the wheel has no sbin/start-*.sh; NOTES-spark.md §4) and stopped by pid.

    with LocalCluster(cores=2) as cluster:
        kgc explore --engine spark --master cluster.url ...
"""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from explore.spark.session import CONF_DIR, check_available


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LocalCluster:
    """Master and worker JVMs bound to 127.0.0.1 on free ports; ``url`` is the master's spark:// URL."""

    def __init__(self, cores: int = 2, memory: str = "2g", work_dir: Path | None = None,
                 start_timeout_s: float = 90.0) -> None:
        check_available()
        import pyspark
        self.spark_home = Path(pyspark.__file__).parent
        self.cores, self.memory, self.timeout = cores, memory, start_timeout_s
        self.work_dir = Path(work_dir or tempfile.mkdtemp(prefix="kgc-spark-cluster-"))
        self.work_dir.mkdir(parents=True, exist_ok=True)
        self.port, self.ui_port, self.worker_ui_port = free_port(), free_port(), free_port()
        self.url = f"spark://127.0.0.1:{self.port}"
        self.procs: list[subprocess.Popen[bytes]] = []
        self.startup_seconds = 0.0

    def _env(self) -> dict[str, str]:
        return {**os.environ, "SPARK_HOME": str(self.spark_home), "SPARK_LOCAL_IP": "127.0.0.1",
                "SPARK_CONF_DIR": str(CONF_DIR), "PYSPARK_PYTHON": sys.executable,
                "SPARK_WORKER_DIR": str(self.work_dir / "work")}

    def _spawn(self, name: str, *args: str) -> None:
        log = open(self.work_dir / f"{name}.log", "wb")   # noqa: SIM115 — kept open for the JVM's lifetime
        self.procs.append(subprocess.Popen([str(self.spark_home / "bin" / "spark-class"), *args], env=self._env(),
                                           stdout=log, stderr=subprocess.STDOUT, start_new_session=True))

    def status(self) -> dict[str, Any]:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.ui_port}/json/", timeout=2) as r:
            return json.loads(r.read())

    def start(self) -> "LocalCluster":
        t0 = time.perf_counter()
        self._spawn("master", "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                    "--port", str(self.port), "--webui-port", str(self.ui_port))
        self._spawn("worker", "org.apache.spark.deploy.worker.Worker", self.url, "--host", "127.0.0.1",
                    "--cores", str(self.cores), "--memory", self.memory, "--webui-port", str(self.worker_ui_port),
                    "--work-dir", str(self.work_dir / "work"))
        while True:
            try:
                if self.status().get("aliveworkers", 0) >= 1:
                    break
            except OSError:
                pass
            if time.perf_counter() - t0 > self.timeout or any(p.poll() is not None for p in self.procs):
                self.stop()
                raise RuntimeError(f"the Spark cluster did not come up in {self.timeout:.0f} s; "
                                   f"see {self.work_dir}/master.log and worker.log.")
            time.sleep(0.2)
        self.startup_seconds = time.perf_counter() - t0
        return self

    def stop(self) -> None:
        for p in reversed(self.procs):
            if p.poll() is None:
                p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self.procs.clear()

    def __enter__(self) -> "LocalCluster":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
