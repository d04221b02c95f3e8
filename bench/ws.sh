#!/usr/bin/env bash
# Issue 35's WebSocket benchmark: loadgate's CPU per echoed message against Artillery's, on the
# same server (docs: bench/README.md, "Issue 35").
#
# The exchange: send the text message `hello`, wait for the reply that contains `hello`; again,
# on the same connection. Both clients run the closed model for DURATION seconds on CONNECTIONS
# connections (loadgate `connections`, a `ws:` target with `send` and `reply`; Artillery's `ws`
# engine: CONNECTIONS virtual users arriving within the first second, each looping `send` with
# a `match` until DURATION seconds after the first one started: bench/ws/until.js), in ROUNDS
# interleaved rounds (loadgate, artillery; again...), each pinned to core 1 while the server is
# pinned to core 0. Servers (SERVERS), one after the other:
#   loadgate    `loadgate serve --threads 1`, its echo at /ws/echo;
#   websockets  an echo server on Python's `websockets` (bench/ws/echo_server.py), a server
#               nobody here wrote.
# Before the rounds, each client sends one message on one connection (`start`): its start-up
# cost, shown beside the runs (Artillery, a Node.js program, pays about 2.5 s of CPU there).
#
# The reference is Artillery (MPL-2.0, npm `artillery`, its built-in `ws` engine), installed
# with npm into target/ci-tools/artillery when missing, without its install scripts (they
# fetch a browser for its Playwright engine, not used here). The issue named k6; k6 is
# AGPL-3.0, which this project may not take in, even for a benchmark.
#
# Measured per run: echoed messages (a message sent and its reply received: loadgate's result,
# requests without an error; Artillery's websocket.messages_received, less its errors), the
# client's CPU time (user+sys of the whole process, start-up included, from wait4's rusage:
# bench/flow/measure.py; never the server's), CPU µs per message, peak RSS. Prints a table of
# the medians per server and the median over rounds of loadgate's CPU per message ÷
# Artillery's (the issue: at most 0.25 of k6's); writes every run, the medians and the ratios
# to OUT (JSON).
#
#   bench/ws.sh                                           # 3 rounds of 10 s on both servers (about 3 min)
#   ROUNDS=1 DURATION=5 SERVERS=loadgate bench/ws.sh      # a quick look
#
# Environment: ROUNDS (3), DURATION (10, seconds), CONNECTIONS (50), SERVERS ("loadgate
# websockets"), OUT (target/bench-ws.json), LOADGATE (a loadgate binary; default:
# target/release/loadgate, built with `cargo build --release --locked -p loadgate`), ARTILLERY
# (an artillery command; default: target/ci-tools/artillery/node_modules/.bin/artillery,
# artillery@2.0.34 installed with npm when missing; needs node and npm), PYTHON (a Python with
# websockets: see bench/grpc/python.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10}
CONNECTIONS=${CONNECTIONS:-50}
SERVERS=${SERVERS:-loadgate websockets}
OUT=${OUT:-target/bench-ws.json}
ARTILLERY_VERSION=2.0.34

if [ -z "${LOADGATE:-}" ]; then
  cargo build --release --locked -q -p loadgate
  LOADGATE=$root/target/release/loadgate
fi
if [ -z "${ARTILLERY:-}" ]; then
  ARTILLERY=$root/target/ci-tools/artillery/node_modules/.bin/artillery
  if [ ! -x "$ARTILLERY" ]; then
    echo "installing artillery $ARTILLERY_VERSION with npm into target/ci-tools/artillery (about 2 min)" >&2
    mkdir -p target/ci-tools/artillery
    (cd target/ci-tools/artillery && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 PUPPETEER_SKIP_DOWNLOAD=1 \
      npm install --no-audit --no-fund --ignore-scripts --loglevel error "artillery@$ARTILLERY_VERSION" >&2)
  fi
