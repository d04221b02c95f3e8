#!/usr/bin/env bash
# Does the gate cry wolf when the machine changes under it, and does it catch what matters?
# (issues 14 and 32). Services with CPU work per request share their core with a neighbour that
# switches on and off at random; the two-run comparison (`run`, `run`, `compare`) and `loadgate
# ab` (both sides at once) judge the same A/A pairs and the same slowed pairs, for two
# scenarios, and a Markdown table says per scenario and method how often each cried wolf, how
# many slowed candidates it caught, how often the measurement was invalid, and what it cost in
# time (see bench/README.md):
#
# - `flow`: a flow of FLOW_WORK's steps (5 by default), each a path with its own `work=`, with
#   FLOW_RULES (p(50)/p(95)/p(99)) on every step and on the whole run (18 rules); the slowed
#   candidate does step SLOW_STEP's work ×1.15;
# - `cpu`: one target with WORK of CPU work per request and RULES (2 rules); the slowed
#   candidate does ×1.10 of it.
#
#   bench/ab_noise.sh                                  # 20 A/A and 20 slowed pairs, both scenarios, both methods
#   PAIRS=2 DURATION=3s bench/ab_noise.sh              # a quick look
#   PAIRS=3 SCENARIO=cpu METHODS=two-run bench/ab_noise.sh   # one scenario, one method
#   LOADGATE=target/fallback/loadgate PAIRS=20 SCENARIO="flow cpu" METHODS="ab two-run" INSTALL=0 OUT=table.md bench/ab_noise.sh
#   LOADGATE=/path/to/loadgate-with-ab SERVER=/path/to/loadgate-with-work bench/ab_noise.sh
#   AB_ARGS="--epoch 250ms" METHODS=ab bench/ab_noise.sh   # extra arguments for `loadgate ab`
#   HISTORY=5 METHODS="two-run two-run+history" bench/ab_noise.sh   # a stored baseline's history
#
# Two `loadgate serve --threads 1` (baseline and candidate, two ports) and the neighbour run
# pinned to core 0, loadgate pinned to core 1 (taskset). The neighbour is a busy loop that
# alternates busy and idle phases of 0.5-3 s drawn from a seeded generator: it is restarted
# with the same seed for both methods of a pair, so each method meets the same pattern. With
# HISTORY=N, N more runs of the baseline side (each with its own neighbour pattern) are
# recorded first per scenario, and the method `two-run+history` judges each two-run pair again
# with `compare --baseline-history` over them (the same two runs, so both two-run methods judge
# the very same results). Loopback only; every command has a timeout; the servers and the
# neighbour are stopped on exit.
set -euo pipefail
cd "$(dirname "$0")/.."

SCENARIO=${SCENARIO:-"flow cpu"}
PAIRS=${PAIRS:-20}
DURATION=${DURATION:-8s}
WARMUP=${WARMUP:-1s}
# cpu: one target, 2 rules, the candidate ×1.10 (SLOWER, when given, instead).
RATE=${RATE:-100}
WORK=${WORK:-1000us}
SLOWER=${SLOWER:-}
RULES=${RULES:-'"p(50) +5% floor 50us", "p(95) +5% floor 50us"'}
# flow: one step per FLOW_WORK item, FLOW_RULES on each step and on the whole run, step
# SLOW_STEP (1-based) ×1.15 in the slowed candidate (FLOW_SLOWER, when given, instead).
FLOW_RATE=${FLOW_RATE:-50}
FLOW_WORK=${FLOW_WORK:-"100us 200us 1000us 300us 400us"}
SLOW_STEP=${SLOW_STEP:-3}
FLOW_SLOWER=${FLOW_SLOWER:-}
FLOW_RULES=${FLOW_RULES:-'"p(50) +5% floor 50us", "p(95) +5% floor 50us", "p(99) +10% floor 100us"'}
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
read -r -a flow_work <<<"$FLOW_WORK"

