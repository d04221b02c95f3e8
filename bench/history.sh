#!/usr/bin/env bash
# A stored baseline on a machine whose speed changes (issue 33): does `compare
# --baseline-history` (each rule against the level of the history since its last change point)
# cry wolf less than two runs compared alone, and does it still catch a 15% slower build?
#
# A spec of one target with CPU work per request (WORK, `loadgate serve`'s `work=`) and RULES
# (p(50)/p(95)/p(99)) is run HISTORY times against the baseline build, each run with its own
# pattern of a neighbour that takes the service's core on and off at random: the nightly
# history of the base branch (stored with `loadgate history add` when this loadgate has it,
# else as plain result files in a folder, which `--baseline-history` reads alike). Then PAIRS
# pull-request runs of the same build (A/A) and PAIRS of a build with WORK ×1.15 (SLOWER) are
# each compared twice: with the history (`compare BASELINE CURRENT --baseline-history DIR`,
# BASELINE the latest history run) and with the latest history run alone (`compare BASELINE
# CURRENT`, two runs). A Markdown table says per method how often it cried wolf and how many
# slower builds it caught (see bench/README.md, "Stored baseline").
#
#   bench/history.sh                                   # 10 history runs, 20 A/A and 20 slower runs
#   HISTORY=6 PAIRS=5 DURATION=3s bench/history.sh     # a quick look
#   LOADGATE=target/fallback/loadgate INSTALL=0 OUT=table.md bench/history.sh
#   LOADGATE=old/loadgate COMPARE=target/debug/loadgate bench/history.sh   # runs by one, compares by another
#
# `loadgate serve --threads 1` and the neighbour run pinned to core 0, loadgate pinned to core
# 1 (taskset). The neighbour is a busy loop that alternates busy and idle phases of PHASES
# seconds drawn from a seeded generator, a new seed per run. Runs whose measurement is invalid
# (exit 5) are left out of the history, and counted apart in the table. Loopback only; every
# command has a timeout; the server and the neighbour are stopped on exit. With the defaults
# (5 s runs after 1 s of warmup) it takes about 6 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."

HISTORY=${HISTORY:-10}
PAIRS=${PAIRS:-20}
DURATION=${DURATION:-5s}
WARMUP=${WARMUP:-1s}
RATE=${RATE:-100}
WORK=${WORK:-1000us}
SLOWER=${SLOWER:-}
RULES=${RULES:-'"p(50) +5% floor 50us", "p(95) +5% floor 50us", "p(99) +10% floor 100us"'}
NEIGHBOUR=${NEIGHBOUR:-1}
PHASES=${PHASES:-0.5-3}
SEED=${SEED:-33}
INSTALL=${INSTALL:-1}
LOADGATE=${LOADGATE:-}
COMPARE=${COMPARE:-}
OUT=${OUT:-}
KEEP=${KEEP:-0}
# The niceness of the server, the neighbour and the runs (e.g. -5 on a machine busy with other
# work, so that the neighbour is what changes the service's speed; below 0 needs root).
NICE=${NICE:-0}
# The generator's lateness limit (`load.health.late_p99`), e.g. 200ms where the machine is so
# busy that the default 10ms marks every run invalid; empty: the default.
LATE=${LATE:-}

