"""Commands printed as hints ("replay: bin/kgc replay …"), written so that they work as printed: the command the
user started kgc with, and paths relative to the user's current directory.

bin/kgc exports the path it was started by (``KGC_COMMAND``: ``bin/kgc``, ``../kgc/bin/kgc``, …) before it hands
over to the virtual environment's ``kgc``, whose own path the user never typed. Report files do not use this:
their bytes must not depend on how kgc was started (they name ``kgc`` and repo-relative paths).
"""
from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path


def kgc_command() -> str:
    """How to run kgc again from the current directory, as this process was started."""
    given = os.environ.get("KGC_COMMAND")
    if given:
        return shlex.quote(given)
    argv0 = sys.argv[0] if sys.argv else ""
    name = os.path.basename(argv0)
    if name == "kgc":
        on_path = shutil.which("kgc")
        if on_path is not None and os.path.realpath(on_path) == os.path.realpath(argv0):
            return "kgc"
        return shlex.quote(argv0)
    if argv0.endswith(os.path.join("kgc", "__main__.py")):
        return f"{shown_path(sys.executable)} -m kgc"     # the interpreter that runs this kgc, as it is reached here
    return "kgc"


def shown_path(path: Path | str) -> str:
    """``path`` as a user in the current directory types it: relative when it lies below, else absolute."""
    absolute = Path(os.path.abspath(path))
    try:
        text = str(absolute.relative_to(Path.cwd()))
    except ValueError:
        text = str(absolute)
    return shlex.quote(text)


def replay_hint(trace: Path | str) -> str:
    return f"{kgc_command()} replay {shown_path(trace)}"


__all__ = ["kgc_command", "replay_hint", "shown_path"]
