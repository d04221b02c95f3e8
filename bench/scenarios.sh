#!/usr/bin/env bash
# Issue 34's benchmark: what scenarios cost (docs: bench/README.md, "Issue 34").
#
# The workload: two scenarios at once against one `loadgate serve` (one thread, core 0) on
# 127.0.0.1, every load generator pinned to core 1:
#   reads     GET /api/items at READ_RATE per second (loadgate: constant-arrival-rate);
#   checkout  CHECKOUT_VUS virtual users, each running iterations of the flow: log in (a user
#             of examples/data/users.csv; the token from the JSON body, the session cookie
#             into the user's jar), GET /api/items/3 with the token, POST /api/cart with the
#             cookie; each step's status checked (loadgate: ramping-vus, held at its level).
# Two phases, each in ROUNDS interleaved rounds of DURATION seconds per arm:
#   saturated  the checkout users run without a pause (k6's ramping-vus without a sleep): each
#              tool does as many iterations as its core allows. Arms: locust, two.
#   paced      each checkout user runs at most CHECKOUT_PACING iterations per second (loadgate's
#              `pacing`, Locust's constant_throughput): a fixed load below what either tool can
#              do, so that every arm does the same work. Arms: locust, two, pair.
# Arms:
#   locust  Locust (FastHttpUser; bench/scenarios/locustfile.py): ReadUser (READ_USERS users
#           at READ_RATE / READ_USERS task runs/s each) beside CheckoutUser (CHECKOUT_VUS
#           users); headless, one process.
#   two     loadgate, both scenarios in one spec (`scenarios:`).
#   pair    loadgate, each part as a one-scenario spec (the short form, `load:`), run back to
#           back: `reads` (open model, the same rate), then `checkout` (closed model, the same
#           virtual users and pacing); their CPU times and counts summed: the same load as one
#           scenario each, the baseline of what running scenarios side by side adds.
# Measured per arm: the load generator's own CPU time (user+sys from wait4's rusage, whole
# process, start-up included; bench/flow/measure.py), never the server's; iterations as the
# tool counts them (loadgate's result: the read target's requests + the checkout flow's
# iterations; Locust's stats CSV: `read` requests + `cart` requests, the checkout iterations
# that ended); requests; failures. Ratios of CPU µs per iteration, per round, then their
# median: two / locust (the issue's goal: at most 0.25) and two / pair (at most 1.05). Prints a
# table of medians per phase; writes every run, the medians and the ratios to OUT (JSON).
#
#   bench/scenarios.sh                                  # 3 rounds of 20 s: about 7 min
#   ROUNDS=1 DURATION=5 bench/scenarios.sh              # a quick look
#   PHASES=paced PACED_ARMS="two pair" bench/scenarios.sh   # scenarios against one scenario
#
# Environment: ROUNDS (3), DURATION (20, seconds), READ_RATE (400, reads/s), READ_USERS (40,
# Locust's read users), CHECKOUT_VUS (8), CHECKOUT_PACING (20, iterations/s per virtual user,
# the paced phase), PHASES ("saturated paced"), SATURATED_ARMS ("locust two"), PACED_ARMS
# ("locust two pair"), OUT (target/bench-scenarios.json), LOADGATE (a loadgate binary; default:
# target/release/loadgate, built with `cargo build --release --locked -p loadgate`), LOCUST_VENV
# (target/ci-tools/locust-venv: Locust 2.47.0 installed there with pip when missing; needs
# python3 with venv).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-20}
READ_RATE=${READ_RATE:-400}
READ_USERS=${READ_USERS:-40}
CHECKOUT_VUS=${CHECKOUT_VUS:-8}
CHECKOUT_PACING=${CHECKOUT_PACING:-20}
PHASES=${PHASES:-saturated paced}
SATURATED_ARMS=${SATURATED_ARMS:-locust two}
PACED_ARMS=${PACED_ARMS:-locust two pair}
OUT=${OUT:-target/bench-scenarios.json}
LOCUST_VENV=${LOCUST_VENV:-$root/target/ci-tools/locust-venv}
LOCUST_VERSION=2.47.0

if [ -z "${LOADGATE:-}" ]; then
  cargo build --release --locked -q -p loadgate
  LOADGATE=$root/target/release/loadgate
fi
case " $SATURATED_ARMS $PACED_ARMS " in
  *" locust "*)
    if [ ! -x "$LOCUST_VENV/bin/locust" ]; then
      echo "installing Locust $LOCUST_VERSION into $LOCUST_VENV" >&2
      python3 -m venv "$LOCUST_VENV"
      "$LOCUST_VENV/bin/pip" install -q "locust==$LOCUST_VERSION"
    fi
    echo "locust: $("$LOCUST_VENV/bin/locust" --version 2>&1 | head -1)" >&2 ;;
esac
echo "loadgate: $("$LOADGATE" --version)" >&2

