# Sourced by bin/kgc and bin/test: make sure that .venv in the repo root holds kgc (editable) with its Spark and
# dev extras, and — for bin/test, which sets KGC_NEEDS_JAVA=1 — that Java is there. Sets KGC_ROOT and KGC_VENV.
#
# Needs only Python 3.11+ and git (and a JDK for the tests); reaches nothing but the Python package index.
# Reinstalls only when pyproject.toml changed (hash kept in .venv/.kgc-installed).
# Every message goes to stderr so that `bin/kgc` keeps stdout for the command's own output.

_kgc_die() { echo "$*" >&2; exit 1; }

# The repo root is the parent of the directory holding this file, wherever we are called from.
KGC_ROOT=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd -P)
KGC_VENV="$KGC_ROOT/.venv"

# --- Java: PySpark 4.x needs Java 17 or 21 (NOTES-spark.md §1), and only the Spark engine uses PySpark: the
# caller asks for the check with KGC_NEEDS_JAVA=1 (bin/test: the Spark tests are in its default run). bin/kgc does
# not (kgc's Spark paths say themselves, in one sentence, that Java is missing). Cheap, so checked first.
if [ "${KGC_NEEDS_JAVA:-0}" = 1 ]; then
  _kgc_java=""
  if command -v java >/dev/null 2>&1; then
    _kgc_java=java
  elif [ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/java" ]; then
    _kgc_java="$JAVA_HOME/bin/java"
  fi
  if [ -z "$_kgc_java" ]; then
    _kgc_die "kgc's tests need Java 17 or 21 for the Spark engine; install it with" \
      "'apt-get install -y openjdk-17-jre-headless' (or your system's JDK 17 package) and run this again."
  fi
  # `java -version` prints e.g. 'openjdk version "17.0.15" ...', '... "21" ...' or 'java version "1.8.0_392"'.
  _kgc_java_major=$("$_kgc_java" -version 2>&1 \
    | sed -n -e 's/.*version "1\.\([0-9][0-9]*\).*/\1/p' -e 't' -e 's/.*version "\([0-9][0-9]*\).*/\1/p' \
    | head -n 1) || _kgc_java_major=""
  if [ -n "$_kgc_java_major" ] && [ "$_kgc_java_major" -lt 17 ]; then
    _kgc_die "kgc's tests need Java 17 or 21 for the Spark engine but found Java $_kgc_java_major; install" \
      "'openjdk-17-jre-headless' (or your system's JDK 17 package), put it first on PATH and run this again."
  fi
fi

# --- Python: python3.11, else python3 when it is 3.11 or newer. -----------------------------
_kgc_python_ok() {  # true when "$1" runs, is Python 3.11+ and (for a venv) has pip
  "$1" -c "import sys; ${2:-} sys.exit(0 if sys.version_info >= (3, 11) else 1)" >/dev/null 2>&1
}

mkdir -p "$KGC_VENV"
# Two bin/ commands started at once on a fresh clone must not install into the same venv together.
if command -v flock >/dev/null 2>&1; then
  exec 9>"$KGC_VENV/.kgc-lock"
  flock 9
fi

if ! _kgc_python_ok "$KGC_VENV/bin/python" "import pip;"; then
  _kgc_py=""
  for _kgc_candidate in python3.11 python3; do
    if command -v "$_kgc_candidate" >/dev/null 2>&1 && _kgc_python_ok "$_kgc_candidate"; then
      _kgc_py="$_kgc_candidate"
      break
    fi
  done
  [ -n "$_kgc_py" ] \
    || _kgc_die "kgc needs Python 3.11 or newer as 'python3.11' or 'python3' on PATH; install it and run this again."
  echo "kgc: creating .venv with $("$_kgc_py" --version 2>&1)" >&2
  # A broken or too-old venv is emptied first; the lock file we hold stays.
  find "$KGC_VENV" -mindepth 1 -maxdepth 1 ! -name .kgc-lock -exec rm -rf {} +
  "$_kgc_py" -m venv "$KGC_VENV" || _kgc_die "kgc: could not create $KGC_VENV (see the error above)."
fi

# --- Install: only when pyproject.toml changed since the last successful install. -------------
_kgc_extras="spark,dev,clients"    # what the README's two commands need, the test suite's clients included
# the hash covers the extras too, so a venv installed with fewer of them is topped up
_kgc_hash=$( { cat "$KGC_ROOT/pyproject.toml"; echo "$_kgc_extras"; } | sha256sum | cut -d' ' -f1)
if [ "$(cat "$KGC_VENV/.kgc-installed" 2>/dev/null)" != "$_kgc_hash" ]; then
  echo "kgc: installing kgc and its dependencies into .venv (the first time takes about a minute)" >&2
  # pip -q still prints one harmless warning per package for extra local index directories
  # that lack it ("Location 'file:///…' is ignored"); drop only those lines, keep everything else.
  _kgc_log=$(mktemp)
  _kgc_rc=0
  (cd "$KGC_ROOT" && "$KGC_VENV/bin/python" -m pip install -q --disable-pip-version-check \
      -e ".[$_kgc_extras]") >"$_kgc_log" 2>&1 || _kgc_rc=$?
  grep -vE "^WARNING: Location '[^']*' is ignored: it is neither a file nor a directory\.$" "$_kgc_log" >&2 || true
  rm -f "$_kgc_log"
  [ "$_kgc_rc" -eq 0 ] \
    || _kgc_die "kgc: installing into $KGC_VENV failed (see pip's error above); fix it and run this again."
  echo "$_kgc_hash" > "$KGC_VENV/.kgc-installed"
fi

if command -v flock >/dev/null 2>&1; then
  exec 9>&-
fi
unset _kgc_java _kgc_java_major _kgc_py _kgc_candidate _kgc_hash _kgc_log _kgc_rc _kgc_extras
