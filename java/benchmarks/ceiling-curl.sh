#!/usr/bin/env bash
# The loopback ceiling of the throughput-mode endpoint (issue 12): curl (SigV4-signed with the
# root key, output discarded) GETs one object from `local-s3 --in-memory`, 1 and 4 at once, and
# prints MiB/s per run and the median (4 at once: the sum of the 4 rates). curl does no more
# than receive into a buffer and discard it, so this is what the endpoint and the loopback link
# can deliver to a client on this machine.
#
#   java/benchmarks/ceiling-curl.sh [SIZE_BYTES ...]     # default 67108864 1073741824
#
# Needs target/release/local-s3 (BENCH_LOCAL_S3=PATH for another) and curl 7.75+ (--aws-sigv4).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
endpoint_bin="${BENCH_LOCAL_S3:-${CARGO_TARGET_DIR:-$ROOT/target}/release/local-s3}"
runs="${CEILING_RUNS:-7}"
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(67108864 1073741824)
work="$(mktemp -d)"
trap 'exec 3>&-; rm -rf "$work"' EXIT
# The endpoint exits when this script's end closes its stdin.
exec 3> >("$endpoint_bin" --in-memory --bucket ceiling --exit-on-stdin-eof >"$work/out" 2>"$work/err")
for _ in $(seq 100); do [ -s "$work/out" ] && break; sleep 0.1; done
url="$(awk '/^LISTENING/ {print $2}' "$work/out")"
[ -n "$url" ] || { echo "local-s3 did not start: $(cat "$work/err")" >&2; exit 1; }
sign=(--aws-sigv4 "aws:amz:us-east-1:s3" --user vended-root:vended-root-secret
      -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" -s -S --fail)
median() { sort -n | awk '{a[NR]=$1} END {m=(NR+1)/2; printf "%.0f", (a[int(m)]+a[int(m+0.5)])/2}'; }
echo "== $(uptime)"
for size in "${sizes[@]}"; do
  head -c "$size" /dev/urandom >"$work/obj"
  curl "${sign[@]}" -o /dev/null -T "$work/obj" "$url/ceiling/obj-$size"
  rm -f "$work/obj"
  for par in 1 4; do
    rates=()
    for _ in $(seq "$runs"); do
      total=0
      pids=()
      for j in $(seq "$par"); do
        curl "${sign[@]}" -o /dev/null -w '%{speed_download}\n' "$url/ceiling/obj-$size" >"$work/r$j" &
        pids+=($!)
      done
      wait "${pids[@]}"
      total=$(cat "$work"/r* | awk '{s+=$1} END {printf "%.0f", s/1048576}')
      rm -f "$work"/r*
      rates+=("$total")
    done
    printf 'GET %s bytes, %d at once: MiB/s per run %s; median %s\n' "$size" "$par" \
      "${rates[*]}" "$(printf '%s\n' "${rates[@]}" | median)"
  done
done
echo "== $(uptime)"
