"""The committed example counterexample renders in a real browser: Debian's headless Chromium.

* report.html opens without errors: the DOM Chromium builds has the title, the inline SVG sequence
  diagram and the highlighted violating row, and Chromium's stderr shows no error for the page.
* report.md's Mermaid block renders with the real Mermaid library (the npm package ``mermaid``,
  pinned to MERMAID_VERSION and fetched once with ``npm pack`` into .kgc-cache/, which is gitignored):
  a tiny local page loads ``dist/mermaid.min.js`` and renders the block to an SVG. A deliberately
  broken diagram is rendered next to it as a control, so the check is shown able to fail.

Chromium comes from Debian's package (``/usr/bin/chromium``); no test tool downloads a browser.
``bin/test`` (the README's test command, which CI runs) installs it with apt-get before pytest starts
when a run collects these tests and it is missing (bin/_chromium.sh, as root). Run any other way
without it, a missing Chromium FAILS these tests with the one command that installs it, rather than
skipping them: a skipped check would let a broken report look green.

What Chromium prints and these tests ignore (see HARMLESS): the Debian launcher's shell error from
its /dev/shm size check, D-Bus connection errors (there is no system bus in a container or on CI),
warnings about the GPU, VA-API and the sandbox (we run with --disable-gpu and --no-sandbox as
root), and what Chromium's own plumbing logs when the machine is busy: the software compositor's
"non-existent mailbox" errors, the page-load metrics' "Invalid first_paint" timing records and a renderer
message to blink.mojom.FrameWidgetHost rejected by the browser process.
Any other ERROR or FATAL line, any console message from the page, and any line that is not
Chromium's log format fail the test; other WARNING/INFO lines from Chromium's own source files are
about the browser, not the page, and are tolerated.

Set KGC_BROWSER_SCREENSHOTS=<dir> to also save PNG screenshots of both pages there for a look.
"""
from __future__ import annotations

import base64
import hashlib
import html
import json
import os
import re
import shutil
import signal
import subprocess
import tarfile
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "reports" / "examples" / "rebalance-timeout-min"
REPORT_TITLE = "rebalance-timeout-is-the-maximum violated on mutant rebalance-timeout-min (profile 3.9)"

CHROMIUM = "/usr/bin/chromium"
INSTALL_HINT = "kgc's browser tests need Debian's chromium: run 'apt-get install -y chromium'"
#: the flags known to work on these machines (headless, no network chatter, fresh profile per run);
#: --disable-dev-shm-usage because the Debian launcher's own /dev/shm check is broken here (HARMLESS)
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--enable-logging=stderr", "--v=0")
TIMEOUT_S = 90

MERMAID_VERSION = "12.3.0"
#: the registry's dist.integrity of mermaid-12.3.0.tgz, checked after download
MERMAID_INTEGRITY = "sha512-4113TdXeLAsMruJ79OpFL5O8+LTFXhQqZ260rF3tgUmiNAtRm4Uume04I+65PRN6yZ69J4f8rVYWW8zRk65UYw=="
MERMAID_DIR = ROOT / ".kgc-cache" / "npm" / f"mermaid-{MERMAID_VERSION}"

