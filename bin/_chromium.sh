# Sourced by bin/test (never by bin/kgc): the browser tests (tests/test_reports_browser.py) open the
# example reports in Debian's headless Chromium, which a bare machine does not have. When a test run
# will collect them and `chromium` is not on PATH, install it with apt-get (as root; apt-get update
# first; about a minute and 480 MB, once). When that cannot be done, stop with one sentence saying
# what to run: a browser test that skipped would let a broken report look green.
#
# Also runnable on its own for a look or a test: `bash bin/_chromium.sh [pytest args]` (exit 0 when
# chromium is there or was installed, 1 when it is needed and could not be installed).

# The absolute path of pytest path argument $2 (FILE, DIR or FILE::test; relative to the repo root $1,
# where bin/test runs pytest), or nothing when it names no file (a -k expression, a marker).
_kgc_test_path() {
  local path="${2%%::*}"
  case "$path" in /*) ;; *) path="$1/$path" ;; esac
  [ -e "$path" ] && readlink -f "$path"
}

# True when pytest run with these arguments collects tests/test_reports_browser.py: no path given (the
# whole suite) or a path that is or contains it, unless --deselect/--ignore names it.
_kgc_wants_browser() {
  local root="$1" browser arg path option="" wanted=1 any_path=0
  shift
  browser="$root/tests/test_reports_browser.py"
  for arg in "$@"; do
    if [ -n "$option" ]; then   # the value of an option that takes one
      path=$(_kgc_test_path "$root" "$arg") || path=""
      case "$option" in --deselect|--ignore) [ "$path" = "$browser" ] && return 1 ;; esac
      option=""
      continue
    fi
    case "$arg" in
      --deselect|--ignore|--ignore-glob|-k|-m|-p|-c|-o|--rootdir|--confcutdir|--basetemp) option="$arg"; continue ;;
      --deselect=*|--ignore=*)
        path=$(_kgc_test_path "$root" "${arg#*=}") || path=""
        [ "$path" = "$browser" ] && return 1
        continue ;;
      -*) continue ;;
    esac
    path=$(_kgc_test_path "$root" "$arg") || continue
    any_path=1
    case "$browser" in "$path"|"$path"/*) wanted=0 ;; esac
  done
  [ "$any_path" -eq 0 ] || [ "$wanted" -eq 0 ]
}

_kgc_ensure_chromium() {
  local root="$1" log start
  shift
  command -v chromium >/dev/null 2>&1 && return 0
  _kgc_wants_browser "$root" "$@" || return 0
  local fix="run 'apt-get update && apt-get install -y chromium' as root (or pass --deselect tests/test_reports_browser.py)"
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "kgc: the browser tests need Debian's chromium, which is not installed and which bin/test installs only as root with apt-get; $fix." >&2
    return 1
  fi
  echo "kgc: installing Debian's chromium for the browser tests (apt-get update && apt-get install -y chromium; about a minute, once)" >&2
  log=$(mktemp)
  start=$SECONDS
  if ! { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium; } >"$log" 2>&1; then
    tail -n 40 "$log" >&2
    rm -f "$log"
    echo "kgc: installing chromium with apt-get failed (its output is above); fix that and $fix." >&2
    return 1
  fi
  rm -f "$log"
  if ! command -v chromium >/dev/null 2>&1; then
    echo "kgc: apt-get installed chromium but there is no 'chromium' on PATH; $fix." >&2
    return 1
  fi
  echo "kgc: chromium installed in $((SECONDS - start)) s: $(chromium --version 2>/dev/null)" >&2
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then   # run on its own
  _kgc_ensure_chromium "$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd -P)" "$@"
  exit $?
fi