say() { echo "ab_noise: $*" >&2; }
seconds() { # "8s" or "8" -> 8
  local v=${1%s}
  [[ $v =~ ^[0-9]+$ ]] || { say "durations are whole seconds (8s), not '$1'"; exit 2; }
  echo "$v"
}
micros() { # "400us" or "1ms" -> 400 or 1000
  if [[ $1 =~ ^([0-9]+)us$ ]]; then echo "${BASH_REMATCH[1]}"
  elif [[ $1 =~ ^([0-9]+)ms$ ]]; then echo $((BASH_REMATCH[1] * 1000))
  else say "works are whole microseconds or milliseconds (400us, 1ms), not '$1'"; exit 2; fi
}
scale() { # "1000us" 1.15 -> "1150us" (rounded to the microsecond)
  awk -v us="$(micros "$1")" -v f="$2" 'BEGIN { printf "%dus", us * f + 0.5 }'
}
D=$(seconds "$DURATION")
W=$(seconds "$WARMUP")
[[ $PAIRS =~ ^[1-9][0-9]*$ ]] || { say "PAIRS is a positive whole number, not '$PAIRS'"; exit 2; }
[[ $PHASES =~ ^[0-9.]+-[0-9.]+$ ]] || { say "PHASES is MIN-MAX in seconds (0.5-3), not '$PHASES'"; exit 2; }
[[ $HISTORY =~ ^[0-9]+$ ]] || { say "HISTORY is a whole number of earlier baseline runs, not '$HISTORY'"; exit 2; }
[[ $RATE =~ ^[1-9][0-9]*$ && $FLOW_RATE =~ ^[1-9][0-9]*$ ]] ||
  { say "RATE and FLOW_RATE are whole numbers per second, not '$RATE', '$FLOW_RATE'"; exit 2; }
[ "${#flow_work[@]}" -ge 1 ] || { say "FLOW_WORK lists one work per step (100us 200us ...)"; exit 2; }
if ! [[ $SLOW_STEP =~ ^[1-9][0-9]*$ ]] || [ "$SLOW_STEP" -gt "${#flow_work[@]}" ]; then
  say "SLOW_STEP is a step of FLOW_WORK, 1 to ${#flow_work[@]}, not '$SLOW_STEP'"; exit 2
fi
for w in "$WORK" "${flow_work[@]}" ${SLOWER:+"$SLOWER"} ${FLOW_SLOWER:+"$FLOW_SLOWER"}; do micros "$w" >/dev/null; done
SLOWER=${SLOWER:-$(scale "$WORK" 1.10)}
SLOW_WORK=${flow_work[SLOW_STEP - 1]}
FLOW_SLOWER=${FLOW_SLOWER:-$(scale "$SLOW_WORK" 1.15)}
for s in $SCENARIO; do
  case $s in flow|cpu) ;; *) say "unknown scenario '$s': use flow or cpu"; exit 2 ;; esac
done
for m in $METHODS; do
  case $m in
    two-run|ab) ;;
    two-run+history) [ "$HISTORY" -ge 1 ] || { say "two-run+history needs HISTORY=N earlier runs (5 or more since the last change point judge the rules)"; exit 2; } ;;
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

# --- the specs ------------------------------------------------------------------------------------

# Each scenario's spec reads `${PORT}` (the side's server) and `${WORK}` (the work that the
# slowed candidate changes); the other works are written into the spec.
RUN_TIMEOUT=$((D + W + 30))
# `loadgate ab` may take up to 3 runs' time (issue 32); past 4 it is stopped (exit 124, "failed").
AB_TIMEOUT=$((4 * (D + W) + 60))
# Per scenario: its spec, the baseline's WORK, the slowed candidate's WORK, its rules, in words.
declare -A spec_of base_of slow_of rules_of about_of
count_rules() { grep -o '"[^"]*"' <<<"$1" | wc -l; }

write_cpu_spec() {
  cat >"$work/cpu.yaml" <<YAML
version: 1
name: ab-noise-cpu
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
YAML
  spec_of[cpu]=$work/cpu.yaml base_of[cpu]=$WORK slow_of[cpu]=$SLOWER
  rules_of[cpu]=$(count_rules "$RULES")
  about_of[cpu]="one target, work=$WORK per request (slowed: $SLOWER), open model $RATE/s, rules [$RULES]"
}

