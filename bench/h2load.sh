#!/usr/bin/env bash
# loadgate against h2load (nghttp2-client) on the same nginx, at equal connections and streams:
# requests/s (each tool's own figure) and client CPU time per request (user + sys from
# /usr/bin/time, divided by the requests sent). nginx is pinned to core 0 and the client to
# core 1 (taskset); rounds are interleaved A B A B so that drift hits both tools alike.
#
#   apt-get install -y nginx-light nghttp2-client openssl   # once
#   bench/h2load.sh                      # every scenario, 3 rounds of 200000 requests
#   ROUNDS=5 REQUESTS=500000 SCENARIOS="h2c tls-h2-c50" bench/h2load.sh
#   LOADGATE_BASE=/path/to/older/loadgate SCENARIOS=h1 bench/h2load.sh   # H1 before/after
#
# Scenarios: h1 (cleartext HTTP/1.1, c=50), h2c (c=8 m=16), tls-h2 (c=8 m=16),
# tls-h2-c50 (c=50 m=1), tls-h1-c50 (HTTP/1.1 over TLS, c=50). The response is nginx's
# `return 200 "hello\n"`; TLS is ECDSA P-256, TLS 1.3 (both clients skip certificate checks:
# h2load never verifies, loadgate is told `insecure_skip_verify`). Needs 2 cores; loopback only;
# every run is bounded by REQUESTS and stops by itself.
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-3}
REQUESTS=${REQUESTS:-200000}
SCENARIOS=${SCENARIOS:-"h1 h2c tls-h2 tls-h2-c50 tls-h1-c50"}
LOADGATE=${LOADGATE:-target/release/loadgate}
LOADGATE_BASE=${LOADGATE_BASE:-}
NGINX=${NGINX:-/usr/sbin/nginx}

for tool in "$NGINX" h2load openssl taskset /usr/bin/time python3; do
  command -v "$tool" >/dev/null || { echo "missing: $tool (see the header of $0)" >&2; exit 2; }
done
if [ "$LOADGATE" = target/release/loadgate ]; then
  cargo build --release --locked -p loadgate >&2
fi

work=$(mktemp -d /tmp/loadgate-bench.XXXXXX)
nginx_pid=
cleanup() {
  if [ -n "$nginx_pid" ]; then kill "$nginx_pid" 2>/dev/null || true; wait "$nginx_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
  -keyout "$work/key.pem" -out "$work/cert.pem" -subj /CN=localhost \
  -addext subjectAltName=DNS:localhost,IP:127.0.0.1 2>/dev/null

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
P_H1=$(free_port); P_H2C=$(free_port); P_TLS=$(free_port); P_TLS_H1=$(free_port)
cat > "$work/nginx.conf" <<EOF
worker_processes 1;
daemon off;
master_process off;
pid $work/nginx.pid;
error_log $work/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path $work/tmp;
    keepalive_requests 100000000;
    keepalive_timeout 60s;
    ssl_certificate $work/cert.pem;
    ssl_certificate_key $work/key.pem;
    ssl_protocols TLSv1.3;
    server { listen 127.0.0.1:$P_H1 backlog=1024; location / { return 200 "hello\n"; } }
    server { listen 127.0.0.1:$P_H2C backlog=1024 http2; location / { return 200 "hello\n"; } }
    server { listen 127.0.0.1:$P_TLS backlog=1024 ssl http2; location / { return 200 "hello\n"; } }
    server { listen 127.0.0.1:$P_TLS_H1 backlog=1024 ssl; location / { return 200 "hello\n"; } }
}
EOF
taskset -c 0 "$NGINX" -p "$work" -c "$work/nginx.conf" -e "$work/error.log" &
nginx_pid=$!
for _ in $(seq 100); do
  (exec 3<>"/dev/tcp/127.0.0.1/$P_TLS") 2>/dev/null && break
  sleep 0.05
done