say() { echo "history: $*" >&2; }
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
D=$(seconds "$DURATION")
W=$(seconds "$WARMUP")
[[ $HISTORY =~ ^[1-9][0-9]*$ ]] || { say "HISTORY is a positive whole number of runs, not '$HISTORY'"; exit 2; }
[[ $PAIRS =~ ^[1-9][0-9]*$ ]] || { say "PAIRS is a positive whole number, not '$PAIRS'"; exit 2; }
[[ $NICE =~ ^-?[0-9]+$ ]] || { say "NICE is a whole number (-5), not '$NICE'"; exit 2; }
[[ $RATE =~ ^[1-9][0-9]*$ ]] || { say "RATE is a whole number per second, not '$RATE'"; exit 2; }
[[ $PHASES =~ ^[0-9.]+-[0-9.]+$ ]] || { say "PHASES is MIN-MAX in seconds (0.5-3), not '$PHASES'"; exit 2; }
micros "$WORK" >/dev/null
SLOWER=${SLOWER:-$(awk -v us="$(micros "$WORK")" 'BEGIN { printf "%dus", us * 1.15 + 0.5 }')}
micros "$SLOWER" >/dev/null

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
COMPARE=${COMPARE:-$LOADGATE}
[ -x "$COMPARE" ] || { say "COMPARE=$COMPARE is not an executable"; exit 2; }
HAVE_STORE=0
timeout 10 "$COMPARE" history add --help >/dev/null 2>&1 && HAVE_STORE=1

# --- the server and the neighbour ---------------------------------------------------------------

