#!/usr/bin/env bash
# Runs the JVM benchmark set (issue 6) and prints the tables: the JNI upcall and credential hot
# path, then GET/PUT of 1 KiB, 1 MiB and 64 MiB through ObjectStore vs the AWS SDK for Java v2
# S3Client vs the unsigned loopback ceiling, 1 and 8 threads. About 10 minutes on 2 cores.
#
#   java/benchmarks/run.sh                      # everything (builds first)
#   BENCH_SKIP_BUILD=1 java/benchmarks/run.sh   # reuse the built jars and endpoint
#   java/benchmarks/run.sh --suite upcall       # or --suite transfer; more flags in BenchMain
#   java/benchmarks/run.sh --suite transfer --ops put --sizes 67108864 --threads 1 --jfr /tmp/jfr
#
# Builds (one Maven run of java/pom.xml with the benchmarks profile): the binding (java/core, which
# builds the native library), the testkit (which builds the local S3 endpoint), then this module. Tables go to stdout and
# java/benchmarks/target/results.md; JMH's own output to java/benchmarks/target/jmh.log.
# Not part of the test command.
#
# BENCH_LOCAL_S3=PATH runs another endpoint binary; with BENCH_SKIP_BUILD=1 it must be built from
# a2a11db or later (TCP_NODELAY; older ones make every GET wait ~40 ms). The JNI upcall is
# measured first with uprobes (upcall-uprobe.sh: root + perf) unless BENCH_UPROBE=0 or
# --suite transfer.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
if ! command -v cargo >/dev/null 2>&1 && [ -f "$HOME/.cargo/env" ]; then
  # shellcheck disable=SC1091
  . "$HOME/.cargo/env"
fi
echo "== $(uptime)"
if [ "${BENCH_SKIP_BUILD:-0}" != 1 ]; then
  echo "== building the binding, the local S3 endpoint and the benchmarks"
  mvn -B -ntp -q -f "$ROOT/java/pom.xml" "-Dcargo.target.dir=$TARGET_DIR" -Pbenchmarks \
    -pl benchmarks -am -DskipTests package
fi
endpoint="${BENCH_LOCAL_S3:-$TARGET_DIR/release/local-s3}"
cd "$HERE"
uprobe_out="$HERE/target/upcall-uprobe.txt"
rm -f "$uprobe_out"
case " $* " in
  *" transfer "*|*" streams "*) ;;
  *) if [ "${BENCH_UPROBE:-1}" = 1 ]; then
       echo "== JNI upcall round trip with uprobes (upcall-uprobe.sh)"
       BENCH_LOCAL_S3="$endpoint" "$HERE/upcall-uprobe.sh" 2>&1 | tee "$uprobe_out" || true
     fi ;;
esac
java -Xmx1g \
  -Dvended.storage.localS3="$endpoint" \
  -cp "$HERE/target/classes:$HERE/target/lib/*" \
  dev.vended.storage.bench.BenchMain \
  --log-dir "$HERE/target" --out "$HERE/target/results.md" "$@"
if [ -s "$uprobe_out" ]; then
  { printf '\n## JNI upcall round trip (upcall-uprobe.sh)\n\n```\n'; cat "$uprobe_out"; printf '```\n'; } >>"$HERE/target/results.md"
fi
echo "== $(uptime)"
