#!/usr/bin/env bash
# Iceberg: VendedFileIO vs Iceberg's S3FileIO (issue 24); `bin/bench --suite iceberg` runs this.
# Not part of bin/test. One JVM (Spark 4.1 local[2], Iceberg's Spark runtime 1.11.0) with two REST
# catalogs that differ only in io-impl, over Iceberg's REST catalog test server (a child JVM)
# behind java/iceberg's test vending layer, against one `local-s3` on 127.0.0.1 (started by the
# testkit from the release build).
#
#   bin/bench --suite iceberg                          # 4,000,000 rows, 3 alternating rounds
#   bin/bench --suite iceberg --scale 1000000 --rounds 3
#
# Builds first (BENCH_SKIP_BUILD=1 skips): installs the binding and the testkit, compiles the
# iceberg module with its tests (-DskipTests compiles them and writes the REST server's classpath
# file), resolves this module's dependencies (the only place iceberg-aws-bundle is named) into
# target/lib, then compiles the benchmark with javac. Table: stdout and target/iceberg-results.md.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../../.." && pwd)"
ICE="$ROOT/java/iceberg"
TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
if ! command -v cargo >/dev/null 2>&1 && [ -f "$HOME/.cargo/env" ]; then
  # shellcheck disable=SC1091
  . "$HOME/.cargo/env"
fi
args=()
for a in "$@"; do
  case "$a" in --suite|iceberg) ;; *) args+=("$a") ;; esac
done
echo "== $(uptime)"
echo "== commit $(git -C "$ROOT" rev-parse --short HEAD)$(git -C "$ROOT" diff --quiet -- java crates || echo ' (+ uncommitted changes in the tree)')"
if [ "${BENCH_SKIP_BUILD:-0}" != 1 ]; then
  echo "== building the binding, the testkit and the iceberg module (with its test classes)"
  mvn -B -ntp -q -f "$ROOT/java/pom.xml" "-Dcargo.target.dir=$TARGET_DIR" -pl core,testkit,iceberg -am \
    install -DskipTests -Dnative.platforms=host -Dmaven.javadoc.skip=true -Dmaven.source.skip=true
  cargo build -q --release -p vended-storage-local-s3 --bin local-s3 --manifest-path "$ROOT/Cargo.toml"
  mvn -B -ntp -q -f "$HERE/pom.xml" package
  rm -rf "$HERE/target/classes"
  mkdir -p "$HERE/target/classes"
  javac -nowarn -d "$HERE/target/classes" \
    -cp "$ICE/target/classes:$ICE/target/test-classes:$HERE/target/lib/*" \
    $(find "$HERE/src/main/java" -name '*.java')
fi
opens=()
for p in java.lang java.lang.invoke java.lang.reflect java.io java.net java.nio java.util \
         java.util.concurrent java.util.concurrent.atomic sun.nio.ch sun.nio.cs sun.security.action \
         sun.util.calendar; do
  opens+=("--add-opens=java.base/$p=ALL-UNNAMED")
done
# RestCatalogServerMain resolves target/classes and target/test-classes of the iceberg module
# from the working directory.
cd "$ICE"
java -Xmx4g "${opens[@]}" --enable-native-access=ALL-UNNAMED -Djdk.reflect.useDirectMethodHandle=false \
  -Dio.netty.tryReflectionSetAccessible=true \
  -Dvended.storage.localS3="$TARGET_DIR/release/local-s3" \
  -Dvended.iceberg.fullTestClasspath="$ICE/target/full-test-classpath.txt" \
  -cp "$HERE/target/classes:$ICE/target/classes:$ICE/target/test-classes:$HERE/target/lib/*" \
  dev.vended.storage.iceberg.IcebergIoBench --out "$HERE/target/iceberg-results.md" "${args[@]}"
echo "== $(uptime)"