work=$(mktemp -d /tmp/loadgate-history.XXXXXX)
server_pid=
neighbour_pid=
stop() { # stops one background process of ours, by its id
  kill "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}
cleanup() {
  [ -n "$neighbour_pid" ] && stop "$neighbour_pid"
  [ -n "$server_pid" ] && stop "$server_pid"
  if [ "$KEEP" = 1 ]; then say "logs kept in $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

nice -n "$NICE" taskset -c 0 "$LOADGATE" serve --listen 127.0.0.1:0 --threads 1 >"$work/serve.out" 2>"$work/serve.err" &
server_pid=$!
PORT=
for _ in $(seq 100); do
  PORT=$(sed -n 's|^loadgate serve: listening on http://127\.0\.0\.1:\([0-9]*\)$|\1|p' "$work/serve.out")
  if [ -n "$PORT" ] && curl -sf --max-time 2 "http://127.0.0.1:$PORT/health" >/dev/null; then break; fi
  PORT=
  sleep 0.05
done
[ -n "$PORT" ] || { say "loadgate serve did not start:"; cat "$work/serve.err" >&2; exit 1; }
curl -sf --max-time 5 "http://127.0.0.1:$PORT/?work=$WORK" >/dev/null ||
  { say "the server refused ?work=$WORK"; exit 1; }

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
  nice -n "$NICE" taskset -c 0 python3 "$work/neighbour.py" "$1" "$PHASES" >/dev/null 2>&1 &
  neighbour_pid=$!
}
stop_neighbour() {
  if [ -n "$neighbour_pid" ]; then stop "$neighbour_pid"; neighbour_pid=; fi
}

cat >"$work/spec.yaml" <<YAML
version: 1
name: history-bench
defaults:
  base_url: http://127.0.0.1:$PORT
targets:
  - name: work
    path: /?work=\${WORK}
load:
  model: open
  rate: $RATE/s
  duration: ${D}s
  warmup: ${W}s
${LATE:+  health: { late_p99: $LATE \}}
regression:
  latency: [$RULES]
  errors: []
  requests: []
YAML
WORK=$WORK timeout 30 "$LOADGATE" validate "$work/spec.yaml" >&2 ||
  { say "the generated spec is not valid (above)"; exit 1; }
RUN_TIMEOUT=$((D + W + 30))

# One run of the spec with work $1 and neighbour seed $2 into $3; prints its exit code.
run_once() {
  local rc=0
  start_neighbour "$2"
  WORK=$1 timeout -k 5 "$RUN_TIMEOUT" nice -n "$NICE" taskset -c 1 "$LOADGATE" run -q "$work/spec.yaml" \
    --out "$3" >"$3.log" 2>&1 || rc=$?
  stop_neighbour
  echo "$rc"
}

# --- the history ------------------------------------------------------------------------------

t_start=$EPOCHREALTIME
store="$work/store"
mkdir -p "$store" "$work/runs"
kept=0 try=0 invalid_history=0 latest=
while [ "$kept" -lt "$HISTORY" ] && [ "$try" -lt $((2 * HISTORY)) ]; do
  try=$((try + 1))
  file="$work/runs/history-$try.json"
  rc=$(run_once "$WORK" $((SEED * 100000 + try)) "$file")
  if [ "$rc" = 0 ]; then
    kept=$((kept + 1))
    if [ "$HAVE_STORE" = 1 ]; then
      timeout 30 "$COMPARE" history add "$store" "$file" --branch main >/dev/null
    else
      cp "$file" "$store/"
    fi
    latest=$file
  else
    invalid_history=$((invalid_history + 1))
  fi
  say "history run $try: exit $rc ($kept of $HISTORY kept)"
done
[ -n "$latest" ] || { say "no valid history run"; exit 1; }

# --- the pull requests ----------------------------------------------------------------------------

: >"$work/results.tsv"
for pair in $(seq "$PAIRS"); do
  for kind in aa slower; do
    cand=$WORK
    [ "$kind" = slower ] && cand=$SLOWER
    file="$work/runs/$kind-$pair.json"
    rc=$(run_once "$cand" $((SEED * 100000 + 50000 + pair * 10 + ${#kind})) "$file")
    for method in history two-run; do
      crc=$rc
      if [ -s "$file" ]; then
        crc=0
        args=()
        [ "$method" = history ] && args=(--baseline-history "$store")
        timeout -k 5 60 "$COMPARE" compare "$latest" "$file" "${args[@]}" \
          >"$file.$method.txt" 2>&1 || crc=$?
        # An invalid current run makes `compare` exit 5 whatever the rules say.
      fi
      printf '%s\t%s\t%s\t%s\n' "$method" "$kind" "$pair" "$crc" >>"$work/results.tsv"
    done
    say "$kind run $pair (work $cand): run exit $rc; compare exits $(awk -v k="$kind" -v p="$pair" '$2 == k && $3 == p { printf "%s=%s ", $1, $4 }' "$work/results.tsv")"
  done
done
wall=$(awk -v a="$t_start" -v z="$EPOCHREALTIME" 'BEGIN { printf "%.0f", z - a }')

# --- the table --------------------------------------------------------------------------------------

STORED_WITH="plain files in a folder"
LATE_TEXT=
[ -n "$LATE" ] && LATE_TEXT="; the generator's lateness limit raised to $LATE"
# shellcheck disable=SC2016 # a name in backquotes, for Markdown
[ "$HAVE_STORE" = 1 ] && STORED_WITH='`loadgate history add`'
table() {
  echo "Stored baseline on a machine whose speed changes: one target, work=$WORK per request" \
    "(slower: $SLOWER), open model $RATE/s, ${D}s runs after ${W}s warmup, rules [$RULES];" \
    "a neighbour of random duty (phases $PHASES s) on the service's core; $kept history runs" \
    "($invalid_history invalid left out; stored with $STORED_WITH);" \
    "$PAIRS A/A and $PAIRS slower runs; ${wall}s in all$LATE_TEXT."
  echo
  echo "| method | A/A false alarms (exit 4) | slower caught (exit 4) | invalid (exit 5) | other exits |"
  echo "|---|---|---|---|---|"
  awk -F'\t' '
    { key = $1; total[key]++ }
    $4 == 5 { invalid[key]++; next }
    $4 != 0 && $4 != 4 { other[key]++; next }
    $2 == "aa" { aa[key]++; if ($4 == 4) fa[key]++ }
    $2 == "slower" { sl[key]++; if ($4 == 4) caught[key]++ }
    END {
      split("history two-run", order, " ")
      names["history"] = "`compare --baseline-history` (segment level)"
      names["two-run"] = "`compare` (two runs)"
      for (i = 1; i <= 2; i++) {
        k = order[i]
        printf "| %s | %d of %d | %d of %d | %d | %d |\n", names[k], fa[k], aa[k], caught[k], sl[k], invalid[k], other[k]
      }
    }' "$work/results.tsv"
}
if [ -n "$OUT" ]; then table | tee "$OUT"; else table; fi
