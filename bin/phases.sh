# Sourced by bin/test and bin/quick: times each phase of a run (wall and CPU seconds) and keeps
# the logs the closing report counts tests from (bin/test-report).
#   phase NAME CMD...      runs CMD in the foreground as phase NAME; its output goes to the
#                          terminal and to $LOGS/NAME.log; stops the run when CMD fails
#   phase_bg NAME CMD...   starts CMD in the background as phase NAME (output only to its log);
#                          phase_wait NAME waits for it and stops the run when it failed
#   report                 prints the phase table and the test counts (bin/test-report)
# CPU seconds are user + system time of the phase's processes (children waited for), read from
# /proc; a background phase's CPU is its own, so phases that overlap each count theirs.
LOGS="${LOGS:-$TARGET_DIR/test-logs}"
PHASES_FILE="$LOGS/phases.tsv"
rm -rf "$LOGS"
mkdir -p "$LOGS"
RUN_START=$(date +%s.%N)
declare -A BG_PIDS=()

# user+system CPU ticks of process $1 and of its waited-for children.
_cpu_ticks() { awk '{ print $14 + $15 + $16 + $17 }' "/proc/$1/stat"; }

# Runs "$@" as phase $1 in this process's view: appends "name<TAB>start<TAB>wall<TAB>cpu<TAB>rc".
_timed() {
  # $BASHPID read here, not inside $(...), which is a process of its own.
  local name="$1" me="$BASHPID" t0 c0 rc=0 hz
  shift
  hz=$(getconf CLK_TCK)
  t0=$(date +%s.%N)
  c0=$(_cpu_ticks "$me")
  "$@" || rc=$?
  awk -v n="$name" -v s="$RUN_START" -v t0="$t0" -v t1="$(date +%s.%N)" -v c0="$c0" \
    -v c1="$(_cpu_ticks "$me")" -v hz="$hz" -v rc="$rc" \
    'BEGIN { printf "%s\t%.0f\t%.0f\t%.0f\t%d\n", n, t0 - s, t1 - t0, (c1 - c0) / hz, rc }' \
    >>"$PHASES_FILE"
  return "$rc"
}

phase() {
  local name="$1"
  shift
  echo "== [$name] $*"
  # pipefail (env.sh) makes the pipeline fail when the command does.
  if ! _timed "$name" "$@" 2>&1 | tee "$LOGS/$name.log"; then
    echo "error: phase $name failed (log: $LOGS/$name.log)" >&2
    report || true
    exit 1
  fi
}

phase_bg() {
  local name="$1"
  shift
  echo "== [$name] started in the background (log: $LOGS/$name.log): $*"
  (_timed "$name" "$@") >"$LOGS/$name.log" 2>&1 &
  BG_PIDS[$name]=$!
}

phase_wait() {
  local name="$1"
  if ! wait "${BG_PIDS[$name]}"; then
    cat "$LOGS/$name.log" >&2
    echo "error: background phase $name failed (its log above: $LOGS/$name.log)" >&2
    report || true
    exit 1
  fi
  echo "== [$name] done: $(tail -n 1 "$LOGS/$name.log")"
}

report() {
  python3 "$ROOT/bin/test-report" "$LOGS" "$RUN_START"
}
