"""bin/test sets up what its tests need: Debian's chromium for the browser tests (bin/_chromium.sh).

The script runs here against a PATH of stand-ins (``id``, ``apt-get``, ``chromium``) so that no test
installs or hides the real browser: a fake apt-get records its calls and "installs" a fake chromium.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "bin" / "_chromium.sh"
#: real tools the script uses besides the stand-ins
TOOLS = ("readlink", "dirname", "mktemp", "tail", "rm", "cat", "chmod")


def _fake_bin(tmp: Path, uid: int, chromium: bool, apt_fails: bool = False) -> Path:
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    for tool in TOOLS:
        found = shutil.which(tool)
        assert found is not None, tool
        (bin_dir / tool).symlink_to(found)
    scripts = {"id": f"#!/bin/sh\necho {uid}\n"}
    fake_chromium = "#!/bin/sh\necho 'Chromium 150.0 fake'\n"
    if chromium:
        scripts["chromium"] = fake_chromium
    scripts["apt-get"] = (f"#!/bin/sh\necho \"apt-get $*\" >> {tmp}/apt.log\n"
                          + ("exit 100\n" if apt_fails else
                             f"case \"$*\" in *install*) printf '%s' \"{fake_chromium}\" > {bin_dir}/chromium; "
                             f"chmod +x {bin_dir}/chromium;; esac\n"))
    for name, text in scripts.items():
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    return bin_dir


def _run(tmp: Path, *args: str, uid: int = 0, chromium: bool = False, apt_fails: bool = False
         ) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    bin_dir = _fake_bin(tmp, uid, chromium, apt_fails)
    run = subprocess.run(["/bin/bash", str(SCRIPT), *args], capture_output=True, text=True, timeout=60,
                         env={"PATH": str(bin_dir), "HOME": str(tmp)})
    log = tmp / "apt.log"
    return run, log.read_text().splitlines() if log.exists() else []


def test_nothing_happens_when_chromium_is_there(tmp_path: Path) -> None:
    run, apt = _run(tmp_path, chromium=True)
    assert (run.returncode, apt, run.stderr) == (0, [], "")


def test_root_installs_it_with_apt_get_after_an_update(tmp_path: Path) -> None:
    run, apt = _run(tmp_path)
    assert run.returncode == 0, run.stderr
    assert apt == ["apt-get update -q", "apt-get install -y -q chromium"]
    assert "kgc: chromium installed in" in run.stderr and "Chromium 150.0 fake" in run.stderr


@pytest.mark.parametrize("uid,apt_fails,needle", [
    (1000, False, "bin/test installs only as root with apt-get"),
    (0, True, "installing chromium with apt-get failed"),
])
def test_when_it_cannot_install_it_stops_with_one_sentence_and_the_fix(tmp_path: Path, uid: int, apt_fails: bool,
                                                                       needle: str) -> None:
    run, apt = _run(tmp_path, uid=uid, apt_fails=apt_fails)
    assert run.returncode == 1
    last = run.stderr.strip().splitlines()[-1]
    assert last.startswith("kgc: ") and needle in last and "apt-get install -y chromium" in last
    assert last.count(". ") == 0 and last.endswith(".")   # one sentence
    assert apt == ([] if uid else ["apt-get update -q"])


@pytest.mark.parametrize("args", [["tests/test_world.py"], ["-m", "slow", "tests/test_gate.py"],
                                  ["--deselect", "tests/test_reports_browser.py"],
                                  ["--ignore=tests/test_reports_browser.py", "tests"]])
def test_runs_that_do_not_collect_the_browser_tests_install_nothing(tmp_path: Path, args: list[str]) -> None:
    run, apt = _run(tmp_path, *args)
    assert (run.returncode, apt) == (0, [])


@pytest.mark.parametrize("args", [[], ["tests"], ["-k", "heartbeat"], ["tests/test_reports_browser.py::test_x"]])
def test_runs_that_collect_them_install_it(tmp_path: Path, args: list[str]) -> None:
    run, apt = _run(tmp_path, *args)
    assert run.returncode == 0 and apt[-1] == "apt-get install -y -q chromium"


def test_only_the_test_command_installs_it() -> None:
    assert "_chromium.sh" in (ROOT / "bin" / "test").read_text()
    assert "chromium" not in (ROOT / "bin" / "kgc").read_text() + (ROOT / "bin" / "_bootstrap.sh").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    assert "apt-get" not in ci and "bin/test" in ci   # CI runs exactly the README's command
    assert os.access(ROOT / "bin" / "test", os.X_OK)
