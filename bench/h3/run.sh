#!/usr/bin/env bash
# Issue 18's benchmark: loadgate's HTTP/3 against its own HTTP/2 over TLS, and against oha's
# HTTP/3 and HTTP/2 (oha built with its `http3` feature: quinn and h3, as loadgate), all on one
# `loadgate serve --h3` on 127.0.0.1 (docs: bench/README.md, "Issue 18").
#
# Every tool runs the closed model with CONNECTIONS connections each carrying STREAMS requests
# at once (loadgate `connections` and `load.streams`; oha `-c` and `-p`), GET PATH_QUERY, for
# DURATION seconds, in ROUNDS interleaved rounds (loadgate h2, loadgate h3, oha h2, oha h3;
# again...), each pinned to core 1 while the server (one thread) is pinned to core 0. Then one
# loadgate HTTP/3 run of LONG seconds has its resident set size sampled every second.
#
# Measured per run: responses (the tool's own count: loadgate's result file, oha's JSON
# summary), the load generator's CPU time (user+sys, from wait4's rusage: not the server's),
# CPU µs per response, peak RSS. Prints a table of the medians over rounds and the ratios the
# issue asks for, and writes every run and the medians to OUT (JSON).
#
#   bench/h3/run.sh                                    # 3 rounds of 20 s, then 60 s: about 6 min
#   ROUNDS=1 DURATION=5 LONG=10 bench/h3/run.sh        # a quick look
#
# Environment: ROUNDS (3), CONNECTIONS (4), STREAMS (16), DURATION (20, seconds), LONG (60,
# seconds), PATH_QUERY (/bench?size=64), OUT (target/bench-h3.json), LOADGATE (a loadgate binary;
# default: target/release/loadgate, built with `cargo build --release --locked -p loadgate`),
# OHA (an oha binary with HTTP/3; default: target/bench-tools/bin/oha, installed with
# `cargo install oha --version 1.16.0 --locked --features http3` when missing, about 10 min;
# INSTALL=0 skips oha instead).
#
# The UDP socket buffers are the system's (net.core.rmem_max, wmem_max): the script changes no
# setting. loadgate's result reports what its sockets got; the table's header repeats it.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
ROUNDS=${ROUNDS:-3}
CONNECTIONS=${CONNECTIONS:-4}
STREAMS=${STREAMS:-16}
DURATION=${DURATION:-20}
LONG=${LONG:-60}
PATH_QUERY=${PATH_QUERY:-/bench?size=64}
OUT=${OUT:-target/bench-h3.json}
INSTALL=${INSTALL:-1}
OHA_VERSION=1.16.0

if [ -z "${LOADGATE:-}" ]; then
  cargo build --release --locked -q -p loadgate
  LOADGATE=$root/target/release/loadgate
fi
tools="lg-h2 lg-h3"
if [ -z "${OHA:-}" ]; then
  OHA=$root/target/bench-tools/bin/oha
  if [ ! -x "$OHA" ] && [ "$INSTALL" = 1 ]; then
    echo "installing oha $OHA_VERSION with its http3 feature (cargo install, about 10 min)" >&2
    cargo install oha --version "$OHA_VERSION" --locked --features http3 --root "$root/target/bench-tools"
  fi
fi
if [ -x "$OHA" ]; then
  tools="$tools oha-h2 oha-h3"
else
  echo "SKIPPED oha: none at $OHA (INSTALL=0)" >&2
fi
echo "loadgate: $("$LOADGATE" --version)  oha: $([ -x "$OHA" ] && "$OHA" --version || echo none)" >&2

work=$(mktemp -d)
server=
cleanup() {
  [ -z "$server" ] || kill "$server" 2>/dev/null || true
  [ -z "$server" ] || wait "$server" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# The server: one thread on core 0, TLS with the examples' test certificate, HTTP/3 on the same
# port number, on a free port read from its first line.
data=$root/examples/data
taskset -c 0 "$LOADGATE" serve --listen 127.0.0.1:0 --threads 1 \
  --tls-cert "$data/localhost-test.pem" --tls-key "$data/localhost-test.key" --h3 \
  > "$work/serve.out" 2>&1 &
server=$!
for _ in $(seq 100); do
  grep -q "HTTP/3 on" "$work/serve.out" && break
  sleep 0.1
done
base=$(sed -n 's/^loadgate serve: listening on //p' "$work/serve.out")
[ -n "$base" ] || { echo "loadgate serve did not start: $(cat "$work/serve.out")" >&2; exit 1; }
curl -sf --cacert "$data/test-ca.pem" "$base/health" > /dev/null

spec() { # spec PROTOCOL SECONDS: a spec for loadgate, into $work
  cat > "$work/$1-$2.yaml" <<YAML
version: 1
name: bench-$1
defaults:
  base_url: $base
  protocol: $1
  timeout: 5s
  tls:
    ca_file: $data/test-ca.pem
targets:
  - name: get
    path: "$PATH_QUERY"
load:
  connections: $CONNECTIONS
  streams: $STREAMS
  duration: ${2}s
YAML
}
spec h2 "$DURATION"
spec h3 "$DURATION"
spec h3 "$LONG"

measure=bench/flow/measure.py
limit=$((DURATION + 60))  # seconds: a run still going by then is killed
run() { # run TOOL ROUND: one measured run, its measures to $work/TOOL-ROUND.json
  local tool=$1 round=$2 out="$work/$1-$2"
  case $tool in
    lg-h2|lg-h3)
      taskset -c 1 python3 "$measure" --limit "$limit" "$out.stdout" "$out.stderr" -- \
        "$LOADGATE" run -q --no-color "$work/${tool#lg-}-$DURATION.yaml" --out "$out.result.json" \
        > "$out.json" ;;
    oha-h2|oha-h3)
      taskset -c 1 python3 "$measure" --limit "$limit" "$out.result.json" "$out.stderr" -- \
        "$OHA" --no-tui --output-format json --insecure --http-version "${tool#oha-h}" \
        -c "$CONNECTIONS" -p "$STREAMS" -z "${DURATION}s" "$base$PATH_QUERY" > "$out.json" ;;
  esac
  if [ ! -s "$out.result.json" ]; then
    echo "$tool failed (round $round): $(tail -5 "$out.stderr")" >&2
    exit 1
  fi
}
for round in $(seq "$ROUNDS"); do
  for tool in $tools; do
    echo "round $round/$ROUNDS: $tool, $CONNECTIONS connections x $STREAMS streams, ${DURATION}s" >&2
    run "$tool" "$round"
  done
done
echo "memory: loadgate h3, ${LONG}s, RSS every second" >&2
taskset -c 1 python3 "$measure" --limit $((LONG + 60)) --rss-every 1 "$work/long.stdout" "$work/long.stderr" -- \
  "$LOADGATE" run -q --no-color "$work/h3-$LONG.yaml" --out "$work/long.result.json" \
  > "$work/long.json"

mkdir -p "$(dirname "$OUT")"
python3 bench/h3/summary.py "$work" "$ROUNDS" "$DURATION" "$OUT" $tools
