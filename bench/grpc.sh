#!/usr/bin/env bash
# Issue 35's gRPC benchmark: loadgate's CPU per unary call against ghz's, on the same server
# (docs: bench/README.md, "Issue 35").
#
# The call: examples/echo.proto's `loadgate.echo.v1.Echo/Say` with `{"text": "hello"}`, over h2c
# (cleartext HTTP/2, prior knowledge). Both clients run the closed model for DURATION seconds
# with CONNECTIONS connections, each carrying STREAMS calls at once (loadgate `connections` and
# `load.streams`; ghz `--connections` and `-c` CONNECTIONS x STREAMS, its workers spread over the
# connections), in ROUNDS interleaved rounds (loadgate, ghz; again...), each pinned to core 1
# while the server is pinned to core 0. Servers (SERVERS), one after the other:
#   loadgate  `loadgate serve --grpc --threads 1` (the Echo service of examples/echo.proto);
#   grpcio    the same service on grpcio's asyncio server (bench/grpc/echo_server.py, stubs
#             generated with grpcio-tools at start), a server nobody here wrote.
# Before the rounds, each client makes one call on one connection (`start`): its start-up cost
# (process, runtime, .proto compiled), shown beside the runs.
#
# Measured per run: the calls that ended with status OK, by the client's own count (loadgate's
# result file; ghz's JSON report), the other calls (errors), the client's CPU time (user+sys of
# the whole process, start-up included, from wait4's rusage: bench/flow/measure.py; never the
# server's), CPU µs per OK call, peak RSS. Prints a table of the medians per server and the
# median over rounds of loadgate's CPU per call ÷ ghz's (the issue: at most 0.5); writes every
# run, the medians and the ratios to OUT (JSON).
#
#   bench/grpc.sh                                       # 3 rounds of 10 s on both servers (about 3 min)
#   ROUNDS=1 DURATION=5 SERVERS=loadgate bench/grpc.sh  # a quick look
#
# Environment: ROUNDS (3), DURATION (10, seconds), CONNECTIONS (50), STREAMS (1), SERVERS
# ("loadgate grpcio"), OUT (target/bench-grpc.json), LOADGATE (a loadgate binary; default:
# target/release/loadgate, built with `cargo build --release --locked -p loadgate`), GHZ (a ghz
# binary; default: target/ci-tools/go-bin/ghz, installed with `go install
# github.com/bojand/ghz/cmd/ghz@v0.121.0` when missing), PYTHON (a Python with grpcio and
# grpcio-tools; default: the tests' venv target/ci-tools/aioquic when it has them, else
# target/ci-tools/bench-py, made with pip: grpcio and grpcio-tools 1.85.1, websockets 17.4).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10}
CONNECTIONS=${CONNECTIONS:-50}
STREAMS=${STREAMS:-1}
SERVERS=${SERVERS:-loadgate grpcio}
OUT=${OUT:-target/bench-grpc.json}
GHZ_VERSION=v0.121.0
calls=$((CONNECTIONS * STREAMS))

if [ -z "${LOADGATE:-}" ]; then
  cargo build --release --locked -q -p loadgate
  LOADGATE=$root/target/release/loadgate
fi
if [ -z "${GHZ:-}" ]; then
  GHZ=$root/target/ci-tools/go-bin/ghz
  if [ ! -x "$GHZ" ]; then
    echo "installing ghz $GHZ_VERSION with go install" >&2
    GOBIN=$root/target/ci-tools/go-bin go install "github.com/bojand/ghz/cmd/ghz@$GHZ_VERSION"
  fi
fi
case " $SERVERS " in *" grpcio "*) PYTHON=$(bench/grpc/python.sh) ;; esac
# `go install` leaves ghz's --version at "dev": its module version is in the binary's build info.
ghz_version=$(go version -m "$GHZ" 2>/dev/null | awk '$1 == "mod" { print $3 }')
echo "loadgate: $("$LOADGATE" --version)  ghz: ${ghz_version:-unknown}  load: $CONNECTIONS connections x $STREAMS streams, ${DURATION}s" >&2

work=$(mktemp -d)
server=
limit=$((DURATION + 60))  # seconds: a run still going by then is killed
# shellcheck source=bench/grpc/common.sh
. bench/grpc/common.sh
trap 'stop_server; rm -rf "$work"' EXIT

# start_server NAME: the server on core 0, on a free port; sets ADDR (127.0.0.1:PORT).
start_server() {
  local out="$work/$1.serve.out"
  case $1 in
    loadgate)
      taskset -c 0 "$LOADGATE" serve --listen 127.0.0.1:0 --threads 1 --grpc > "$out" 2>&1 & ;;
    grpcio)
      mkdir -p "$work/stubs"
      taskset -c 0 "$PYTHON" bench/grpc/echo_server.py examples "$work/stubs" > "$out" 2>&1 & ;;
    *) echo "unknown server $1 (loadgate, grpcio)" >&2; exit 2 ;;
  esac
  server=$!
  ADDR=$(wait_listening "$out" "$1")
}

spec() { # spec FILE CONNECTIONS STREAMS LOAD: loadgate's spec, LOAD its last line
  cat > "$1" <<YAML
version: 1
name: bench-grpc
defaults:
  timeout: 5s
targets:
  - name: say
    url: http://$ADDR
    grpc:
      proto: [$root/examples/echo.proto]
      method: loadgate.echo.v1.Echo/Say
      message: { text: hello }
load:
  connections: $2
  $4
YAML
  if [ "$3" != 1 ]; then echo "  streams: $3" >> "$1"; fi
}

# run SERVER TOOL ROUND: one measured run, to $work/SERVER-TOOL-ROUND.*; ROUND `start` is one
# call on one connection.
run() {
  local out="$work/$1-$2-$3" conns=$CONNECTIONS streams=$STREAMS load="duration: ${DURATION}s"
  local ghz_load=(-z "${DURATION}s")
  if [ "$3" = start ]; then conns=1 streams=1 load="requests: 1" ghz_load=(-n 1); fi
  case $2 in
    loadgate)
      spec "$out.yaml" "$conns" "$streams" "$load"
      measured "$out" -- "$LOADGATE" run -q --no-color "$out.yaml" --out "$out.result.json" ;;
    ghz)
      measured "$out" -- "$GHZ" --insecure --proto examples/echo.proto --call loadgate.echo.v1.Echo/Say \
        -d '{"text": "hello"}' --connections "$conns" -c $((conns * streams)) "${ghz_load[@]}" \
        -O json -o "$out.result.json" "$ADDR" ;;
  esac
  if [ ! -s "$out.result.json" ]; then
    echo "$2 failed on $1 (round $3): $(tail -n 5 "$out.stderr")" >&2
  fi
}

for srv in $SERVERS; do
  start_server "$srv"
  echo "server $srv on $ADDR (core 0)" >&2
  for tool in loadgate ghz; do run "$srv" "$tool" start; done
  for round in $(seq "$ROUNDS"); do
    for tool in loadgate ghz; do
      echo "$srv, round $round/$ROUNDS: $tool, $CONNECTIONS x $STREAMS calls at once, ${DURATION}s" >&2
      run "$srv" "$tool" "$round"
    done
  done
  stop_server
done

mkdir -p "$(dirname "$OUT")"
python3 bench/grpc/summary.py --work "$work" --rounds "$ROUNDS" --duration "$DURATION" \
  --servers "$SERVERS" --tools "loadgate ghz" --unit call --out "$OUT" \
  --load "gRPC unary Echo/Say, $CONNECTIONS connections x $STREAMS streams ($calls calls at once), ${DURATION}s"