#: Chromium's log line: [pid:tid:MMDD/HHMMSS.micro:LEVEL:source/file.cc:line] message
LOG_LINE = re.compile(r"^\[\d+:\d+:\d{4}/\d{6}\.\d+:(?P<level>[A-Z]+):(?P<source>[^\]]+)\] (?P<message>.*)$")
#: stderr lines that say nothing about the page, each with why it is harmless
HARMLESS = (
    # Debian's launcher sources /etc/chromium.d/dev-shm, whose `[ $(findmnt ... /dev/shm) -lt ... ]`
    # breaks when findmnt prints more than one number; the check only decides --disable-dev-shm-usage,
    # which FLAGS passes anyway.
    re.compile(r"^/usr/bin/chromium: \d+: \[: .*unexpected operator$"),
    # No D-Bus system/session bus in a container or on CI: connection errors, failed NameHasOwner /
    # GetAll calls (UPower, bluez/Floss, the screensaver idle service).
    re.compile(r"^\[[^\]]*:(ERROR|WARNING):(dbus/|device/bluetooth/dbus/)[^\]]*\] "),
    re.compile(r"^\[[^\]]*:WARNING:ui/base/idle/idle_linux\.cc:\d+\] None of the known D-Bus ScreenSaver services"),
    # No GPU device for VA-API video decoding (we pass --disable-gpu anyway).
    re.compile(r"^\[[^\]]*:WARNING:media/gpu/vaapi/vaapi_wrapper\.cc:\d+\] "
               r"drmGetDevices2\(\) has not found any devices$"),
    # --no-sandbox (needed as root): the GPU process notes the sandbox is set up with threads running.
    re.compile(r"^\[[^\]]*:WARNING:sandbox/policy/linux/sandbox_linux\.cc:\d+\] InitializeSandbox\(\) called with "
               r"multiple threads in process gpu-process\.$"),
    # The software compositor's shared-image bookkeeping under load (a busy 2-core box): frames whose GPU
    # mailbox was already released. Inside the GPU process, about compositing, not about the page.
    re.compile(r"^\[[^\]]*:ERROR:gpu/command_buffer/service/shared_image/shared_image_manager\.cc:\d+\] "
               r"SharedImageManager::ProduceMemory: Trying to Produce a Memory representation from a "
               r"non-existent mailbox\.$"),
    # The browser's page-load metrics bookkeeping: under load the first paint and first meaningful paint can be
    # timed a millisecond out of order (seen on a busy 2-core box running the suite on two workers). About the
    # browser's own timing records, not about the page.
    re.compile(r"^\[[^\]]*:ERROR:components/page_load_metrics/browser/page_load_metrics_update_dispatcher\.cc:\d+\] "
               r"Invalid first_paint [\d.]+ s for first_meaningful_paint [\d.]+ s$"),
    # The browser process dropping a renderer's late IPC message to its frame widget host (input/visual
    # properties racing the page's first frames on a loaded box): Chromium's own plumbing, not the page.
    re.compile(r"^\[[^\]]*:ERROR:mojo/public/cpp/bindings/lib/interface_endpoint_client\.cc:\d+\] "
               r"Message \d+ rejected by interface blink\.mojom\.FrameWidgetHost$"),
)


def page_problems(stderr: str) -> list[str]:
    """The stderr lines that are about the page or that we do not recognise (see the module docstring)."""
    bad = []
    for line in stderr.splitlines():
        if not line.strip() or any(p.search(line) for p in HARMLESS):
            continue
        m = LOG_LINE.match(line)
        if m is None or m["level"] in ("ERROR", "FATAL") or m["source"].startswith("CONSOLE") \
                or "Uncaught" in m["message"]:
            bad.append(line)
    return bad


def test_the_noise_filter_keeps_page_errors() -> None:
    noise = ("/usr/bin/chromium: 9: [: 25276502016: unexpected operator\n"
             "[3389:3418:1122/035540.032023:ERROR:dbus/bus.cc:405] Failed to connect to the bus: x\n"
             "[3432:3432:1122/035540.285379:WARNING:media/gpu/vaapi/vaapi_wrapper.cc:1655] drmGetDevices2() has "
             "not found any devices\n"
             "[30982:31026:1122/101608.670888:ERROR:gpu/command_buffer/service/shared_image/shared_image_manager.cc:"
             "401] SharedImageManager::ProduceMemory: Trying to Produce a Memory representation from a non-existent "
             "mailbox.\n"
             "[25232:25232:1124/230045.472093:ERROR:components/page_load_metrics/browser/"
             "page_load_metrics_update_dispatcher.cc:195] Invalid first_paint 1.081 s for "
             "first_meaningful_paint 1.08 s\n"
             "[30424:30424:1124/232057.727193:ERROR:mojo/public/cpp/bindings/lib/interface_endpoint_client.cc:652] "
             "Message 1736548692 rejected by interface blink.mojom.FrameWidgetHost\n")
    errors = ('[3552:3552:1122/035545.084317:INFO:CONSOLE:2] "an error", source: file:///p.html (2)\n'
              "[3800:3800:1122/035606.601700:ERROR:components/headless/command_handler/headless_command_handler.cc:"
              "403] Page load failed: net::ERR_FILE_NOT_FOUND\n"
              "Segmentation fault\n")
    assert page_problems(noise) == []
    assert len(page_problems(noise + errors)) == 3


