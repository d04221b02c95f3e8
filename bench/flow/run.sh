#!/usr/bin/env bash
# Issue 16's benchmark: the same 3-step flow in k6 and in loadgate, side by side, against one
# `loadgate serve` on 127.0.0.1 (docs: bench/README.md, "Issue 16").
#
# The flow (flow.js for k6, flow.yaml for loadgate): log in with a user from
# examples/data/users.csv (the token extracted from the JSON body, the session cookie from
# Set-Cookie into the virtual user's cookie jar), GET an item with the token, POST it to the cart
# with the cookie. Both tools run the closed model with VUS virtual users for DURATION seconds,
# in ROUNDS interleaved rounds (k6, loadgate flow, loadgate plain; again...), each pinned to core
# 1 while the server (one thread) is pinned to core 0. "plain" is loadgate running one target
# (GET /api/items, plain.yaml) at the same concurrency, to weigh a flow step against a plain
# request. Then one loadgate flow run of LONG seconds has its resident set size sampled every
# second.
#
# Measured per run: iterations (requests for plain), the load generator's own CPU time
# (user+sys, from wait4's rusage: not the server's), CPU µs per iteration (per request for a
# flow step and for plain). Prints a table of the medians over rounds and writes every run and
# the medians to OUT (JSON).
#
#   bench/flow/run.sh                                  # 3 rounds of 20 s, then 60 s: about 5 min
#   ROUNDS=1 DURATION=5 LONG=10 bench/flow/run.sh      # a quick look
#
# Environment: ROUNDS (3), VUS (8), DURATION (20, seconds), LONG (60, seconds), OUT
# (target/bench-flow.json), LOADGATE (a loadgate binary; default: target/release/loadgate, built
# with `cargo build --release --locked -p loadgate`), K6 (a k6 binary; default: k6 on PATH or in
# `go env GOPATH`/bin, installed with `go install go.k6.io/k6@v1.8.1` when missing).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
ROUNDS=${ROUNDS:-3}
VUS=${VUS:-8}
DURATION=${DURATION:-20}
LONG=${LONG:-60}
OUT=${OUT:-target/bench-flow.json}
K6_VERSION=v1.8.1

if [ -z "${LOADGATE:-}" ]; then
  cargo build --release --locked -q -p loadgate
  LOADGATE=$root/target/release/loadgate
fi
if [ -z "${K6:-}" ]; then
  K6=$(command -v k6 || true)
  [ -n "$K6" ] || K6=$(go env GOPATH)/bin/k6
  if [ ! -x "$K6" ]; then
    echo "installing k6 $K6_VERSION with go install" >&2
    go install "go.k6.io/k6@$K6_VERSION"
  fi
fi
echo "loadgate: $("$LOADGATE" --version)  k6: $("$K6" version | head -1)" >&2

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
  grep -q "listening on" "$work/serve.out" && break
  sleep 0.1
done
base=$(sed -n 's/^loadgate serve: listening on //p' "$work/serve.out")
[ -n "$base" ] || { echo "loadgate serve did not start: $(cat "$work/serve.out")" >&2; exit 1; }
curl -sf "$base/api/items" > /dev/null

# The specs, with this run's load and the data file's absolute path; BASE_URL is read by them.
export BASE_URL=$base
spec() { # spec NAME SECONDS: bench/flow/NAME.yaml for SECONDS, into $work
  sed -e "s#^  connections: .*#  connections: $VUS#" \
    -e "s#^  duration: .*#  duration: ${2}s#" \
    -e "s#file: ../../examples/data/users.csv#file: $root/examples/data/users.csv#" \
    "bench/flow/$1.yaml" > "$work/$1-$2.yaml"
}
spec flow "$DURATION"
spec plain "$DURATION"
spec flow "$LONG"

measure=bench/flow/measure.py
limit=$((DURATION + 60))  # seconds: a run still going by then is killed
run() { # run TOOL ROUND: one measured run, its measures to $work/TOOL-ROUND.json
  local tool=$1 round=$2 out="$work/$1-$2"
  case $tool in
    k6)
      USERS=$root/examples/data/users.csv VUS=$VUS DURATION=${DURATION}s \
        taskset -c 1 python3 "$measure" --limit "$limit" "$out.stdout" "$out.stderr" -- \
        "$K6" run --quiet --no-color --no-usage-report --address "" \
        --summary-export "$out.summary.json" bench/flow/flow.js > "$out.json" ;;
    flow|plain)
      taskset -c 1 python3 "$measure" --limit "$limit" "$out.stdout" "$out.stderr" -- \
        "$LOADGATE" run -q --no-color "$work/$tool-$DURATION.yaml" --out "$out.result.json" \
        > "$out.json" ;;
  esac
  local made=$out.result.json
  [ "$tool" != k6 ] || made=$out.summary.json
  if [ ! -s "$made" ]; then
    echo "$tool failed (round $round): $(tail -5 "$out.stderr")" >&2
    exit 1
  fi
}
for round in $(seq "$ROUNDS"); do
  for tool in k6 flow plain; do
    echo "round $round/$ROUNDS: $tool, $VUS virtual users, ${DURATION}s" >&2
    run "$tool" "$round"
  done
done
echo "memory: loadgate flow, $VUS virtual users, ${LONG}s, RSS every second" >&2
taskset -c 1 python3 "$measure" --limit $((LONG + 60)) --rss-every 1 "$work/long.stdout" "$work/long.stderr" -- \
  "$LOADGATE" run -q --no-color "$work/flow-$LONG.yaml" --out "$work/long.result.json" \
  > "$work/long.json"

mkdir -p "$(dirname "$OUT")"
python3 bench/flow/summary.py "$work" "$ROUNDS" "$VUS" "$DURATION" "$LONG" "$OUT"
