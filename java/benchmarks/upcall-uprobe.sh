#!/usr/bin/env bash
# Measures one JNI upcall fetchStorageOptions() round trip (6 entries, warm runtime thread) with
# uprobes on the native library, without any test hook in it: entry and return of
# vended_storage::jni::provider::fetch_on_this_thread (attach check, context class loader, the
# Java call, the 6-entry Map read back over JNI), in a private copy of libvended_storage_jni.so.
# The probes' own cost is measured on nativeVersion() (a ~0.2 µs native call) and subtracted.
# Needs root, perf and tracefs; run by run.sh (which builds first), or alone after a build.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
LOCAL_S3="${BENCH_LOCAL_S3:-$TARGET_DIR/release/local-s3}"
if [ "$(id -u)" != 0 ] || ! command -v perf >/dev/null 2>&1; then
  echo "upcall-uprobe: needs root and perf; skipped"; exit 0
fi
T=/sys/kernel/tracing
if [ ! -w "$T/uprobe_events" ]; then
  mount -t tracefs nodev "$T" 2>/dev/null || true
fi
if [ ! -w "$T/uprobe_events" ]; then
  echo "upcall-uprobe: no writable $T/uprobe_events; skipped"; exit 0
fi
work="$HERE/target/uprobe"
mkdir -p "$work"
lib="$work/libvended_storage_jni.so"
# The library the core jar bundles (never the tests' test-hooks build in target/release).
unzip -p "$HERE/target/lib/vended-storage-0.1.0.jar" native/linux-x86_64/libvended_storage_jni.so >"$lib"

# File offset of a symbol (uprobes take offsets, not virtual addresses).
offset() {
  local vaddr
  vaddr=$(nm --defined-only "$lib" | awk -v re="$1" '$0 ~ re {print $1; exit}')
  [ -n "$vaddr" ] || { echo "symbol $1 not found in $lib" >&2; exit 1; }
  local v=$((16#$vaddr)) type off va pa fsz rest
  while read -r type off va pa fsz rest; do
    [ "$type" = LOAD ] || continue
    if [ "$v" -ge $((va)) ] && [ "$v" -lt $((va + fsz)) ]; then
      printf '0x%x\n' $((v - va + off)); return
    fi
  done < <(readelf -lW "$lib")
  echo "no LOAD segment holds $1" >&2; exit 1
}
fetch=$(offset 'fetch_on_this_thread17h')
nv=$(offset ' Java_dev_vended_storage_NativeBridge_nativeVersion$')
cleanup() {
  for e in fin fout nvin nvout; do echo "-:vsbench/$e" >>"$T/uprobe_events" 2>/dev/null || true; done
}
trap cleanup EXIT
cleanup
{
  echo "p:vsbench/fin $lib:$fetch"
  echo "r:vsbench/fout $lib:$fetch"
  echo "p:vsbench/nvin $lib:$nv"
  echo "r:vsbench/nvout $lib:$nv"
} >>"$T/uprobe_events"

echo "== $(uptime)"
perf record -q -e vsbench:fin -e vsbench:fout -e vsbench:nvin -e vsbench:nvout -a -o "$work/perf.data" -- \
  java -Dvended.storage.localS3="$LOCAL_S3" -Dvended.storage.native.library="$lib" \
  -cp "$HERE/target/classes:$HERE/target/lib/*" dev.vended.storage.bench.UpcallProbe "${1:-2000}" "${2:-200000}"
perf script -i "$work/perf.data" -F tid,time,event 2>/dev/null | python3 -c '
import statistics, sys
start = {}; d = {"f": [], "nv": []}
for line in sys.stdin:
    p = line.split()
    tid, t, ev = p[0], float(p[1].rstrip(":")), p[2]
    kind = "nv" if ":nv" in ev else "f"
    if ev.endswith("in:"):
        start[(tid, kind)] = t
    elif (tid, kind) in start:
        d[kind].append((t - start.pop((tid, kind))) * 1e6)
f = d["f"][len(d["f"]) // 10:]    # the first 10% warm the JIT and the runtime threads
nv = d["nv"][len(d["nv"]) // 10:]
if not f or not nv:
    sys.exit("upcall-uprobe: no probe hits")
q = lambda xs, p: sorted(xs)[min(len(xs) - 1, int(len(xs) * p))]
over = statistics.median(nv) - 0.2   # nativeVersion() itself: ~0.2 us without probes
print("fetch_on_this_thread, probes included: n=%d median %.1f us, p10 %.1f, p90 %.1f, p99 %.1f"
      % (len(f), statistics.median(f), q(f, .1), q(f, .9), q(f, .99)))
print("probe pair cost (nativeVersion with probes, median %.1f us, minus 0.2 us): %.1f us" % (statistics.median(nv), over))
print("UPCALL ROUND TRIP (6 entries, warm thread): median %.1f us, p10 %.1f, p90 %.1f"
      % (statistics.median(f) - over, q(f, .1) - over, q(f, .9) - over))
'
echo "== $(uptime)"
