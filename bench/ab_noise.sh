#!/usr/bin/env bash
# Issue 14's scenario: does the gate cry wolf when the machine changes under it? A service with
# CPU work per request shares its core with a neighbour that switches on and off at random;
# today's two-run comparison (`run`, `run`, `compare`) and `loadgate ab` (both sides at once)
# judge the same A/A pairs and the same +10% regressions, and a Markdown table says how often
# each cried wolf, how many regressions each caught, and what it cost (see bench/README.md).
#
#   bench/ab_noise.sh                                  # 20 A/A and 20 +10% pairs, both methods
#   PAIRS=3 METHODS=two-run bench/ab_noise.sh          # only today's comparison, 3 pairs
#   LOADGATE=target/release/loadgate INSTALL=0 OUT=table.md bench/ab_noise.sh
#   LOADGATE=/path/to/loadgate-with-ab SERVER=/path/to/loadgate-with-work bench/ab_noise.sh
#   AB_ARGS="--epoch 250ms" METHODS=ab bench/ab_noise.sh   # extra arguments for `loadgate ab`
#   HISTORY=5 METHODS="two-run two-run+history" bench/ab_noise.sh   # a stored baseline's history
#
# Two `loadgate serve --threads 1` (baseline and candidate, two ports) and the neighbour run
# pinned to core 0, loadgate pinned to core 1 (taskset). Each request asks for `work=WORK`
# (baseline; the candidate WORK in A/A pairs, SLOWER in regression pairs) of CPU time. The
# neighbour is a busy loop that alternates busy and idle phases of 0.5-3 s drawn from a seeded
# generator: it is restarted with the same seed for both methods of a pair, so each method
# meets the same pattern. With HISTORY=N, N more runs of the baseline side (each with its own
# neighbour pattern) are recorded first, and the method `two-run+history` judges each two-run
# pair again with `compare --baseline-history` over them (the same two runs, so both two-run
# methods judge the very same results). Loopback only; every command has a timeout; the servers and the
# neighbour are stopped on exit.
set -euo pipefail
cd "$(dirname "$0")/.."

PAIRS=${PAIRS:-20}
DURATION=${DURATION:-8s}
WARMUP=${WARMUP:-1s}
RATE=${RATE:-400}
WORK=${WORK:-400us}
SLOWER=${SLOWER:-440us}
RULES=${RULES:-'"p(50) +5% floor 50us", "p(95) +5% floor 50us"'}
METHODS=${METHODS:-"two-run ab"}
NEIGHBOUR=${NEIGHBOUR:-1}
PHASES=${PHASES:-0.5-3}
SEED=${SEED:-14}
INSTALL=${INSTALL:-1}
LOADGATE=${LOADGATE:-}
SERVER=${SERVER:-}
OUT=${OUT:-}
KEEP=${KEEP:-0}
AB_ARGS=${AB_ARGS:-}
HISTORY=${HISTORY:-0}
read -r -a ab_args <<<"$AB_ARGS"

say() { echo "ab_noise: $*" >&2; }
seconds() { # "8s" or "8" -> 8
  local v=${1%s}
  [[ $v =~ ^[0-9]+$ ]] || { say "durations are whole seconds (8s), not '$1'"; exit 2; }
  echo "$v"
}
D=$(seconds "$DURATION")
W=$(seconds "$WARMUP")
[[ $PAIRS =~ ^[1-9][0-9]*$ ]] || { say "PAIRS is a positive whole number, not '$PAIRS'"; exit 2; }
[[ $PHASES =~ ^[0-9.]+-[0-9.]+$ ]] || { say "PHASES is MIN-MAX in seconds (0.5-3), not '$PHASES'"; exit 2; }
[[ $HISTORY =~ ^[0-9]+$ ]] || { say "HISTORY is a whole number of earlier baseline runs, not '$HISTORY'"; exit 2; }
for m in $METHODS; do
  case $m in
    two-run|ab) ;;
    two-run+history) [ "$HISTORY" -ge 1 ] || { say "two-run+history needs HISTORY=N earlier runs (3 or more widen the interval)"; exit 2; } ;;
    *) say "unknown method '$m': use two-run, two-run+history or ab"; exit 2 ;;
  esac
