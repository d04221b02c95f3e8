#!/usr/bin/env bash
# Issue 29: what a target costs in memory. Runs specs of 1, 100 and 1,000 targets at 1 and 2
# worker threads (`load.threads`) against `loadgate serve` on 127.0.0.1 and prints loadgate's
# peak memory (maximum resident set size, GNU time's `%M`) for each, one binary after another
# in the same round (BINARIES: `name=path` pairs; default: this checkout's fallback build).
#
# The targets answer after 0, 1, ..., 9 ms (`?delay=`), so that their latencies spread over
# several histogram buckets as a real service's do, under an open model of RATE arrivals/s
# (default 2,000, spread over the targets by weight: every target gets requests on every
# thread) for DURATION seconds (default 5). Each run is bounded: `timeout 120`, and an
# address-space cap (LIMIT_KB, default 16 GiB) so that a binary that grows without bound is
# stopped, not the machine.
#
#   bench/targets_memory.sh
#   BINARIES="before=/tmp/lg-base after=target/fallback/loadgate" bench/targets_memory.sh
#   TARGETS="1000" THREADS="2" DURATION=2 bench/targets_memory.sh
#
# Prints a Markdown table: binary, targets, threads, exit status, responses, peak RSS (MB),
# the peak RSS per target beyond the one-target run of the same binary and threads (KB), and
# the result file's size (KB).
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${DURATION:-5}
RATE=${RATE:-2000}
TARGETS=${TARGETS:-1 100 1000}
THREADS=${THREADS:-1 2}
LIMIT_KB=${LIMIT_KB:-16777216}
if [ -z "${BINARIES:-}" ]; then
  cargo build --profile fallback --locked -q -p loadgate
  BINARIES="loadgate=$PWD/target/fallback/loadgate"
fi
for t in python3 /usr/bin/time timeout; do
  command -v "$t" >/dev/null || { echo "missing $t" >&2; exit 2; }
done
work=$(mktemp -d /tmp/loadgate-targets.XXXXXX)
server_pid=
trap 'if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; fi; rm -rf "$work"' EXIT
server=${BINARIES%% *}
server=${server#*=}
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$server" serve --listen "127.0.0.1:$port" --threads 1 >"$work/serve.log" 2>&1 &
server_pid=$!
for _ in $(seq 50); do
  python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 1)" 2>/dev/null && break
  sleep 0.1
done

spec() { # targets threads -> spec path
  local f="$work/spec-$1-$2.yaml"
  {
    printf 'version: 1\nname: targets-%s\ndefaults:\n  base_url: http://127.0.0.1:%s\ntargets:\n' "$1" "$port"
    for i in $(seq 0 $(($1 - 1))); do
      printf '  - name: t%s\n    path: /?delay=%sms\n' "$i" "$((i % 10))"
    done
    printf 'load:\n  model: open\n  rate: %s/s\n  max_in_flight: 200\n  threads: %s\n  duration: %ss\n' \
      "$RATE" "$2" "$DURATION"
  } >"$f"
  echo "$f"
}

echo "| binary | targets | threads | exit | responses | peak RSS (MB) | per target (KB) | result (KB) |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
for threads in $THREADS; do
  declare -A one=()
  for n in $TARGETS; do
    f=$(spec "$n" "$threads")
    for pair in $BINARIES; do
      name=${pair%%=*}
      bin=${pair#*=}
      out="$work/result-$name-$n-$threads.json"
      status=0
      (ulimit -v "$LIMIT_KB"; /usr/bin/time -f '%M' -o "$work/rss" timeout 120 "$bin" run -q "$f" --out "$out") \
        >"$work/run.log" 2>&1 || status=$?
      rss_kb=$(tail -1 "$work/rss" | grep -Eo '^[0-9]+$' || echo 0)
      responses=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['total']['responses'])" "$out" 2>/dev/null || echo -)
      [ "$n" = 1 ] && one[$name]=$rss_kb
      per=-
      if [ "$n" != 1 ] && [ -n "${one[$name]:-}" ]; then
        per=$(( (rss_kb - one[$name]) / (n - 1) ))
      fi
      size_kb=$(( $(stat -c %s "$out" 2>/dev/null || echo 0) / 1024 ))
      printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "$name" "$n" "$threads" "$status" "$responses" \
        "$(python3 -c "print(f'{$rss_kb/1024:.1f}')")" "$per" "$size_kb"
      if [ "$status" != 0 ] && [ "$status" != 5 ]; then
        sed -n '1,5p' "$work/run.log" | sed 's/^/    /' >&2
      fi
    done
  done
  unset one
done