def _chromium() -> str:
    found = CHROMIUM if os.access(CHROMIUM, os.X_OK) else shutil.which("chromium")
    if not found:
        pytest.fail(INSTALL_HINT + " (bin/test does that itself when run as root)", pytrace=False)
    return found


def run_chromium(url: str, *extra: str) -> tuple[str, str]:
    """(stdout, stderr) of one headless Chromium run on ``url`` with a fresh profile; fails on a bad exit."""
    with tempfile.TemporaryDirectory(prefix="kgc-chromium-") as profile:
        cmd = [_chromium(), *FLAGS, f"--user-data-dir={profile}", *extra, url]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
        try:
            out, err = proc.communicate(timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)     # the browser and its helper processes
            out, err = proc.communicate()
            pytest.fail(f"chromium did not finish {url} within {TIMEOUT_S} s; stderr ends:\n{err[-3000:]}")
    assert proc.returncode == 0, f"chromium exited {proc.returncode} on {url}:\n{err[-3000:]}"
    return out, err


def _screenshot(url: str, name: str, *extra: str) -> None:
    """Only when KGC_BROWSER_SCREENSHOTS names a directory: a PNG of the page, for a person to look at."""
    target = os.environ.get("KGC_BROWSER_SCREENSHOTS")
    if target:
        Path(target).mkdir(parents=True, exist_ok=True)
        run_chromium(url, f"--screenshot={Path(target).resolve() / name}", "--window-size=1400,1800",
                     "--hide-scrollbars", *extra)


def test_report_html_opens_in_headless_chromium_without_errors() -> None:
    page = EXAMPLE / "report.html"
    source = page.read_text(encoding="utf-8")
    dom, err = run_chromium(page.as_uri(), "--dump-dom")
    assert page_problems(err) == [], "chromium reported problems with the page"
    assert f"<title>{html.escape(REPORT_TITLE)}</title>" in dom and f"<h1>{html.escape(REPORT_TITLE)}</h1>" in dom
    assert dom.count("<svg") == 1 and 'aria-label="sequence diagram"' in dom
    assert dom.count("<line") == source.count("<line") > 5          # the lanes and arrows survived parsing
    assert dom.count('<tr class="violation">') == 1
    assert dom.count("<tr") == source.count("<tr")                   # no row lost to a malformed table
    assert "kgc replay reports/examples/rebalance-timeout-min/counterexample.json" in dom
    assert "<script" not in dom
    _screenshot(page.as_uri(), "report-html.png")


def _fetch_mermaid() -> Path:
    """dist/mermaid.min.js of the pinned mermaid package, fetched once from the npm registry."""
    script = MERMAID_DIR / "package" / "dist" / "mermaid.min.js"
    if script.is_file():
        return script
    npm = shutil.which("npm")
    if npm is None:
        pytest.fail("kgc's browser tests need npm to fetch the mermaid package: install Node.js with npm "
                    "(e.g. 'apt-get install -y npm')", pytrace=False)
    MERMAID_DIR.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="mermaid-", dir=MERMAID_DIR.parent) as tmp:
        # `npm pack` fetches only the package's tarball (the bundled dist/ needs none of its dependencies)
        # and runs no install scripts.
        run = subprocess.run([npm, "pack", f"mermaid@{MERMAID_VERSION}", "--pack-destination", tmp,
                              "--no-fund", "--no-audit", "--loglevel=error"],
                             cwd=tmp, capture_output=True, text=True, timeout=300)
        tarball = Path(tmp) / f"mermaid-{MERMAID_VERSION}.tgz"
        assert run.returncode == 0 and tarball.is_file(), \
            f"'npm pack mermaid@{MERMAID_VERSION}' failed:\n{run.stdout[-2000:]}{run.stderr[-2000:]}"
        data = tarball.read_bytes()
        integrity = "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()
        assert integrity == MERMAID_INTEGRITY, f"mermaid-{MERMAID_VERSION}.tgz has integrity {integrity}"
        staged = Path(tmp) / "staged"
        with tarfile.open(tarball) as tar:
            members = [tar.getmember(f"package/{name}") for name in ("package.json", "LICENSE", "dist/mermaid.min.js")]
            tar.extractall(staged, members=members, filter="data")
        version = json.loads((staged / "package" / "package.json").read_text(encoding="utf-8"))["version"]
        assert version == MERMAID_VERSION, version
        try:
            staged.rename(MERMAID_DIR)                  # atomic: a concurrent run may have won the race
        except OSError:
            if not script.is_file():
                raise
    return script