done

# --- tools ------------------------------------------------------------------------------------

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else return 1; fi; }
need=()
command -v taskset >/dev/null || need+=(util-linux)
command -v python3 >/dev/null || need+=(python3)
command -v curl >/dev/null || need+=(curl)
if [ "${#need[@]}" -gt 0 ] && [ "$INSTALL" = 1 ]; then
  say "installing Debian packages: ${need[*]}"
  as_root apt-get install -y "${need[@]}" >/dev/null 2>&1 || say "apt-get install ${need[*]} failed"
fi
for t in taskset python3 curl timeout; do
  command -v "$t" >/dev/null || { say "missing $t, which the benchmark needs; install it and run again"; exit 2; }
done
if [ "$(nproc --all)" -lt 2 ]; then say "needs 2 cores (the service on core 0, loadgate on core 1)"; exit 2; fi
if [ -z "$LOADGATE" ]; then
  say "building target/release/loadgate"
  timeout 3600 cargo build --release --locked -p loadgate >&2
  LOADGATE=$PWD/target/release/loadgate
fi
[ -x "$LOADGATE" ] || { say "LOADGATE=$LOADGATE is not an executable"; exit 2; }
SERVER=${SERVER:-$LOADGATE}
[ -x "$SERVER" ] || { say "SERVER=$SERVER is not an executable"; exit 2; }
HAVE_AB=1
timeout 10 "$LOADGATE" ab --help >/dev/null 2>&1 || HAVE_AB=0

# --- the servers and the neighbour ---------------------------------------------------------------

