# Sourced by bin/demo, bin/test and bin/bench: checks the toolchains this machine kind provides and sets
# up what the project installs itself (the Python venv for the Lance interop tests).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

if ! command -v cargo >/dev/null 2>&1 && [ -f "$HOME/.cargo/env" ]; then
  # shellcheck disable=SC1091
  . "$HOME/.cargo/env"
fi
for tool in cargo java mvn python3; do
  command -v "$tool" >/dev/null 2>&1 || { echo "error: $tool is required (see README: Requirements)" >&2; exit 1; }
done
# Java 17 or newer for the binding.
java_major=$(java -XshowSettings:properties -version 2>&1 | sed -n 's/ *java.specification.version = //p')
if [ "${java_major%%.*}" -lt 17 ] 2>/dev/null; then
  echo "error: Java 17 or newer is required (found $java_major)" >&2; exit 1
fi
# Cargo's target directory (CARGO_TARGET_DIR if set); Maven's cargo builds use the same one.
TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
MVN=(mvn -B -ntp -f "$ROOT/java/pom.xml" "-Dcargo.target.dir=$TARGET_DIR")

# Python venv with the real Lance Namespace REST server (PyPI pylance), for interop tests.
setup_python_venv() {
  local venv="$ROOT/.venv"
  local stamp="$venv/.vended-storage-pylance-14.0.2"
  if [ ! -f "$stamp" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check pylance==14.0.2
    touch "$stamp"
  fi
  export VENDED_STORAGE_PYTHON="$venv/bin/python"
}

# PyPI pyspark (ships spark-submit and Spark's jars, about 450 MB) in the same venv, once: for
# bin/spark-submit-check and the Spark examples. bin/test installs it with the other downloads.
PYSPARK_VERSION=4.3.0
setup_pyspark() {
  setup_python_venv
  local venv="$ROOT/.venv"
  local stamp="$venv/.vended-storage-pyspark-$PYSPARK_VERSION"
  if [ ! -f "$stamp" ]; then
    echo "installing pyspark==$PYSPARK_VERSION into .venv"
    local started
    started=$(date +%s)
    "$venv/bin/pip" install --quiet --disable-pip-version-check "pyspark==$PYSPARK_VERSION"
    touch "$stamp"
    echo "pyspark installed in $(($(date +%s) - started)) s"
  fi
}

# PyPI pyspark of the Spark version java/delta's delta-spark is built for (delta-spark_4.1_2.13
# 4.4.0: Spark 4.1; no Delta release runs on the venv's pyspark 4.3), once, beside it in
# .venv/spark-4.1.1 (pip --target): for bin/delta-standalone-race. SPARK_HOME is its pyspark/.
DELTA_PYSPARK_VERSION=4.1.1
setup_delta_pyspark() {
  setup_python_venv
  local dir="$ROOT/.venv/spark-$DELTA_PYSPARK_VERSION"
  if [ ! -f "$dir/.vended-storage-installed" ]; then
    echo "installing pyspark==$DELTA_PYSPARK_VERSION into $dir"
    "$ROOT/.venv/bin/pip" install --quiet --disable-pip-version-check --target "$dir" \
      "pyspark==$DELTA_PYSPARK_VERSION"
    touch "$dir/.vended-storage-installed"
  fi
  DELTA_SPARK_HOME="$dir/pyspark"
}