work=$(mktemp -d)
server=
cleanup() {
  [ -z "$server" ] || kill "$server" 2>/dev/null || true
  [ -z "$server" ] || wait "$server" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# The server: one thread on core 0, on a free port read from its first line.
taskset -c 0 "$LOADGATE" serve --listen 127.0.0.1:0 --threads 1 > "$work/serve.out" 2>&1 &
server=$!
for _ in $(seq 100); do
  grep -qs "listening on" "$work/serve.out" && break
  sleep 0.1
done
base=$(sed -n 's/^loadgate serve: listening on //p' "$work/serve.out")
[ -n "$base" ] || { echo "loadgate serve did not start: $(cat "$work/serve.out")" >&2; exit 1; }
curl -sf "$base/api/items" > /dev/null

# The loadgate specs of a phase, into $work/PHASE/: the targets and flows (the same in every
# spec), then each arm's load. `pacing` is the checkout's line, or none (PACING 0).
users=$root/examples/data/users.csv
parts() {
  cat <<EOF
version: 1
name: bench-scenarios
defaults:
  base_url: $base
  timeout: 2s
EOF
}
read_target() {
  cat <<EOF
targets:
  - name: read
    path: /api/items
    expect: { status: [200] }
EOF
}
checkout_flow() {
  cat <<EOF
flows:
  - name: checkout
    data: { file: $users, order: sequential }
    steps:
      - name: login
        method: POST
        path: /api/login
        headers: { Content-Type: application/json }
        body: '{"user": "{{username}}", "password": "{{password}}"}'
        expect: { status: [200] }
        extract:
          - { var: token, json: /token }
      - name: item
        path: /api/items/3
        headers: { Authorization: "Bearer {{token}}" }
        expect: { status: [200] }
      - name: cart
        method: POST
        path: /api/cart
        headers: { Content-Type: application/json }
        body: '{"item": 3}'
        expect: { status: [201] }
EOF
}
specs() { # specs DIR PACING
  local dir=$1 pacing=
  [ "$2" = 0 ] || pacing="pacing: $2/s"
  mkdir -p "$dir"
  {
    parts; read_target; checkout_flow
    cat <<EOF
scenarios:
  - name: reads
    executor: constant-arrival-rate
    targets: [read]
    rate: $READ_RATE/s
    duration: ${DURATION}s
    max_in_flight: 64
  - name: checkout
    executor: ramping-vus
    flows: [checkout]
    start_vus: $CHECKOUT_VUS
    stages:
      - { duration: ${DURATION}s, level: $CHECKOUT_VUS }
    $pacing
EOF
  } > "$dir/two.yaml"
  {
    parts; read_target
    cat <<EOF
load:
  model: open
  rate: $READ_RATE/s
  duration: ${DURATION}s
  max_in_flight: 64
EOF
  } > "$dir/reads.yaml"
  {
    parts; checkout_flow
    cat <<EOF
load:
  connections: $CHECKOUT_VUS
  duration: ${DURATION}s
  $pacing
EOF
  } > "$dir/checkout.yaml"
}

measure=bench/flow/measure.py
limit=$((DURATION + 60))  # seconds: a run still going by then is killed
loadgate_run() { # loadgate_run DIR NAME ROUND: DIR/NAME.yaml, its measures to DIR/NAME-ROUND.*
  local out="$1/$2-$3"
  taskset -c 1 python3 "$measure" --limit "$limit" "$out.stdout" "$out.stderr" -- \
    "$LOADGATE" run -q --no-color "$1/$2.yaml" --out "$out.result.json" > "$out.json" || true
  if [ ! -s "$out.result.json" ]; then
    echo "loadgate $2 failed (round $3): $(tail -5 "$out.stderr")" >&2
    exit 1
  fi
}
locust_run() { # locust_run DIR PACING ROUND
  local out="$1/locust-$3"
  USERS_CSV=$users READ_RATE=$READ_RATE READ_USERS=$READ_USERS CHECKOUT_PACING=$2 \
    taskset -c 1 python3 "$measure" --limit "$limit" "$out.stdout" "$out.stderr" -- \
    "$LOCUST_VENV/bin/locust" -f bench/scenarios/locustfile.py --headless --only-summary \
    --host "$base" --users $((READ_USERS + CHECKOUT_VUS)) --spawn-rate 10000 \
    --run-time "${DURATION}s" --csv "$out" --exit-code-on-error 0 --loglevel WARNING \
    > "$out.json" || true
  if [ ! -s "${out}_stats.csv" ]; then
    echo "locust failed (round $3): $(tail -5 "$out.stderr")" >&2
    exit 1
  fi
}
summaries=()
for phase in $PHASES; do
  case $phase in
    saturated) pacing=0 arms=$SATURATED_ARMS ;;
    paced) pacing=$CHECKOUT_PACING arms=$PACED_ARMS ;;
    *) echo "unknown phase $phase (saturated, paced)" >&2; exit 2 ;;
  esac
  dir=$work/$phase
  specs "$dir" "$pacing"
  for round in $(seq "$ROUNDS"); do
    for arm in $arms; do
      echo "$phase, round $round/$ROUNDS: $arm, ${DURATION}s" >&2
      case $arm in
        locust) locust_run "$dir" "$pacing" "$round" ;;
        two) loadgate_run "$dir" two "$round" ;;
        pair) loadgate_run "$dir" reads "$round"; loadgate_run "$dir" checkout "$round" ;;
        *) echo "unknown arm $arm (locust, two, pair)" >&2; exit 2 ;;
      esac
    done
  done
  if [ "$pacing" = 0 ]; then
    load="$phase: reads $READ_RATE/s, checkout $CHECKOUT_VUS VUs without pause"
    planned=0
  else
    load="$phase: reads $READ_RATE/s, checkout $CHECKOUT_VUS VUs at $pacing/s each"
    planned=$(((READ_RATE + CHECKOUT_VUS * pacing) * DURATION))
  fi
  python3 bench/scenarios/summary.py "$dir" "$ROUNDS" "$DURATION" "$arms" "$planned" \
    "$dir/summary.json" "$load"
  summaries+=("$phase=$dir/summary.json")
  echo >&2
done

mkdir -p "$(dirname "$OUT")"
python3 - "$OUT" "${summaries[@]}" <<'EOF'
import json, sys
out, phases = sys.argv[1], dict(arg.split("=", 1) for arg in sys.argv[2:])
merged = {phase: json.load(open(path)) for phase, path in phases.items()}
with open(out, "w") as f:
    json.dump(merged, f, indent=2)
    f.write("\n")
print(f"summary: {out}")
EOF