work=$(mktemp -d /tmp/loadgate-ab-noise.XXXXXX)
pids=()
neighbour_pid=
stop() { # stops one background process of ours, by its id
  kill "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}
cleanup() {
  [ -n "$neighbour_pid" ] && stop "$neighbour_pid"
  for p in "${pids[@]}"; do stop "$p"; done
  if [ "$KEEP" = 1 ]; then say "logs kept in $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Starts `loadgate serve --threads 1` on core 0 and sets PORT to its port.
start_server() {
  local name=$1 log="$work/$1.out"
  taskset -c 0 "$SERVER" serve --listen 127.0.0.1:0 --threads 1 >"$log" 2>"$work/$name.err" &
  pids+=($!)
  for _ in $(seq 100); do
    PORT=$(sed -n 's|^loadgate serve: listening on http://127\.0\.0\.1:\([0-9]*\)$|\1|p' "$log")
    if [ -n "$PORT" ] && curl -sf --max-time 2 "http://127.0.0.1:$PORT/health" >/dev/null; then return 0; fi
    sleep 0.05
  done
  say "loadgate serve ($name) did not start:"; cat "$work/$name.err" >&2; exit 1
}
start_server baseline; P1=$PORT
start_server candidate; P2=$PORT
for port in $P1 $P2; do
  curl -sf --max-time 5 "http://127.0.0.1:$port/?work=$WORK" >/dev/null ||
    { say "the server on port $port refused ?work=$WORK (SERVER=$SERVER: a loadgate without work=?)"; exit 1; }
done

# The neighbour: pinned to core 0, busy and idle in turn for phases drawn from SEED.
cat >"$work/neighbour.py" <<'EOF'
import random, sys, time
rng = random.Random(int(sys.argv[1]))
low, high = map(float, sys.argv[2].split("-"))
busy = rng.random() < 0.5
while True:
    end = time.monotonic() + rng.uniform(low, high)
    if busy:
        while time.monotonic() < end:
            pass
    else:
        time.sleep(end - time.monotonic())
    busy = not busy
EOF
start_neighbour() {
  [ "$NEIGHBOUR" = 1 ] || return 0
  taskset -c 0 python3 "$work/neighbour.py" "$1" "$PHASES" &
  neighbour_pid=$!
}
stop_neighbour() {
  if [ -n "$neighbour_pid" ]; then stop "$neighbour_pid"; neighbour_pid=; fi
}

# --- the spec and the two methods ---------------------------------------------------------------

cat >"$work/spec.yaml" <<EOF
version: 1
name: ab-noise
defaults:
  base_url: http://127.0.0.1:\${PORT}
targets:
  - name: work
    path: /?work=\${WORK}
load:
  model: open
  rate: $RATE/s
  duration: ${D}s
  warmup: ${W}s
regression:
  latency: [$RULES]
  errors: []
  requests: []
EOF
PORT=$P1 WORK=$WORK timeout 30 "$LOADGATE" validate "$work/spec.yaml" >&2 ||
  { say "the generated spec is not valid (above)"; exit 1; }
RUN_TIMEOUT=$((D + W + 30))

# Appends one line to $work/results.tsv: method kind pair exit wall_s run_wall_s
record() { printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >>"$work/results.tsv"; }
elapsed() { awk -v a="$1" -v z="$2" 'BEGIN { printf "%.2f", z - a }'; }

# Whether method $1 is on (in METHODS and available in this binary).
method_on() { [[ " ${active[*]} " == *" $1 "* ]]; }

# Today's gate: run the baseline side, then the candidate side, then compare (two-run), and
# compare again with the earlier baseline runs as history (two-run+history), for the methods on.
# Exit: 4 an alarm, 5 an invalid measurement (either run, or compare), 0 a pass, anything else a
# failure.
two_run() {
  local kind=$1 pair=$2 cand=$3 t0 t1 t2 t3 t4 rc=0 rc1=0 rc2=0 rch=0
  local dir="$work/$1-$2"
  mkdir -p "$dir"
  t0=$EPOCHREALTIME
  PORT=$P1 WORK=$WORK timeout -k 5 "$RUN_TIMEOUT" taskset -c 1 "$LOADGATE" run -q "$work/spec.yaml" \
    --out "$dir/baseline.json" >"$dir/run1.log" 2>&1 || rc1=$?
  t1=$EPOCHREALTIME
  PORT=$P2 WORK=$cand timeout -k 5 "$RUN_TIMEOUT" taskset -c 1 "$LOADGATE" run -q "$work/spec.yaml" \
    --out "$dir/candidate.json" >"$dir/run2.log" 2>&1 || rc2=$?
  t2=$EPOCHREALTIME
  if [ -s "$dir/baseline.json" ] && [ -s "$dir/candidate.json" ]; then
    timeout -k 5 60 taskset -c 1 "$LOADGATE" compare "$dir/baseline.json" "$dir/candidate.json" \
      >"$dir/compare.log" 2>&1 || rc=$?
  else
    rc=$((rc1 != 0 ? rc1 : rc2))
    say "two-run $kind $pair: a run wrote no result (exits $rc1, $rc2): $(head -n 2 "$dir/run1.log" "$dir/run2.log" | tr '\n' ' ')"
  fi
  t3=$EPOCHREALTIME
  if method_on two-run; then
    record two-run "$kind" "$pair" "$rc" "$(elapsed "$t0" "$t3")" "$(elapsed "$t0" "$t1") $(elapsed "$t1" "$t2")"
    say "two-run $kind pair $pair: exit $rc in $(elapsed "$t0" "$t3")s (runs exited $rc1, $rc2)"
  fi
  method_on two-run+history || return 0
  if [ -s "$dir/baseline.json" ] && [ -s "$dir/candidate.json" ]; then
    timeout -k 5 60 taskset -c 1 "$LOADGATE" compare "$dir/baseline.json" "$dir/candidate.json" \
      --baseline-history "$work/history" >"$dir/compare-history.log" 2>&1 || rch=$?
  else
    rch=$rc
  fi
  t4=$EPOCHREALTIME
  # The wall time: the two runs and this comparison (the history runs are paid once, before).
  record two-run+history "$kind" "$pair" "$rch" \
    "$(awk -v a="$t0" -v b="$t2" -v c="$t3" -v d="$t4" 'BEGIN { printf "%.2f", (b - a) + (d - c) }')" \
    "$(elapsed "$t0" "$t1") $(elapsed "$t1" "$t2")"
  say "two-run+history $kind pair $pair: exit $rch"
}

# HISTORY=N: N valid runs of the baseline side (at most 2N tries; an invalid measurement, exit
# 5, is dropped, as a kept history would not hold it), each with its own neighbour pattern, into
# $work/history: the results a stored baseline's history would hold.
record_history() {
  mkdir -p "$work/history"
  local try=0 kept=0 rc
  while [ "$kept" -lt "$HISTORY" ] && [ "$try" -lt $((2 * HISTORY)) ]; do
    try=$((try + 1))
    start_neighbour $((SEED * 100000 + 50000 + try))
    rc=0
    PORT=$P1 WORK=$WORK timeout -k 5 "$RUN_TIMEOUT" taskset -c 1 "$LOADGATE" run -q "$work/spec.yaml" \
      --out "$work/history/run-$try.json" >"$work/history-$try.log" 2>&1 || rc=$?
    stop_neighbour
    if [ "$rc" = 0 ]; then kept=$((kept + 1)); else rm -f "$work/history/run-$try.json"; fi
    say "history run $try: exit $rc ($kept of $HISTORY kept)"
  done
}

# `loadgate ab`: both sides at once, on the same schedule.
ab() {
  local kind=$1 pair=$2 cand=$3 t0 t1 rc=0
  local dir="$work/$1-$2"
  mkdir -p "$dir"
  t0=$EPOCHREALTIME
  timeout -k 5 $((2 * RUN_TIMEOUT)) taskset -c 1 "$LOADGATE" ab -q "$work/spec.yaml" \
    --baseline-url "http://127.0.0.1:$P1" --candidate-url "http://127.0.0.1:$P2" \
    --baseline "WORK=$WORK" --candidate "WORK=$cand" --out "$dir/ab.json" "${ab_args[@]}" >"$dir/ab.log" 2>&1 || rc=$?
  t1=$EPOCHREALTIME
  if [ "$rc" != 0 ] && [ "$rc" != 4 ] && [ "$rc" != 5 ]; then
    say "ab $kind $pair failed: $(grep -v '^\s*$' "$dir/ab.log" | head -n 3 | tr '\n' ' ')"
  fi
  record ab "$kind" "$pair" "$rc" "$(elapsed "$t0" "$t1")" -
  say "ab $kind pair $pair: exit $rc in $(elapsed "$t0" "$t1")s"
}

# --- the pairs ----------------------------------------------------------------------------------

active=()
for m in $METHODS; do
  if [ "$m" = two-run+history ] && ! timeout 10 "$LOADGATE" compare --help 2>/dev/null | grep -q baseline-history; then
    say "compare --baseline-history: not available in this binary ($LOADGATE); two-run+history is skipped"
  elif [ "$m" = ab ] && [ "$HAVE_AB" = 0 ]; then
    say "loadgate ab: not available in this binary ($LOADGATE); its half is skipped"
  else
    active+=("$m")
  fi
done
: >"$work/results.tsv"
say "$PAIRS A/A and $PAIRS +10% pairs ($WORK against $SLOWER), methods: ${active[*]:-none};" \
  "open model $RATE/s, ${D}s after ${W}s warmup; servers on ports $P1 and $P2; load average $(cut -d' ' -f1-3 /proc/loadavg)"
# What runs per pair: the two runs serve both two-run methods.
runners=()
if method_on two-run || method_on two-run+history; then runners+=(two-run); fi
if method_on ab; then runners+=(ab); fi
if method_on two-run+history; then record_history; fi
for pair in $(seq "$PAIRS"); do
  for kind in aa slower; do
    cand=$WORK seed=$((SEED * 100000 + pair * 10))
    if [ "$kind" = slower ]; then cand=$SLOWER seed=$((seed + 1)); fi
    for m in "${runners[@]}"; do
      # The same neighbour pattern for each method of this pair and kind.
      start_neighbour "$seed"
      case $m in two-run) two_run "$kind" "$pair" "$cand" ;; ab) ab "$kind" "$pair" "$cand" ;; esac
      stop_neighbour
    done
  done
