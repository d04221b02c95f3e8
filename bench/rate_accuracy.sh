#!/usr/bin/env bash
# Open-model rate accuracy and schedule lateness of loadgate at several arrival rates.
#
# Starts nginx (Debian's, /usr/sbin/nginx) on 127.0.0.1 pinned to core 0, runs loadgate pinned
# to core 1 in the open model at each rate for DURATION, and prints per rate: the achieved rate
# (requests started per second), its error against the target, dropped arrivals, how late
# requests started (p50/p99/max), latency p99, and loadgate's CPU time per request.
#
#   bench/rate_accuracy.sh                       # rates 1000 5000 10000 20000, 10 s each
#   RATES="500 2000" DURATION=5s bench/rate_accuracy.sh
#   LOADGATE=/path/to/loadgate RATES="5000 20000" bench/rate_accuracy.sh   # no build
set -euo pipefail
cd "$(dirname "$0")/.."
RATES=${RATES:-"1000 5000 10000 20000"}
DURATION=${DURATION:-10s}
PORT=${PORT:-18181}
if [ -z "${LOADGATE:-}" ]; then
  cargo build --release -q -p loadgate
  LOADGATE=target/release/loadgate
fi
BIN=$LOADGATE
work=$(mktemp -d)
trap 'kill $(cat "$work/nginx.pid" 2>/dev/null) 2>/dev/null || true; rm -rf "$work"' EXIT
cat > "$work/nginx.conf" <<CONF
worker_processes 1;
daemon on;
pid $work/nginx.pid;
error_log $work/error.log;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $work; proxy_temp_path $work; fastcgi_temp_path $work;
  uwsgi_temp_path $work; scgi_temp_path $work;
  keepalive_requests 1000000;
  server { listen 127.0.0.1:$PORT; location / { return 200 "hello\n"; } }
}
CONF
taskset -c 0 /usr/sbin/nginx -c "$work/nginx.conf"
sleep 0.3
printf '%8s %10s %8s %8s %9s %9s %9s %10s %12s\n' target/s achieved/s error dropped late_p50 late_p99 late_max p99 cpu/request
for rate in $RATES; do
  cat > "$work/spec.yaml" <<SPEC
version: 1
name: rate accuracy
targets:
  - name: hello
    url: http://127.0.0.1:$PORT/
load:
  model: open
  rate: $rate/s
  max_in_flight: 1000
  duration: $DURATION
  warmup: 1s
SPEC
  taskset -c 1 "$BIN" run -q "$work/spec.yaml" --out "$work/result.json" >/dev/null || true
  python3 - "$work/result.json" "$rate" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); target = float(sys.argv[2])
stage = [s for s in r["health"]["stages"] if not s["warmup"]][0]
late = stage["lateness_us"] or {}
cpu = r["environment"]["client_cpu_user_s"] + r["environment"]["client_cpu_system_s"]
sent = sum(s["sent"] for s in r["health"]["stages"])
print("%8d %10.1f %7.2f%% %8d %7dus %7dus %7dus %8dus %10.2fus" % (
    target, stage["achieved_rate"], 100 * (stage["achieved_rate"] - target) / target,
    stage["dropped"], late.get("p50_us", 0), late.get("p99_us", 0), late.get("max_us", 0),
    r["total"]["latency_us"]["p99_us"], 1e6 * cpu / max(sent, 1)))
PY
done
