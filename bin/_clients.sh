# Sourced by bin/kgc and bin/test after _bootstrap.sh: the real-client libraries that are not Python
# packages, for `kgc conform --clients` and tests/test_conform_clients.py. Each goes into
# .venv/kgc-clients/ (the venv's lifetime: delete .venv/ to start over) and is fetched once:
#   - kafkajs 2.2.4 (npm) into .venv/kgc-clients/node, run with node 20;
#   - Apache's Java client kafka-clients 3.9.1 with slf4j-api 1.7.36 and lz4-java, taken from the PyPI
#     wheel shigawire-apache-flink-libraries 2.0.0.post1 (pyflink/lib/*.jar) into .venv/kgc-clients/java;
#     wire/clients/artefacts.py compiles the small consumer with javac on first use.
# A library that cannot be set up is reported in one sentence on stderr and skipped by the runs (which say
# so again); nothing here fails the command.

_kgc_clients="$KGC_VENV/kgc-clients"
_kgc_kafkajs="kafkajs@2.2.4"
_kgc_flink="shigawire-apache-flink-libraries==2.0.0.post1"
mkdir -p "$_kgc_clients"
if command -v flock >/dev/null 2>&1; then
  exec 8>"$_kgc_clients/.lock"
  flock 8
fi

if [ "$(cat "$_kgc_clients/node/.kgc-installed" 2>/dev/null)" != "$_kgc_kafkajs" ]; then
  if command -v npm >/dev/null 2>&1; then
    echo "kgc: installing $_kgc_kafkajs into .venv/kgc-clients/node (once)" >&2
    mkdir -p "$_kgc_clients/node"
    if (cd "$_kgc_clients/node" && npm install --silent --no-audit --no-fund --no-save --prefix . "$_kgc_kafkajs" \
          >"$_kgc_clients/node/npm.log" 2>&1); then
      echo "$_kgc_kafkajs" > "$_kgc_clients/node/.kgc-installed"
    else
      echo "kgc: npm could not install $_kgc_kafkajs (see .venv/kgc-clients/node/npm.log); kafkajs runs are skipped." >&2
    fi
  else
    echo "kgc: npm is not installed, so kafkajs runs are skipped (apt-get install -y npm)." >&2
  fi
fi

if [ "$(cat "$_kgc_clients/java/.kgc-installed" 2>/dev/null)" != "$_kgc_flink" ]; then
  echo "kgc: fetching kafka-clients 3.9.1 from $_kgc_flink into .venv/kgc-clients/java (once, 92 MB)" >&2
  mkdir -p "$_kgc_clients/java/wheel"
  if "$KGC_VENV/bin/python" -m pip download -q --disable-pip-version-check --no-deps -d "$_kgc_clients/java/wheel" \
        "$_kgc_flink" >"$_kgc_clients/java/pip.log" 2>&1 \
     && "$KGC_VENV/bin/python" - "$_kgc_clients/java" <<'PY'
import pathlib, sys, zipfile
root = pathlib.Path(sys.argv[1])
[wheel] = sorted((root / "wheel").glob("shigawire_apache_flink_libraries-2.0.0.post1-*.whl"))
with zipfile.ZipFile(wheel) as z:
    for name in ("kafka-clients.jar", "slf4j-api.jar", "lz4-java.jar"):
        (root / name).write_bytes(z.read(f"pyflink/lib/{name}"))
PY
  then
    rm -rf "$_kgc_clients/java/wheel"
    echo "$_kgc_flink" > "$_kgc_clients/java/.kgc-installed"
  else
    echo "kgc: could not fetch $_kgc_flink (see .venv/kgc-clients/java/pip.log); Java client runs are skipped." >&2
  fi
fi

if command -v flock >/dev/null 2>&1; then
  exec 8>&-
fi
unset _kgc_clients _kgc_kafkajs _kgc_flink
