"""Java only for Spark (issue 26 §10): without Java on PATH, bin/kgc's commands run (--help, profiles, scenario),
the Spark engine says in one sentence that it needs Java, and bin/test — whose default run has the Spark tests —
stops in one sentence naming the package to install."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
JAVA_TOOLS = ("java", "javac", "jshell", "keytool", "jar", "jrunscript", "rmiregistry", "jpackage")


@pytest.fixture(scope="module")
def no_java(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """An environment whose PATH has every program of this machine except Java's, and no JAVA_HOME."""
    tools = tmp_path_factory.mktemp("path-without-java")
    for directory in ("/usr/local/bin", "/usr/bin", "/bin"):
        for program in sorted(Path(directory).iterdir()) if Path(directory).is_dir() else ():
            target = tools / program.name
            if program.name not in JAVA_TOOLS and not target.exists() and os.access(program, os.X_OK):
                target.symlink_to(program)
    env = {k: v for k, v in os.environ.items() if k not in ("JAVA_HOME", "KGC_COMMAND")}
    env["PATH"] = str(tools)
    assert subprocess.run(["bash", "-c", "command -v java"], env=env).returncode != 0
    return env


def _run(env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(argv), cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("args", [["--help"], ["profiles"], ["scenario", "--list"]])
def test_bin_kgc_runs_without_java(no_java: dict[str, str], args: list[str]) -> None:
    done = _run(no_java, "bin/kgc", *args)
    assert done.returncode == 0, done.stderr
    assert "Java" not in done.stderr


def test_the_spark_engine_says_it_needs_java_in_one_sentence(no_java: dict[str, str], tmp_path: Path) -> None:
    done = _run(no_java, "bin/kgc", "explore", "--engine", "spark", "--depth", "1", "--out", str(tmp_path / "o"))
    assert done.returncode == 2
    assert done.stderr == ("kgc: error: the Spark engine needs Java 17 or 21; install openjdk-17-jre-headless or "
                           "use --engine local.\n")


def test_bin_test_stops_in_one_sentence_without_java(no_java: dict[str, str]) -> None:
    done = _run(no_java, "bin/test", "--collect-only", "-q", "tests/test_layering.py")
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == ("kgc's tests need Java 17 or 21 for the Spark engine; install it with 'apt-get install -y "
                           "openjdk-17-jre-headless' (or your system's JDK 17 package) and run this again.\n")