# scenario -> "connections streams url loadgate-protocol h2load-flags"
scenario() {
  case $1 in
    h1) echo "50 1 http://127.0.0.1:$P_H1/ h1 --h1" ;;
    h2c) echo "8 16 http://127.0.0.1:$P_H2C/ h2 -" ;;
    tls-h2) echo "8 16 https://127.0.0.1:$P_TLS/ h2 -" ;;
    tls-h2-c50) echo "50 1 https://127.0.0.1:$P_TLS/ h2 -" ;;
    tls-h1-c50) echo "50 1 https://127.0.0.1:$P_TLS_H1/ h1 --h1" ;;
    *) echo "unknown scenario $1" >&2; exit 2 ;;
  esac
}

# Runs one tool on core 1; prints "req_per_s cpu_us_per_request".
run_one() {
  local tool=$1 c=$2 m=$3 url=$4 protocol=$5 h2flags=$6 out rps
  local timefile="$work/time" log="$work/log"
  case $tool in
    h2load)
      local flags=(-n "$REQUESTS" -c "$c" -m "$m" -t 1)
      [ "$h2flags" != - ] && flags+=("$h2flags")
      /usr/bin/time -f "%U %S" -o "$timefile" taskset -c 1 h2load "${flags[@]}" "$url" >"$log" 2>&1
      grep -q " 0 failed, 0 errored" "$log" || { echo "h2load did not succeed:" >&2; cat "$log" >&2; exit 1; }
      rps=$(sed -n 's/^finished in .*, \([0-9.]*\) req\/s.*/\1/p' "$log")
      ;;
    loadgate|base)
      local binary=$LOADGATE tls="" streams=""
      [ "$tool" = base ] && binary=$LOADGATE_BASE
      [[ $url == https* ]] && tls=$'    tls:\n      insecure_skip_verify: true\n'
      [ "$m" != 1 ] && streams="  streams: $m"$'\n'
      local proto_line="    protocol: $protocol"$'\n'
      [ "$tool" = base ] && proto_line=""   # the base binary knows no protocol field
      printf 'version: 1\nname: bench\ntargets:\n  - name: t\n    url: %s\n%s%sload:\n  connections: %s\n%s  requests: %s\n' \
        "$url" "$proto_line" "$tls" "$c" "$streams" "$REQUESTS" >"$work/spec.yaml"
      /usr/bin/time -f "%U %S" -o "$timefile" taskset -c 1 "$binary" run -q "$work/spec.yaml" \
        --out "$work/result.json" >"$log" 2>&1 || { echo "loadgate failed:" >&2; cat "$log" >&2; exit 1; }
      rps=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); t=r["total"]; assert t["errors"]==0, t["errors_by_kind"]; print(round(t["rps"]))' "$work/result.json")
      ;;
  esac
  out=$(awk -v n="$REQUESTS" '{ printf "%.2f", ($1 + $2) * 1e6 / n }' "$timefile")
  echo "$rps $out"
}

tools="h2load loadgate"
[ -n "$LOADGATE_BASE" ] && tools="$tools base"
results="$work/results"
: >"$results"
echo "requests per run: $REQUESTS, rounds: $ROUNDS, nginx on core 0, client on core 1" >&2
for name in $SCENARIOS; do
  read -r c m url protocol h2flags <<<"$(scenario "$name")"
  for round in $(seq "$ROUNDS"); do
    for tool in $tools; do
      # The base binary predates TLS and HTTP/2: cleartext HTTP/1.1 only.
      [ "$tool" = base ] && [ "$name" != h1 ] && continue
      line=$(run_one "$tool" "$c" "$m" "$url" "$protocol" "$h2flags")
      read -r rps cpu <<<"$line"
      echo "$name round $round $tool: $rps req/s, $cpu us CPU/request" >&2
      echo "$name $tool $rps $cpu" >>"$results"
    done
  done
done

# Median of each (scenario, tool).
python3 - "$results" <<'EOF'
import statistics, sys
rows = {}
order = []
for line in open(sys.argv[1]):
    name, tool, rps, cpu = line.split()
    if (name, tool) not in rows:
        order.append((name, tool))
    rows.setdefault((name, tool), []).append((float(rps), float(cpu)))
print("| scenario | tool | req/s (median) | client CPU us/request (median) | runs |")
print("|---|---|---:|---:|---:|")
for key in order:
    runs = rows[key]
    print(f"| {key[0]} | {key[1]} | {statistics.median(r for r, _ in runs):,.0f} | "
          f"{statistics.median(c for _, c in runs):.2f} | {len(runs)} |")
EOF