fi
export ARTILLERY_DISABLE_TELEMETRY=true
export DURATION  # read by bench/ws/until.js
case " $SERVERS " in *" websockets "*) PYTHON=$(bench/grpc/python.sh) ;; esac
artillery_version=$("$ARTILLERY" version 2>/dev/null | sed -n 's/^Artillery: *//p')
echo "loadgate: $("$LOADGATE" --version)  artillery: ${artillery_version:-unknown} (node $(node --version))  load: $CONNECTIONS connections, ${DURATION}s" >&2

work=$(mktemp -d)
server=
limit=$((DURATION + 90))  # seconds: a run still going by then is killed
# shellcheck source=bench/grpc/common.sh
. bench/grpc/common.sh
trap 'stop_server; rm -rf "$work"' EXIT

# start_server NAME: the server on core 0, on a free port; sets URL (its echo's ws:// URL).
start_server() {
  local out="$work/$1.serve.out"
  case $1 in
    loadgate)
      taskset -c 0 "$LOADGATE" serve --listen 127.0.0.1:0 --threads 1 > "$out" 2>&1 & ;;
    websockets)
      taskset -c 0 "$PYTHON" bench/ws/echo_server.py > "$out" 2>&1 & ;;
    *) echo "unknown server $1 (loadgate, websockets)" >&2; exit 2 ;;
  esac
  server=$!
  URL=ws://$(wait_listening "$out" "$1")/ws/echo
}

loadgate_spec() { # loadgate_spec FILE CONNECTIONS LOAD: LOAD is its last line
  cat > "$1" <<YAML
version: 1
name: bench-ws
defaults:
  timeout: 5s
targets:
  - name: echo
    url: $URL
    ws:
      send: hello
      reply: hello
load:
  connections: $2
  $3
YAML
}
artillery_script() { # artillery_script FILE USERS LOOP: LOOP ends the loop (count or whileTrue)
  cat > "$1" <<YAML
config:
  target: $URL
  processor: $root/bench/ws/until.js
  ws:
    perMessageDeflate: false
  phases:
    - duration: 1
      arrivalCount: $2
scenarios:
  - engine: ws
    flow:
      - loop:
          - send:
              payload: hello
              match:
                regexp: hello
                value: hello
        $3
YAML
}

# run SERVER TOOL ROUND: one measured run, to $work/SERVER-TOOL-ROUND.*; ROUND `start` is one
# message on one connection.
run() {
  local out="$work/$1-$2-$3" conns=$CONNECTIONS load="duration: ${DURATION}s" loop="whileTrue: running"
  if [ "$3" = start ]; then conns=1 load="requests: 1" loop="count: 1"; fi
  case $2 in
    loadgate)
      loadgate_spec "$out.yaml" "$conns" "$load"
      measured "$out" -- "$LOADGATE" run -q --no-color "$out.yaml" --out "$out.result.json" ;;
    artillery)
      artillery_script "$out.yaml" "$conns" "$loop"
      measured "$out" -- "$ARTILLERY" run --output "$out.result.json" "$out.yaml" ;;
  esac
  if [ ! -s "$out.result.json" ]; then
    echo "$2 failed on $1 (round $3): $(tail -n 5 "$out.stderr")" >&2
  fi
}

for srv in $SERVERS; do
  start_server "$srv"
  echo "server $srv at $URL (core 0)" >&2
  for tool in loadgate artillery; do run "$srv" "$tool" start; done
  for round in $(seq "$ROUNDS"); do
    for tool in loadgate artillery; do
      echo "$srv, round $round/$ROUNDS: $tool, $CONNECTIONS connections, ${DURATION}s" >&2
      run "$srv" "$tool" "$round"
    done
  done
  stop_server
done

mkdir -p "$(dirname "$OUT")"
python3 bench/grpc/summary.py --work "$work" --rounds "$ROUNDS" --duration "$DURATION" \
  --servers "$SERVERS" --tools "loadgate artillery" --unit message --out "$OUT" \
  --load "WebSocket echo of \`hello\`, $CONNECTIONS connections, ${DURATION}s"