#: broken on purpose (an arrow Mermaid does not know): the control that must come out as a parse error
BROKEN = "sequenceDiagram\n    participant c0\n    c0=>>coord: JoinGroup#35;1\n"

MERMAID_PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>kgc mermaid check</title><script src="{script}"></script></head>
<body><div id="example">pending</div><div id="control">pending</div>
<script>
mermaid.initialize({{startOnLoad: false, securityLevel: "strict"}});
async function show(id, text) {{
  const box = document.getElementById(id);
  try {{
    await mermaid.parse(text);
    box.innerHTML = (await mermaid.render(id + "-svg", text)).svg;
    box.dataset.result = "rendered";
  }} catch (e) {{
    box.textContent = "RENDER FAILED: " + e;
    box.dataset.result = "failed";
  }}
}}
show("example", {example}).then(() => show("control", {control}));
</script></body></html>
"""


def _js_string(text: str) -> str:
    return json.dumps(text).replace("</", "<\\/")


def _box(dom: str, box_id: str) -> str:
    start = dom.index(f'<div id="{box_id}"')
    end = dom.find('<div id="control"', start + 1) if box_id == "example" else dom.index("<script", start)
    return dom[start:end]


def test_report_markdown_mermaid_block_renders_with_mermaid(tmp_path: Path) -> None:
    md = (EXAMPLE / "report.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```mermaid\n(.*?)^```$", md, re.S | re.M)
    assert len(blocks) == 1, "report.md should have exactly one ```mermaid block"
    diagram = blocks[0]
    page = tmp_path / "mermaid.html"
    page.write_text(MERMAID_PAGE.format(script=html.escape(_fetch_mermaid().as_uri()),
                                        example=_js_string(diagram), control=_js_string(BROKEN)), encoding="utf-8")
    dom, err = run_chromium(page.as_uri(), "--dump-dom", "--virtual-time-budget=15000")
    assert page_problems(err) == [], "chromium reported problems with the Mermaid page"

    control = _box(dom, "control")
    assert 'data-result="failed"' in control and "Parse error" in control, control[:500]

    example = _box(dom, "example")
    assert 'data-result="rendered"' in example, example[:1000]
    assert "<svg" in example and "Syntax error" not in example and "Parse error" not in example
    # every message and note made it into the picture with its full text ('#' survives as #35;)
    messages = [m.split(": ", 1)[1].replace("#35;", "#") for m in diagram.splitlines()
                if re.match(r"\s+(\w+(->>|-->>|-x ?)\w+|Note over [\w,]+): ", m)]
    texts = [html.unescape(t) for t in
             re.findall(r'class="(?:messageText|noteText)"[^>]*>(?:<tspan[^>]*>)?([^<]*)<', example)]
    assert sorted(texts) == sorted(messages), "Mermaid dropped or cut the text of some messages or notes"
    assert "VIOLATION rebalance-timeout-is-the-maximum" in texts

    _screenshot(page.as_uri(), "report-mermaid.png", "--virtual-time-budget=15000")
