#!/usr/bin/env bash
# Spark vs S3A and random reads vs the SDK (issue 23); `bin/bench --suite spark|random` runs this.
# Not part of bin/test. One JVM (Spark local[2]) against one `local-s3 --in-memory` on 127.0.0.1.
#
#   bin/bench --suite spark --scale-mb 200 --rounds 2      # quick run (~200 MiB of Parquet)
#   bin/bench --suite spark                                # ~2 GiB table, 3 alternating rounds
#   bin/bench --suite spark --jfr /tmp/jfr                 # + one JFR recording per query run
#   bin/bench --suite spark --profile-threads /tmp/prof     # + one perf profile per query run (root),
#                                    CPU per GiB by thread and stack: thread_profile.py (issue 34)
#   bin/bench --suite random [--scale-mb 1024] [--budget-mb 256] [--rounds 3]
#   bin/bench --suite integrity [--rounds 9] [--ops read,write]   # checksums on/off vs the SDK
#   bin/bench --suite delta [--scale-mb 1024] [--appends 20] [--rounds 2]   # Delta vs S3A
#
# Builds first (BENCH_SKIP_BUILD=1 skips): installs the binding, the testkit and the hadoop module
# into the local Maven repository (as docs/testkit.md does), then this module, which alone depends
# on hadoop-aws and the AWS SDK v2 bundle (no reactor lists it). Bytes on the loopback are counted
# with iptables rules on the endpoint's port when run as root (installed with apt-get if missing);
# otherwise those columns are "-". Tables: stdout, java/benchmarks/spark/target/<suite>-results.md,
# summary: target/spark-results.json.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../../.." && pwd)"
TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
if ! command -v cargo >/dev/null 2>&1 && [ -f "$HOME/.cargo/env" ]; then
  # shellcheck disable=SC1091
  . "$HOME/.cargo/env"
fi
suite=spark
profile=
prev=
for a in "$@"; do
  [ "$prev" = --suite ] && suite="$a"
  [ "$prev" = --profile-threads ] && profile="$a"
  prev="$a"
done
echo "== $(uptime)"
if [ "${BENCH_SKIP_BUILD:-0}" != 1 ]; then
  echo "== building the binding, the testkit, the hadoop module, then the Spark benchmarks"
  mvn -B -ntp -q -f "$ROOT/java/pom.xml" "-Dcargo.target.dir=$TARGET_DIR" -pl core,testkit,hadoop,delta -am \
    install -DskipTests -Dmaven.javadoc.skip=true -Dmaven.source.skip=true
  mvn -B -ntp -q -f "$HERE/pom.xml" package -DskipTests
fi
if ! command -v iptables >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  apt-get install -y -q iptables >/dev/null 2>&1 || echo "(no iptables: bytes will not be counted)"
fi
mkdir -p "$HERE/target"
# Spark's own JVM options for Java 17 (what spark-submit adds).
opens=()
for p in java.lang java.lang.invoke java.lang.reflect java.io java.net java.nio java.util \
         java.util.concurrent java.util.concurrent.atomic sun.nio.ch sun.nio.cs sun.security.action \
         sun.util.calendar; do
  opens+=("--add-opens=java.base/$p=ALL-UNNAMED")
done
cd "$HERE"
jvm=()
# perf's frame-pointer call graphs walk JIT-compiled frames only with this (a few % of CPU).
[ -n "$profile" ] && jvm+=(-XX:+PreserveFramePointer)
java -Xmx6g "${jvm[@]}" "${opens[@]}" -Djdk.reflect.useDirectMethodHandle=false -Dio.netty.tryReflectionSetAccessible=true \
  -Dvended.storage.localS3="$TARGET_DIR/release/local-s3" \
  -cp "$HERE/target/classes:$HERE/target/lib/*" dev.vended.storage.bench.spark.SparkBench \
  --log-dir "$HERE/target" --out "$HERE/target/$suite-results.md" --json "$HERE/target/spark-results.json" "$@"
if [ -n "$profile" ]; then
  python3 "$HERE/thread_profile.py" "$profile" | tee "$HERE/target/thread-profile.md"
fi
echo "== $(uptime)"
