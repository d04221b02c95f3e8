#!/usr/bin/env bash
# Open model: how evenly each tool spaces its requests, as the server sees them.
#
# Starts nginx (Debian's) on 127.0.0.1 pinned to core 0, logging each request's arrival time
# ($msec, 1 ms resolution); runs loadgate, h2load (--rps per connection), oha (-q, wrk2-style
# latency correction) and hey (-q per connection) pinned to core 1, each for DURATION at RATE
# requests/s on 50 connections; prints per tool, over the steady middle of the run (the first
# and last 500 ms left out): the requests per millisecond (mean, standard deviation, max), the
# share of milliseconds with no request, and the epoll waits per request of nginx and of the
# client (perf's syscalls:sys_enter_epoll_wait and _epoll_pwait tracepoints).
#
# Evenly spaced arrivals wake the server and the client about once per request; arrivals in
# bursts share the wake-ups, so they cost both sides less CPU per request, and measure a
# different load. nginx, perf (tracepoints: root, or a perf_event_paranoid that allows them),
# python3 and taskset are needed; h2load, oha and hey are skipped when missing.
#
#   bench/open_spacing.sh
#   RATE=2000 DURATION=6 LOADGATE=/path/to/loadgate bench/open_spacing.sh
set -euo pipefail
cd "$(dirname "$0")/.."
RATE=${RATE:-5000}
DURATION=${DURATION:-4}
C=50
if [ -z "${LOADGATE:-}" ]; then
  cargo build --release --locked -q -p loadgate
  LOADGATE=$PWD/target/release/loadgate
fi
for t in nginx perf python3 taskset; do
  command -v "$t" >/dev/null || { echo "missing $t" >&2; exit 2; }
done
work=$(mktemp -d /tmp/loadgate-spacing.XXXXXX)
nginx_pid=
trap 'if [ -n "$nginx_pid" ]; then kill "$nginx_pid" 2>/dev/null || true; fi; rm -rf "$work"' EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat >"$work/nginx.conf" <<CONF
worker_processes 1;
daemon off;
master_process off;
pid $work/nginx.pid;
error_log $work/error.log warn;
events { worker_connections 1024; }
http {
  log_format arrival '\$msec';
  access_log $work/access.log arrival buffer=256k flush=1s;
  client_body_temp_path $work; proxy_temp_path $work; fastcgi_temp_path $work;
  uwsgi_temp_path $work; scgi_temp_path $work;
  keepalive_requests 1000000;
  server { listen 127.0.0.1:$port; location / { return 200 "hello\n"; } }
}
CONF
taskset -c 0 nginx -c "$work/nginx.conf" &
nginx_pid=$!
sleep 0.5
url=http://127.0.0.1:$port/
printf 'version: 1\nname: spacing\ntargets:\n  - name: t\n    url: %s\nload:\n  model: open\n  rate: %s/s\n  max_in_flight: %s\n  duration: %ss\n' \
  "$url" "$RATE" "$C" "$DURATION" >"$work/spec.yaml"
per_conn=$((RATE / C))
echo "open model, $RATE requests/s on $C connections, ${DURATION} s per tool"
for tool in loadgate h2load oha hey; do
  case $tool in
    loadgate) cmd=("$LOADGATE" run -q "$work/spec.yaml" --out "$work/result.json") ;;
    h2load) cmd=(h2load -t1 -c "$C" --h1 --rps "$per_conn" -D "$DURATION" "$url") ;;
    oha) cmd=(oha --no-tui -z "${DURATION}s" -c "$C" -q "$RATE" --latency-correction "$url") ;;
    hey) cmd=(hey -z "${DURATION}s" -c "$C" -q "$per_conn" "$url") ;;
  esac
  [ "$tool" = loadgate ] || command -v "$tool" >/dev/null || { echo "$tool: not installed, skipped"; continue; }
  : >"$work/access.log"
  events='syscalls:sys_enter_epoll_wait,syscalls:sys_enter_epoll_pwait'
  perf stat -x, -e "$events" -p "$nginx_pid" -o "$work/nginx.stat" &
  perf_pid=$!
  # loadgate's exit status may say its measurement is invalid; the spacing is measured anyway.
  perf stat -x, -e "$events" -o "$work/client.stat" -- taskset -c 1 "${cmd[@]}" >/dev/null 2>&1 || true
  kill -INT "$perf_pid"
  wait "$perf_pid" || true
  sleep 1.5 # nginx flushes its log buffer every second
  python3 - "$tool" "$work" <<'PY'
import collections, sys
tool, work = sys.argv[1], sys.argv[2]
arrivals = [float(line) for line in open(f"{work}/access.log") if line.strip()]
if not arrivals:
    sys.exit(f"{tool}: no request reached nginx")
per_ms = collections.Counter(int(t * 1000) for t in arrivals)
counts = [per_ms.get(ms, 0) for ms in range(min(per_ms) + 500, max(per_ms) - 500)]
mean = sum(counts) / len(counts)
sd = (sum((c - mean) ** 2 for c in counts) / len(counts)) ** 0.5
empty = sum(c == 0 for c in counts) / len(counts)
def waits(name):
    return sum(int(l.split(",")[0]) for l in open(f"{work}/{name}.stat") if l[:1].isdigit())
n = len(arrivals)
print(f"{tool:9s} requests={n} per-ms mean={mean:.2f} sd={sd:.2f} max={max(counts)} "
      f"empty-ms={100 * empty:.0f}% nginx-epoll/req={waits('nginx') / n:.2f} "
      f"client-epoll/req={waits('client') / n:.2f}")
PY
done