write_flow_spec() {
  local i path steps=""
  for i in "${!flow_work[@]}"; do
    path="/s$((i + 1))?work=${flow_work[i]}"
    [ $((i + 1)) = "$SLOW_STEP" ] && path="/s$((i + 1))?work=\${WORK}"
    steps+="      - name: s$((i + 1))
        path: $path
        regression: { latency: [$FLOW_RULES] }
"
  done
  cat >"$work/flow.yaml" <<YAML
version: 1
name: ab-noise-flow
defaults:
  base_url: http://127.0.0.1:\${PORT}
flows:
  - name: f
    steps:
$steps
load:
  model: open
  rate: $FLOW_RATE/s
  duration: ${D}s
  warmup: ${W}s
regression:
  latency: [$FLOW_RULES]
  errors: []
  requests: []
YAML
  spec_of[flow]=$work/flow.yaml base_of[flow]=$SLOW_WORK slow_of[flow]=$FLOW_SLOWER
  rules_of[flow]=$(($(count_rules "$FLOW_RULES") * (${#flow_work[@]} + 1)))
  about_of[flow]="a flow of ${#flow_work[@]} steps f/s1..f/s${#flow_work[@]} (work=${FLOW_WORK// /, }), step f/s$SLOW_STEP slowed to $FLOW_SLOWER, open model $FLOW_RATE iterations/s, rules [$FLOW_RULES] on every step and the whole run"
}

scenarios=()
for s in $SCENARIO; do
  case $s in cpu) write_cpu_spec ;; flow) write_flow_spec ;; esac
  PORT=$P1 WORK=${base_of[$s]} timeout 30 "$LOADGATE" validate "${spec_of[$s]}" >&2 ||
    { say "the generated $s spec is not valid (above)"; exit 1; }
  scenarios+=("$s")
done

# --- the methods ----------------------------------------------------------------------------------

# Appends one line to $work/results.tsv: scenario method kind pair exit wall_s regressed-rules
record() { printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >>"$work/results.tsv"; }
# Appends one run's wall time to $work/runs.tsv: scenario wall_s (one `loadgate run` of the spec).
record_run() { printf '%s\t%s\n' "$1" "$2" >>"$work/runs.tsv"; }
elapsed() { awk -v a="$1" -v z="$2" 'BEGIN { printf "%.2f", z - a }'; }
# The rules a text verdict ($1) calls regressed, by scope and statistic, `;`-separated
# ("total p(50);f/s3 p(99)").
regressed() {
  sed -n 's/^ *regressed *rule \(.*[^ ]\)  .*$/\1/p' "$1" | sed 's/^latency /total /; s/ latency / /' |
    awk '{ print $1, $2 }' | paste -sd ';' - || true
}

# Whether method $1 is on (in METHODS and available in this binary).
method_on() { [[ " ${active[*]} " == *" $1 "* ]]; }

# The two-run gate: run the baseline side, then the candidate side, then compare (two-run), and
# compare again with the earlier baseline runs as history (two-run+history), for the methods on.
# Exit: 4 an alarm, 5 an invalid measurement (either run, or compare), 0 a pass, anything else a
# failure.
two_run() {
  local s=$1 kind=$2 pair=$3 cand=$4 t0 t1 t2 t3 t4 rc=0 rc1=0 rc2=0 rch=0
  local dir="$work/$s-$kind-$pair" spec=${spec_of[$s]}
  mkdir -p "$dir"
  t0=$EPOCHREALTIME
  PORT=$P1 WORK=${base_of[$s]} timeout -k 5 "$RUN_TIMEOUT" taskset -c 1 "$LOADGATE" run -q "$spec" \
    --out "$dir/baseline.json" >"$dir/run1.log" 2>&1 || rc1=$?
  t1=$EPOCHREALTIME
  PORT=$P2 WORK=$cand timeout -k 5 "$RUN_TIMEOUT" taskset -c 1 "$LOADGATE" run -q "$spec" \
    --out "$dir/candidate.json" >"$dir/run2.log" 2>&1 || rc2=$?
  t2=$EPOCHREALTIME
  record_run "$s" "$(elapsed "$t0" "$t1")"
  record_run "$s" "$(elapsed "$t1" "$t2")"
  : >"$dir/compare.log"
  if [ -s "$dir/baseline.json" ] && [ -s "$dir/candidate.json" ]; then
    timeout -k 5 60 taskset -c 1 "$LOADGATE" compare "$dir/baseline.json" "$dir/candidate.json" \
      >"$dir/compare.log" 2>&1 || rc=$?
  else
    rc=$((rc1 != 0 ? rc1 : rc2))
    say "two-run $s $kind $pair: a run wrote no result (exits $rc1, $rc2): $(head -n 2 "$dir/run1.log" "$dir/run2.log" | tr '\n' ' ')"
  fi
  t3=$EPOCHREALTIME
  if method_on two-run; then
    record "$s" two-run "$kind" "$pair" "$rc" "$(elapsed "$t0" "$t3")" "$(regressed "$dir/compare.log")"
    say "$s two-run $kind pair $pair: exit $rc in $(elapsed "$t0" "$t3")s (runs exited $rc1, $rc2)"
  fi
  method_on two-run+history || return 0
  : >"$dir/compare-history.log"
  if [ -s "$dir/baseline.json" ] && [ -s "$dir/candidate.json" ]; then
    timeout -k 5 60 taskset -c 1 "$LOADGATE" compare "$dir/baseline.json" "$dir/candidate.json" \
      --baseline-history "$work/history-$s" >"$dir/compare-history.log" 2>&1 || rch=$?
  else
    rch=$rc
  fi
  t4=$EPOCHREALTIME
  # The wall time: the two runs and this comparison (the history runs are paid once, before).
  record "$s" two-run+history "$kind" "$pair" "$rch" \
    "$(awk -v a="$t0" -v b="$t2" -v c="$t3" -v d="$t4" 'BEGIN { printf "%.2f", (b - a) + (d - c) }')" \
    "$(regressed "$dir/compare-history.log")"
  say "$s two-run+history $kind pair $pair: exit $rch"
}

# HISTORY=N: N valid runs of scenario $1's baseline side (at most 2N tries; an invalid
# measurement, exit 5, is dropped, as a kept history would not hold it), each with its own
# neighbour pattern, into $work/history-$1: the results a stored baseline's history would hold.
record_history() {
  local s=$1 si=$2 try=0 kept=0 rc
  mkdir -p "$work/history-$s"
  while [ "$kept" -lt "$HISTORY" ] && [ "$try" -lt $((2 * HISTORY)) ]; do
    try=$((try + 1))
    start_neighbour $((SEED * 100000 + 50000 + si * 1000 + try))
    rc=0
    PORT=$P1 WORK=${base_of[$s]} timeout -k 5 "$RUN_TIMEOUT" taskset -c 1 "$LOADGATE" run -q "${spec_of[$s]}" \
      --out "$work/history-$s/run-$try.json" >"$work/history-$s-$try.log" 2>&1 || rc=$?
    stop_neighbour
    if [ "$rc" = 0 ]; then kept=$((kept + 1)); else rm -f "$work/history-$s/run-$try.json"; fi
    say "$s history run $try: exit $rc ($kept of $HISTORY kept)"
  done
}

# Without the two-run method, one `loadgate run` of scenario $1's baseline side (its own
# neighbour pattern) gives the time of one run that `ab`'s time is measured against.
time_one_run() {
  local s=$1 si=$2 t0 rc=0
  start_neighbour $((SEED * 100000 + 60000 + si))
  t0=$EPOCHREALTIME
  PORT=$P1 WORK=${base_of[$s]} timeout -k 5 "$RUN_TIMEOUT" taskset -c 1 "$LOADGATE" run -q "${spec_of[$s]}" \
    --out "$work/one-run-$s.json" >"$work/one-run-$s.log" 2>&1 || rc=$?
  record_run "$s" "$(elapsed "$t0" "$EPOCHREALTIME")"
  stop_neighbour
  say "$s: one run of the spec (for ab's time) exited $rc"
}

# `loadgate ab`: both sides in one invocation.
ab() {
  local s=$1 kind=$2 pair=$3 cand=$4 t0 t1 rc=0
  local dir="$work/$s-$kind-$pair"
  mkdir -p "$dir"
  t0=$EPOCHREALTIME
  timeout -k 5 "$AB_TIMEOUT" taskset -c 1 "$LOADGATE" ab -q "${spec_of[$s]}" \
    --baseline-url "http://127.0.0.1:$P1" --candidate-url "http://127.0.0.1:$P2" \
    --baseline "WORK=${base_of[$s]}" --candidate "WORK=$cand" --out "$dir/ab.json" "${ab_args[@]}" >"$dir/ab.log" 2>&1 || rc=$?
  t1=$EPOCHREALTIME
  if [ "$rc" != 0 ] && [ "$rc" != 4 ] && [ "$rc" != 5 ]; then
    say "$s ab $kind $pair failed: $(grep -v '^\s*$' "$dir/ab.log" | head -n 3 | tr '\n' ' ')"
  fi
  record "$s" ab "$kind" "$pair" "$rc" "$(elapsed "$t0" "$t1")" "$(regressed "$dir/ab.log")"
  say "$s ab $kind pair $pair: exit $rc in $(elapsed "$t0" "$t1")s"
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
: >"$work/runs.tsv"
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
say "$PAIRS A/A and $PAIRS slowed pairs per scenario (${scenarios[*]}), methods: ${active[*]:-none};" \
  "${D}s after ${W}s warmup; servers on ports $P1 and $P2; load average $load_start"
# What runs per pair: the two runs serve both two-run methods.
runners=()
if method_on two-run || method_on two-run+history; then runners+=(two-run); fi
if method_on ab; then runners+=(ab); fi
for si in "${!scenarios[@]}"; do
  if method_on two-run+history; then record_history "${scenarios[si]}" "$si"; fi
  if method_on ab && ! method_on two-run; then time_one_run "${scenarios[si]}" "$si"; fi
done
# Interleaved: each pair runs every scenario, kind and method in turn, so that a change of the
# machine's load over the benchmark falls on all of them alike.
for pair in $(seq "$PAIRS"); do
  for si in "${!scenarios[@]}"; do
    s=${scenarios[si]}
    for kind in aa slower; do
      cand=${base_of[$s]} seed=$((SEED * 100000 + pair * 100 + si * 10))
      if [ "$kind" = slower ]; then cand=${slow_of[$s]} seed=$((seed + 1)); fi
      for m in "${runners[@]}"; do
        # The same neighbour pattern for each method of this pair, scenario and kind.
        start_neighbour "$seed"
        case $m in two-run) two_run "$s" "$kind" "$pair" "$cand" ;; ab) ab "$s" "$kind" "$pair" "$cand" ;; esac
        stop_neighbour
      done
    done
  done
done
load_end=$(cut -d' ' -f1-3 /proc/loadavg)
for s in "${scenarios[@]}"; do printf '%s\t%s\t%s\n' "$s" "${rules_of[$s]}" "${about_of[$s]}"; done >"$work/scenarios.tsv"

# --- the table ------------------------------------------------------------------------------------

table() {
  echo "ab_noise: ${D}s runs after ${W}s warmup; neighbour" \
    "$([ "$NEIGHBOUR" = 1 ] && echo "on/off phases of ${PHASES}s on the services' core, seed $SEED" || echo off);" \
    "$PAIRS A/A and $PAIRS slowed pairs per scenario; load average $load_start at the start, $load_end at the end."
  echo
  python3 - "$work" "$PAIRS" "$HAVE_AB" "$METHODS" <<'PY'
import glob, json, statistics, sys
from collections import Counter, defaultdict
work, pairs, have_ab, methods = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1", sys.argv[4].split()
scenarios = [line.rstrip("\n").split("\t") for line in open(f"{work}/scenarios.tsv")]
rows = defaultdict(list)
for line in open(f"{work}/results.tsv"):
    s, method, kind, pair, rc, wall, rules = line.rstrip("\n").split("\t")
    rows[s, method].append((kind, int(rc), float(wall), [r for r in rules.split(";") if r]))
runs = defaultdict(list)
for line in open(f"{work}/runs.tsv"):
    s, wall = line.split()
    runs[s].append(float(wall))
for s, _, about in scenarios:
    print(f"- `{s}`: {about}.")
print()
print("| scenario | method | rules | A/A false alarms (exit 4) | slowed caught (exit 4) | exit 5 | failed | wall s (median) | × one run (median, max) |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
goals, notes = [], []
ok = lambda c: "met" if c else "**NOT met**"
for s, nrules, _ in scenarios:
    one_run = statistics.median(runs[s]) if runs[s] else None
    for method in ("two-run", "two-run+history", "ab"):
        if method not in methods:
            continue
        if method == "ab" and not have_ab:
            print(f"| {s} | ab | {nrules} | not available in this binary | | | | | |")
            goals.append(f"{s}, ab: not measured (loadgate ab: not available in this binary)")
            continue
        got = rows[s, method]
        aa = [r for r in got if r[0] == "aa"]
        slow = [r for r in got if r[0] == "slower"]
        false = sum(1 for r in aa if r[1] == 4)
        caught = sum(1 for r in slow if r[1] == 4)
        invalid = sum(1 for r in got if r[1] == 5)
        failed = sum(1 for r in got if r[1] not in (0, 4, 5))
        walls = [r[2] for r in got]
        wall = statistics.median(walls) if walls else float("nan")
        ratio = "-"
        if one_run and walls:
            ratio = f"{wall / one_run:.2f}x, {max(walls) / one_run:.2f}x"
        print(f"| {s} | {method} | {nrules} | {false} of {len(aa)} | {caught} of {len(slow)} | {invalid} of {len(got)} | {failed} | {wall:.1f} | {ratio} |")
        for kind, label in (("aa", "A/A false alarms"), ("slower", "slowed catches")):
            by_rule = Counter(rule for r in got if r[0] == kind and r[1] == 4 for rule in r[3])
            if by_rule:
                notes.append(f"{s}, {method}, {label} by rule (runs in which it regressed): "
                             + ", ".join(f"`{rule}` {n}" for rule, n in by_rule.most_common()))
        if method == "ab":
            n = len(got)
            goals.append(f"{s}, ab: at most {pairs * 0.05:g} false alarms in {len(aa)} A/A runs (1 in 20): {ok(false <= pairs * 0.05)} ({false})")
            goals.append(f"{s}, ab: at least {pairs * 0.9:g} of {len(slow)} slowed runs caught (18 of 20): {ok(caught >= pairs * 0.9)} ({caught})")
            if one_run and walls:
                goals.append(f"{s}, ab: each invocation at most 3x one run of the spec ({one_run:.1f} s): {ok(max(walls) <= 3 * one_run)} (median {wall / one_run:.2f}x, max {max(walls) / one_run:.2f}x)")
        if got:
            goals.append(f"{s}, {method}: exit 5 in at most 1 of 20 runs: {ok(invalid <= len(got) / 20)} ({invalid} of {len(got)})")
    if one_run:
        notes.append(f"{s}: one `loadgate run` of the spec took {one_run:.1f} s of wall time (median of {len(runs[s])})")
if notes:
    print()
    for note in notes:
        print(f"- {note}")
print("\nGoals (issue 32; with another PAIRS the counts scale: 5%, 90%):")
for goal in goals or ["(no results)"]:
    print(f"- {goal}")
PY
}
table | tee ${OUT:+"$OUT"}
if [[ " $METHODS " == *" ab "* ]] && [ "$HAVE_AB" = 0 ]; then
  say "loadgate ab: not available in this binary ($LOADGATE): build it from a branch with \`loadgate ab\`"
  exit 1
fi