done

# --- the table ------------------------------------------------------------------------------------

table() {
  echo "ab_noise: open model $RATE/s, ${D}s runs after ${W}s warmup, rules [$RULES]; work $WORK," \
    "+10% = $SLOWER; neighbour $([ "$NEIGHBOUR" = 1 ] && echo "on/off phases of ${PHASES}s, seed $SEED" || echo off); $PAIRS pairs each"
  echo
  python3 - "$work/results.tsv" "$PAIRS" "$HAVE_AB" "$METHODS" "$work/history" <<'EOF'
import glob, json, statistics, sys
from collections import defaultdict
path, pairs, have_ab, methods = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1", sys.argv[4].split()
history = sorted(glob.glob(sys.argv[5] + "/*.json"))
rows = defaultdict(list)
single_runs = []
for line in open(path):
    method, kind, pair, rc, wall, runs = line.rstrip("\n").split("\t")
    rows[method].append((kind, int(rc), float(wall)))
    if runs != "-":
        single_runs += [float(x) for x in runs.split()]
one_run = sum(single_runs) / len(single_runs) if single_runs else None
max_false, min_caught = pairs * 0.05, pairs * 0.9
print("| method | A/A false alarms | +10% caught | invalid measurements | failed | wall s per comparison | × one run |")
print("|---|---:|---:|---:|---:|---:|---:|")
goals = []
for method in ("two-run", "two-run+history", "ab"):
    if method not in methods:
        continue
    if method == "ab" and not have_ab:
        print("| ab | not available in this binary | | | | | |")
        goals.append("ab: not measured (loadgate ab: not available in this binary)")
        continue
    runs = rows[method]
    false = sum(1 for k, rc, _ in runs if k == "aa" and rc == 4)
    caught = sum(1 for k, rc, _ in runs if k == "slower" and rc == 4)
    invalid = sum(1 for _, rc, _ in runs if rc == 5)
    failed = sum(1 for _, rc, _ in runs if rc not in (0, 4, 5))
    n_aa = sum(1 for k, _, _ in runs if k == "aa")
    n_slow = sum(1 for k, _, _ in runs if k == "slower")
    wall = sum(w for _, _, w in runs) / len(runs) if runs else float("nan")
    times = f"{wall / one_run:.2f}x" if one_run else "-"
    print(f"| {method} | {false} of {n_aa} | {caught} of {n_slow} | {invalid} | {failed} | {wall:.1f} | {times} |")
    if method == "ab":
        ok = lambda c: "met" if c else "NOT met"
        goals.append(f"ab: at most {max_false:g} false alarms in {pairs} A/A pairs (1 in 20): {ok(false <= max_false)} ({false})")
        goals.append(f"ab: at least {min_caught:g} of {pairs} regressions caught (18 of 20): {ok(caught >= min_caught)} ({caught})")
        if one_run:
            goals.append(f"ab: each run at most 2.5x one run of the spec ({one_run:.1f}s): {ok(wall / one_run <= 2.5)} ({wall / one_run:.2f}x)")
        else:
            goals.append("ab: time against one run: not measured (METHODS without two-run)")
if history:
    lat = [json.load(open(f))["total"]["latency_us"] for f in history]
    spread = lambda k: ", ".join(str(l[k]) for l in lat)
    print(f"\nHistory for two-run+history: {len(history)} earlier baseline runs; p50 {spread('p50_us')} us; p95 {spread('p95_us')} us.")
if one_run:
    print(f"\nOne run of the spec (the two-run method's runs): {one_run:.1f} s of wall time on average.")
print("\nGoals (issue 14):")
for goal in goals or ["(no ab results)"]:
    print(f"- {goal}")
EOF
}
table | tee ${OUT:+"$OUT"}
if [[ " $METHODS " == *" ab "* ]] && [ "$HAVE_AB" = 0 ]; then
  say "loadgate ab: not available in this binary ($LOADGATE): build it from a branch with \`loadgate ab\`"
  exit 1
fi
