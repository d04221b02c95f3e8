#!/usr/bin/env bash
# loadgate side by side with the reference load generators (wrk, h2load, hey, oha, vastar,
# rewrk) against nginx on loopback: requests/s, client CPU time per request, peak memory, and
# loadgate's ratio to each tool, as the median over interleaved rounds (see bench/README.md).
#
#   bench/compare.sh                                      # everything, 3 rounds of 5 s
#   ROUNDS=1 DURATION=2s SCENARIOS="h1-c50 open" bench/compare.sh
#   LOADGATE_BASE=/path/to/older/loadgate TOOLS="loadgate wrk" bench/compare.sh   # before/after
#   TOOLS="loadgate loadgate-quick" SCENARIOS=h1-c50 bench/compare.sh   # the one-line command
#   FLAMES=bench/flames FLAME_TOOLS=h2load SCENARIOS=open bench/compare.sh   # flame graphs too
#
# The tool `loadgate-quick` is the same load as `loadgate` given as a one-line command
# (`loadgate quick -z 5s -c 50 URL`, compression and redirects off as in the spec), so the
# "loadgate÷tool CPU/req" column is the CPU per request of `run` over that of `quick`.
#
# nginx runs pinned to core 0 and every client to core 1 (taskset); with NGINX_WORKERS=W and
# THREADS=T, nginx's W workers run on cores 0..W-1 (one each) and the client's T threads on cores
# W..W+T-1 (THREADS=4 NGINX_WORKERS=8: the issue's 16-core rows). Missing reference tools are
# installed (Debian packages with apt-get, the others with `cargo install --locked`) unless
# INSTALL=0; a tool that is still missing, or fails in a scenario, is reported and skipped.
# Loopback only; every run is bounded (DURATION plus a timeout) and nginx is stopped on exit.
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-5s}
LONG=${LONG:-60s}
SCENARIOS=${SCENARIOS:-"h1-c1 h1-c50 h1-c500 h1-100k-c50 h1-c10k h1tls-c50 h2c-c8m16 h2tls-c8m16 h2tls-c50 open open-20k startup flat"}
TOOLS=${TOOLS:-"loadgate floor wrk h2load hey oha vastar rewrk"}
OPEN_RATE=${OPEN_RATE:-5000}
THREADS=${THREADS:-1}
NGINX_WORKERS=${NGINX_WORKERS:-1}
FLAMES=${FLAMES:-}
FLAME_TOOLS=${FLAME_TOOLS:-}
OTHER_MAX=${OTHER_MAX:-0.05}
IDLE_WAIT=${IDLE_WAIT:-10}
RETRIES=${RETRIES:-2}
INSTALL=${INSTALL:-1}
OUT=${OUT:-}
LOADGATE=${LOADGATE:-}
LOADGATE_BASE=${LOADGATE_BASE:-}
NGINX=${NGINX:-/usr/sbin/nginx}
GNU_TIME=${GNU_TIME:-/usr/bin/time} # GNU time (bench/device.sh: the packed one)
export PATH="$PATH:${CARGO_HOME:-$HOME/.cargo}/bin"

say() { echo "compare: $*" >&2; }
seconds() { # "5s" or "5" -> 5
  local v=${1%s}
  [[ $v =~ ^[0-9]+$ ]] || { say "durations are whole seconds (5s), not '$1'"; exit 2; }
  echo "$v"
}
D=$(seconds "$DURATION")
for v in THREADS NGINX_WORKERS; do
  [[ ${!v} =~ ^[1-9][0-9]*$ ]] || { say "$v is a whole number of at least 1, not '${!v}'"; exit 2; }
done
# nginx's cores, and the client's: taskset lists.
cores() { if [ "$1" = "$2" ]; then echo "$1"; else echo "$1-$2"; fi; } # a taskset list
NGINX_CORES=$(cores 0 $((NGINX_WORKERS - 1)))
CLIENT_CORES=$(cores "$NGINX_WORKERS" $((NGINX_WORKERS + THREADS - 1)))
if [ $((NGINX_WORKERS + THREADS)) -gt "$(nproc)" ]; then
  say "NGINX_WORKERS=$NGINX_WORKERS and THREADS=$THREADS need $((NGINX_WORKERS + THREADS)) cores; this machine has $(nproc)"
  exit 2
fi
LONG_S=$(seconds "$LONG")
HERE=bench

# --- tools ------------------------------------------------------------------------------------

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else return 1; fi; }

apt_install() {
  [ "$INSTALL" = 1 ] || return 0
  [ $# -gt 0 ] || return 0
  say "installing Debian packages: $*"
  { as_root apt-get install -y "$@" >/dev/null 2>&1 ||
    { as_root apt-get update >/dev/null 2>&1 && as_root apt-get install -y "$@" >/dev/null 2>&1; }; } ||
    say "apt-get install $* failed (no root or sudo, or no such package here)"
}

ensure_tools() {
  local need=() cargo_need=() t
  # What the suite itself needs.
  [ -x "$NGINX" ] || need+=(nginx)
  command -v openssl >/dev/null || need+=(openssl)
  command -v ss >/dev/null || need+=(iproute2)
  [ -x "$GNU_TIME" ] || need+=(time)
  command -v taskset >/dev/null || need+=(util-linux)
  for t in $TOOLS; do
    case $t in
      wrk) command -v wrk >/dev/null || need+=(wrk) ;;
      h2load) command -v h2load >/dev/null || need+=(nghttp2-client) ;;
      hey) command -v hey >/dev/null || need+=(hey) ;;
      oha|vastar|rewrk) command -v "$t" >/dev/null || cargo_need+=("$t") ;;
    esac
  done
  apt_install "${need[@]}"
  for t in "$NGINX" openssl ss "$GNU_TIME" taskset python3; do
    command -v "$t" >/dev/null || { say "missing $t, which the suite needs; install it and run again"; exit 2; }
  done
  if [ "${#cargo_need[@]}" -gt 0 ] && [ "$INSTALL" = 1 ]; then
    if command -v cargo >/dev/null; then
      say "building ${cargo_need[*]} with cargo install --locked (oha takes several minutes)"
      cargo install --locked "${cargo_need[@]}" >"$work/cargo-install.log" 2>&1 || {
        say "cargo install failed for some of ${cargo_need[*]}:"; tail -n 5 "$work/cargo-install.log" >&2; }
    else
      say "no cargo: cannot build ${cargo_need[*]}"
    fi
  fi
  [[ " $TOOLS " != *" floor "* ]] || build_floor
  AVAILABLE=()
  for t in $TOOLS; do
    if [ "$t" = loadgate ] || [ "$t" = loadgate-quick ] || { [ "$t" = floor ] && [ -x "$FLOOR" ]; } ||
      { [ "$t" != floor ] && command -v "$t" >/dev/null; }; then AVAILABLE+=("$t")
    else say "SKIPPED tool $t: not installed"; fi
  done
  if [ -n "$LOADGATE_BASE" ]; then
    [ -x "$LOADGATE_BASE" ] || { say "LOADGATE_BASE=$LOADGATE_BASE is not an executable"; exit 2; }
    AVAILABLE+=(base)
  fi
}

# The floor client (bench/floor/floor.c), built with cc into target/bench when missing or older
# than its source.
FLOOR=$PWD/target/bench/floor
build_floor() {
  [ -x "$FLOOR" ] && [ ! "$HERE/floor/floor.c" -nt "$FLOOR" ] && return 0
  command -v cc >/dev/null || { say "no cc: cannot build the floor client"; return 0; }
  mkdir -p "$(dirname "$FLOOR")"
  cc -O2 -o "$FLOOR" "$HERE/floor/floor.c" || say "building $FLOOR failed"
}

build_loadgate() {
  if [ -z "$LOADGATE" ]; then
    say "building target/release/loadgate"
    cargo build --release --locked -p loadgate >&2
    LOADGATE=$PWD/target/release/loadgate
  fi
  [ -x "$LOADGATE" ] || { say "LOADGATE=$LOADGATE is not an executable"; exit 2; }
}

# --- flame graphs (FLAMES=DIR) -------------------------------------------------------------

# Finds perf and inferno (PATH, then target/ci-tools/inferno, installed there when missing);
# without them FLAMES is dropped with a note.
ensure_flames() {
  [ -n "$FLAMES" ] || return 0
  if ! command -v perf >/dev/null; then
    say "no perf (Debian: linux-perf): no flame graphs"; FLAMES=; return 0
  fi
  local root=$PWD/target/ci-tools/inferno
  export PATH="$PATH:$root/bin"
  if ! command -v inferno-flamegraph >/dev/null && [ "$INSTALL" = 1 ] && command -v cargo >/dev/null; then
    say "installing inferno into $root (cargo install inferno --locked)"
    cargo install --locked --root "$root" inferno >"$work/inferno-install.log" 2>&1 ||
      tail -n 5 "$work/inferno-install.log" >&2
  fi
  if ! command -v inferno-collapse-perf >/dev/null || ! command -v inferno-flamegraph >/dev/null; then
    say "no inferno (cargo install inferno --locked --root target/ci-tools/inferno): no flame graphs"
    FLAMES=; return 0
  fi
  mkdir -p "$FLAMES"
}

# What a loadgate binary was built from, when it sits in a git work tree (its target folder):
# the tree's `git describe`, else nothing.
describe() { git -C "$(dirname "$1")" describe --always --dirty 2>/dev/null || true; }

# One more run of the current CMD, unmeasured, under perf (cpu-clock at 1999 Hz, DWARF call
# graphs): $FLAMES/SCENARIO-TOOL.svg (inferno; frames under 0.2% left out) and
# $FLAMES/SCENARIO-TOOL.txt (the top frames by self time, at least 1% each, at most 25).
flame() {
  local scen=$1 tool=$2 title="$1 · $2" desc='' out=$FLAMES/$1-$2 data=$work/perf.data
  case $tool in
    loadgate|loadgate-quick) desc=$(describe "$LOADGATE") ;;
    base) desc=$(describe "$LOADGATE_BASE") ;;
  esac
  [ -z "$desc" ] || title+=" · $desc"
  [ "$THREADS" = 1 ] || title+=" · $THREADS threads"
  say "$scen: $tool under perf for ${D}s (flame graph, not measured)"
  timeout -k 5 $((D + 60)) perf record -q -e cpu-clock -F 1999 --call-graph dwarf,16384 -o "$data" \
    -- taskset -c "$CLIENT_CORES" "${CMD[@]}" >"$work/log" 2>&1 || true
  [ -s "$data" ] || { say "FAILED flame graph of $tool in $scen: $(head -n 3 "$work/log" | tr '\n' ' ')"; return 0; }
  # perf script resolves inlined frames with addr2line: slow (about 20 s per second of load on
  # 2 cores) but Rust's async code is mostly inlined frames.
  if ! { perf script -i "$data" 2>/dev/null | inferno-collapse-perf >"$work/folded" &&
    inferno-flamegraph --minwidth 0.2 --title "$title" <"$work/folded" >"$out.svg"; }; then
    say "FAILED drawing the flame graph of $tool in $scen"
  fi
  {
    echo "# $title: top frames by self time (perf report --no-children, at least 1%, at most 25)"
    perf report -i "$data" --no-children --stdio --percent-limit 1 -g none 2>/dev/null |
      awk '/^# (Samples|Event count)/ { print; next } /^#/ || NF == 0 { next } n++ < 25'
  } >"$out.txt"
  rm -f "$data"
  say "$scen: $tool: $out.svg ($(du -k "$out.svg" | cut -f1) KB), $out.txt"
}

# --- nginx ------------------------------------------------------------------------------------

work=$(mktemp -d /tmp/loadgate-compare.XXXXXX)
nginx_pid=
cleanup() {
  if [ -n "$nginx_pid" ]; then kill "$nginx_pid" 2>/dev/null || true; wait "$nginx_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

start_nginx() {
  mkdir -p "$work/www" "$work/tmp"
  head -c 102400 /dev/zero | tr '\0' x >"$work/www/100k"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
    -keyout "$work/key.pem" -out "$work/cert.pem" -subj /CN=localhost \
    -addext subjectAltName=DNS:localhost,IP:127.0.0.1 2>/dev/null
  P_H1=$(free_port); P_H2C=$(free_port); P_TLS=$(free_port); P_STATUS=$(free_port); P_LOG=$(free_port)
  # The client and nginx each hold one descriptor per connection at c=10,000.
  ulimit -n "$(ulimit -Hn)"
  local fds; fds=$(ulimit -n)
  [ "$fds" -ge 10100 ] || say "open-file limit is $fds: the c=10,000 scenario will fail"
  # One worker: no master process (nginx's single-process mode). Several: a master, and every
  # worker bound to its own core (worker_cpu_affinity masks 1, 10, 100, ...: bit i is core i).
  local processes="worker_processes 1;
master_process off;" i masks=
  if [ "$NGINX_WORKERS" -gt 1 ]; then
    for i in $(seq 0 $((NGINX_WORKERS - 1))); do masks+=" 1$(printf "%${i}s" "" | tr ' ' 0)"; done
    processes="worker_processes $NGINX_WORKERS;
worker_cpu_affinity$masks;"
  fi
  cat >"$work/nginx.conf" <<EOF
$processes
worker_rlimit_nofile $fds;
daemon off;
pid $work/nginx.pid;
error_log $work/error.log warn;
events { worker_connections $((fds - 100)); }
http {
    access_log off;
    log_format arrival '\$msec \$request_time';
    client_body_temp_path $work/tmp;
    proxy_temp_path $work/tmp;
    fastcgi_temp_path $work/tmp;
    uwsgi_temp_path $work/tmp;
    scgi_temp_path $work/tmp;
    keepalive_requests 100000000;
    keepalive_timeout 120s;
    ssl_certificate $work/cert.pem;
    ssl_certificate_key $work/key.pem;
    ssl_protocols TLSv1.2 TLSv1.3;
    server {
        listen 127.0.0.1:$P_H1 backlog=4096;
        location = /100k { root $work/www; }
        location / { return 200 "hello\n"; }
    }
    server { listen 127.0.0.1:$P_H2C backlog=4096 http2; location / { return 200 "hello\n"; } }
    server { listen 127.0.0.1:$P_TLS backlog=4096 ssl http2; location / { return 200 "hello\n"; } }
    server { listen 127.0.0.1:$P_STATUS; location / { stub_status; } }
    server {
        listen 127.0.0.1:$P_LOG;
        access_log $work/access.log arrival;
        location / { return 200 "hello\n"; }
    }
}
EOF
  # env -u: nginx reads inherited listening sockets from a variable NGINX (binary upgrades).
  env -u NGINX taskset -c "$NGINX_CORES" "$NGINX" -p "$work" -c "$work/nginx.conf" -e "$work/error.log" &
  nginx_pid=$!
  for _ in $(seq 100); do
    if stub_status >/dev/null; then
      sleep 0.2 # every worker started
      nginx_pids=("$nginx_pid")
      if [ "$NGINX_WORKERS" -gt 1 ]; then # the workers: the processes whose parent is the master
        mapfile -t -O 1 nginx_pids < <(awk -v p="$nginx_pid" '$4 == p { print $1 }' /proc/[0-9]*/stat 2>/dev/null)
      fi
      [ "${#nginx_pids[@]}" -eq $((NGINX_WORKERS + (NGINX_WORKERS > 1))) ] ||
        say "nginx has ${#nginx_pids[@]} processes, not $NGINX_WORKERS workers (and a master)"
      return 0
    fi
    sleep 0.05
  done
  say "nginx did not start:"; cat "$work/error.log" >&2; exit 1
}

# nginx's stub_status page, headers and all, by bash's /dev/tcp (HTTP/1.0: nginx closes).
stub_status() {
  (exec 3<>"/dev/tcp/127.0.0.1/$P_STATUS" && printf 'GET / HTTP/1.0\r\n\r\n' >&3 && cat <&3) 2>/dev/null
}
# Requests nginx has served so far (stub_status; the status request itself counts as one).
served() {
  local n
  n=$(stub_status | awk '/^server accepts handled requests/ { getline; print $3 }')
  if [ -z "$n" ]; then say "nginx stopped answering:"; tail -n 5 "$work/error.log" >&2; exit 1; fi
  echo "$n"
}
# CPU time of nginx's processes so far, in clock ticks.
nginx_ticks() {
  local p
  for p in "${nginx_pids[@]}"; do cat "/proc/$p/stat"; done | awk '{ s += $14 + $15 } END { print s }'
}
# Busy time of the whole machine so far, in clock ticks: user nice system irq softirq.
busy_ticks() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 }' /proc/stat; }
HZ=$(getconf CLK_TCK)

# Waits (at most IDLE_WAIT seconds) until the machine uses less than OTHER_MAX cores over 1 s;
# returns 1 when it did not.
wait_idle() {
  local waited=0 b0 b1 cores
  while :; do
    b0=$(busy_ticks); sleep 1; b1=$(busy_ticks)
    cores=$(awk -v d=$((b1 - b0)) -v hz="$HZ" 'BEGIN { printf "%.2f", d / hz }')
    awk -v c="$cores" -v m="$OTHER_MAX" 'BEGIN { exit !(c <= m) }' && return 0
    waited=$((waited + 1))
    if [ "$waited" -ge "$IDLE_WAIT" ]; then
      say "machine still busy ($cores cores) after ${IDLE_WAIT}s; measuring anyway"
      return 1
    fi
  done
}

# --- scenarios --------------------------------------------------------------------------------

# Sets C (connections; in the open model, the most requests in flight), M (streams per
# connection), URL, PROTO (h1|h2), MODEL (closed|open) and RATE (requests/s of the open model).
scenario() {
  M=1; PROTO=h1; MODEL=closed; URL=http://127.0.0.1:$P_H1/; RATE=
  case $1 in
    h1-c1) C=1 ;;
    h1-c50) C=50 ;;
    h1-c64) C=64 ;; # the issue-36 row
    h1-c500) C=500 ;;
    h1-100k-c50) C=50; URL=http://127.0.0.1:$P_H1/100k ;;
    h1-c10k) C=10000 ;;
    h1tls-c50) C=50; URL=https://127.0.0.1:$P_TLS/ ;;
    h2c-c8m16) C=8; M=16; PROTO=h2; URL=http://127.0.0.1:$P_H2C/ ;;
    h2tls-c8m16) C=8; M=16; PROTO=h2; URL=https://127.0.0.1:$P_TLS/ ;;
    h2tls-c32m16) C=32; M=16; PROTO=h2; URL=https://127.0.0.1:$P_TLS/ ;; # meant with THREADS=4
    h2tls-c50) C=50; PROTO=h2; URL=https://127.0.0.1:$P_TLS/ ;;
    open) C=50; MODEL=open; RATE=$OPEN_RATE ;;
    open-20k) C=100; MODEL=open; RATE=20000 ;;
    open-10k) C=100; MODEL=open; RATE=10000 ;;
    open-50k) C=1000; MODEL=open; RATE=50000 ;; # meant with THREADS=4
    *) say "unknown scenario $1"; exit 2 ;;
  esac
}

# The loadgate spec of the current scenario, for SECS seconds.
write_spec() {
  local secs=$1
  {
    printf 'version: 1\nname: compare\ntargets:\n  - name: t\n    url: %s\n' "$URL"
    if [ "$PROTO" = h2 ]; then printf '    protocol: h2\n'; fi
    if [[ $URL == https* ]]; then printf '    tls:\n      insecure_skip_verify: true\n'; fi
    printf 'load:\n  threads: %s\n' "$THREADS"
    if [ "$MODEL" = open ]; then
      printf '  model: open\n  rate: %s/s\n  max_in_flight: %s\n' "$RATE" "$C"
    else
      printf '  connections: %s\n' "$C"
      if [ "$M" != 1 ]; then printf '  streams: %s\n' "$M"; fi
    fi
    printf '  duration: %ss\n' "$secs"
  } >"$work/spec.yaml"
}

# Sets CMD to TOOL's command line for the current scenario and SECS seconds; returns 1 when the
# tool cannot run it.
tool_cmd() {
  local tool=$1 secs=$2 per_conn=$((${RATE:-0} / C)) insecure=()
  [[ $URL == https* ]] && insecure=(--insecure)
  CMD=()
  case $tool in
    loadgate|base) # base: LOADGATE_BASE, an older loadgate, with the same spec
      write_spec "$secs"
      local binary=$LOADGATE
      [ "$tool" = base ] && binary=$LOADGATE_BASE
      CMD=("$binary" run -q "$work/spec.yaml" --out "$work/result.json") ;;
    loadgate-quick) # the load of write_spec, as flags: the same spec is built from them
      CMD=("$LOADGATE" quick --quiet -z "${secs}s" -c "$C" --threads "$THREADS" --disable-compression --disable-redirects)
      if [ "$PROTO" = h2 ]; then CMD+=(--http2); fi
      if [ "$M" != 1 ]; then CMD+=(-p "$M"); fi
      if [[ $URL == https* ]]; then CMD+=(--insecure); fi
      if [ "$MODEL" = open ]; then CMD+=(-q "$RATE"); fi
      CMD+=("$URL") ;;
    floor) # bench/floor/floor.c: one write and one read per request, nothing else
      [ "$PROTO" = h1 ] && [ "$MODEL" = closed ] && [[ $URL != https* ]] && [ "$THREADS" = 1 ] || return 1
      CMD=("$FLOOR" -c "$C" -d "$secs" "$URL") ;;
    wrk)
      [ "$PROTO" = h1 ] && [ "$MODEL" = closed ] || return 1
      CMD=(wrk -t "$THREADS" -c "$C" -d "${secs}s" "$URL") ;;
    h2load)
      CMD=(h2load -t "$THREADS" -c "$C" -m "$M" -D "$secs")
      if [ "$PROTO" = h1 ]; then CMD+=(--h1); fi
      if [ "$MODEL" = open ]; then CMD+=(--rps "$per_conn"); fi
      CMD+=("$URL") ;;
    hey)
      [ "$PROTO" = h1 ] || return 1
      CMD=(hey -z "${secs}s" -c "$C")
      if [ "$MODEL" = open ]; then CMD+=(-q "$per_conn"); fi
      CMD+=("$URL") ;;
    oha)
      CMD=(oha --no-tui -z "${secs}s" -c "$C" "${insecure[@]}")
      if [ "$PROTO" = h2 ]; then CMD+=(--http2 -p "$M"); fi
      if [ "$MODEL" = open ]; then CMD+=(-q "$RATE" --latency-correction); fi
      CMD+=("$URL") ;;
    vastar) # no TLS, no HTTP/2; its -q did not limit the rate with -z (measured: 6x the target)
      [ "$PROTO" = h1 ] && [ "$MODEL" = closed ] && [[ $URL != https* ]] || return 1
      CMD=(vastar -z "${secs}s" -c "$C" "$URL") ;;
    rewrk)
      [ "$MODEL" = closed ] && [ "$M" = 1 ] || return 1
      CMD=(rewrk -t "$THREADS" -c "$C" -d "${secs}s" -h "$URL")
      if [ "$PROTO" = h2 ]; then CMD+=(--http2); fi ;;
    *) say "unknown tool $tool"; exit 2 ;;
  esac
}

# Counts the client's ESTABLISHED connections to nginx once a second until $work/stop exists;
# the largest count goes to $work/conns.
sample_conns() {
  # shellcheck disable=SC2016 # the inner script expands its own arguments
  "$GNU_TIME" -f '%U %S' -o "$work/sampler.time" bash -c '
    max=0
    for _ in $(seq "$3"); do
      [ -e "$1/stop" ] && break
      sleep 1
      n=$(ss -Htn state established "( dport = :$2 )" | wc -l)
      [ "$n" -gt "$max" ] && max=$n
      echo "$max" >"$1/conns"
    done' _ "$work" "$P_H1" "$((D + 60))" &
  sampler_pid=$!
}

# Runs the current CMD once on the client's cores and appends one line to $work/runs.tsv:
# scenario tool round requests rps cpu_us rss_kb other_cores nginx_cores clean extra
measure() {
  local scen=$1 tool=$2 round=$3 secs=$4 attempt=0 rc
  local s0 s1 b0 b1 n0 n1 t0 t1 wall user sys rss requests extra other clean sampler=0 idle
  while :; do
    idle=1
    wait_idle || idle=0
    rm -f "$work/stop" "$work/conns" "$work/sampler.time" "$work/result.json"
    s0=$(served)
    [ "$scen" = h1-c10k ] && sample_conns
    b0=$(busy_ticks); n0=$(nginx_ticks); t0=$EPOCHREALTIME
    rc=0
    "$GNU_TIME" -f '%U %S %M' -o "$work/time" \
      timeout -k 5 $((secs + 60)) taskset -c "$CLIENT_CORES" "${CMD[@]}" >"$work/log" 2>&1 || rc=$?
    t1=$EPOCHREALTIME; b1=$(busy_ticks); n1=$(nginx_ticks)
    extra=""
    if [ -n "$RATE" ]; then extra="target=$RATE"; fi
    if [ "$scen" = h1-c10k ]; then
      touch "$work/stop"; wait "$sampler_pid" || true
      read -r user sys <"$work/sampler.time"
      sampler=$(awk -v u="$user" -v s="$sys" -v hz="$HZ" 'BEGIN { print int((u + s) * hz + 0.5) }')
      extra="$extra${extra:+;}established=$(cat "$work/conns" 2>/dev/null || echo 0)/$C"
    fi
    s1=$(served)
    requests=$((s1 - s0 - 1))
    read -r user sys rss < <(tail -n 1 "$work/time")
    if [ -s "$work/result.json" ]; then
      extra="$extra${extra:+;}$(python3 "$HERE/compare_report.py" loadgate-errors "$work/result.json")"
    fi
    # rc 5 is loadgate's "invalid measurement" verdict: the numbers are still reported (the
    # one-line command writes no result file).
    if { [ "$rc" != 0 ] && ! { [ "$rc" = 5 ] && { [ -s "$work/result.json" ] || [ "$tool" = loadgate-quick ]; }; }; } || [ "$requests" -le 0 ]; then
      say "FAILED $tool in $scen (exit $rc, $requests requests): $(grep -v '^\s*$' "$work/log" | head -n 3 | tr '\n' ' ')"
      return 1
    fi
    read -r other clean nginx_cores < <(awk -v b=$((b1 - b0)) -v n=$((n1 - n0)) -v s="$sampler" \
      -v u="$user" -v y="$sys" -v hz="$HZ" -v w="$(awk -v a="$t0" -v z="$t1" 'BEGIN { print z - a }')" \
      -v m="$OTHER_MAX" 'BEGIN {
        o = ((b - n - s) / hz - u - y) / w; if (o < 0) o = 0
        printf "%.3f %d %.2f\n", o, o <= m, n / hz / w }')
    wall=$(awk -v a="$t0" -v z="$t1" 'BEGIN { printf "%.2f", z - a }')
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$scen" "$tool" "$round" "$requests" \
      "$(awk -v r="$requests" -v s="$secs" 'BEGIN { printf "%.1f", r / s }')" \
      "$(awk -v r="$requests" -v u="$user" -v y="$sys" 'BEGIN { printf "%.2f", (u + y) * 1e6 / r }')" \
      "$rss" "$other" "$nginx_cores" "$clean" "$wall" "${extra:--}" >>"$work/runs.tsv"
    say "$scen round $round $tool: $requests requests in ${wall}s, client CPU ${user}+${sys}s," \
      "max RSS ${rss} KB, nginx ${nginx_cores} cores, other ${other} cores$([ "$clean" = 1 ] || echo ' (BUSY)') $extra"
    attempt=$((attempt + 1))
    # A retry helps when something woke up during the run, not when the machine is busy anyway.
    if [ "$clean" = 1 ] || [ "$idle" = 0 ] || [ "$attempt" -gt "$RETRIES" ]; then return 0; fi
    say "retrying: other processes used more than $OTHER_MAX cores"
  done
}

# Load scenarios: every tool in turn, ROUNDS times (A B C A B C ...).
run_load() {
  local scen=$1 round tool
  scenario "$scen"
  local active=()
  for tool in "${AVAILABLE[@]}"; do
    if tool_cmd "$tool" "$D"; then active+=("$tool"); else say "$scen: $tool cannot run this scenario"; fi
  done
  for round in $(seq "$ROUNDS"); do
    for tool in "${active[@]}"; do
      [[ " ${failed[*]-} " == *" $scen/$tool "* ]] && continue
      tool_cmd "$tool" "$D"
      measure "$scen" "$tool" "$round" "$D" || failed+=("$scen/$tool")
    done
  done
  [ -n "$FLAMES" ] || return 0
  for tool in "${active[@]}"; do
    [[ " loadgate base $FLAME_TOOLS " == *" $tool "* ]] || continue
    [[ " ${failed[*]-} " == *" $scen/$tool "* ]] && continue
    tool_cmd "$tool" "$D"
    flame "$scen" "$tool"
  done
}

# Start-up: from exec to the first request nginx logs, for one request on one connection.
run_startup() {
  local round tool t0 t1 first ms whole
  for round in $(seq "$ROUNDS"); do
    for tool in "${AVAILABLE[@]}"; do
      CMD=()
      case $tool in
        loadgate|base)
          printf 'version: 1\nname: startup\ntargets:\n  - name: t\n    url: http://127.0.0.1:%s/\nload:\n  connections: 1\n  requests: 1\n' \
            "$P_LOG" >"$work/spec.yaml"
          CMD=("$LOADGATE" run -q "$work/spec.yaml" --out "$work/result.json")
          [ "$tool" = base ] && CMD[0]=$LOADGATE_BASE ;;
        loadgate-quick) CMD=("$LOADGATE" quick --quiet -n 1 -c 1 "http://127.0.0.1:$P_LOG/") ;;
        floor) CMD=("$FLOOR" -c 1 -d 1 "http://127.0.0.1:$P_LOG/") ;;
        wrk) CMD=(wrk -t1 -c1 -d1s "http://127.0.0.1:$P_LOG/") ;;
        h2load) CMD=(h2load --h1 -n1 -c1 "http://127.0.0.1:$P_LOG/") ;;
        hey) CMD=(hey -n 1 -c 1 "http://127.0.0.1:$P_LOG/") ;;
        oha) CMD=(oha --no-tui -n 1 -c 1 "http://127.0.0.1:$P_LOG/") ;;
        vastar) CMD=(vastar -n 1 -c 1 "http://127.0.0.1:$P_LOG/") ;;
        rewrk) CMD=(rewrk -t 1 -c 1 -d 1s -h "http://127.0.0.1:$P_LOG/") ;;
      esac
      wait_idle || true
      : >"$work/access.log"
      t0=$EPOCHREALTIME
      timeout -k 5 30 taskset -c "$CLIENT_CORES" "${CMD[@]}" >"$work/log" 2>&1 || true
      t1=$EPOCHREALTIME
      first=$(awk 'NR == 1 { printf "%.3f", $1 - $2 }' "$work/access.log")
      if [ -z "$first" ]; then say "FAILED startup $tool: no request arrived"; continue; fi
      ms=$(awk -v a="$t0" -v f="$first" 'BEGIN { printf "%.0f", (f - a) * 1000 }')
      whole=$(awk -v a="$t0" -v z="$t1" 'BEGIN { printf "%.0f", (z - a) * 1000 }')
      say "startup round $round $tool: first request after $ms ms, exit after $whole ms"
      printf 'startup\t%s\t%s\t%s\t%s\n' "$tool" "$round" "$ms" "$whole" >>"$work/startup.tsv"
    done
  done
}

# Memory over run length: max RSS of a DURATION run and of a LONG run at c=50 (loadgate, base, oha).
run_flat() {
  local tool secs
  scenario h1-c50
  for tool in loadgate base oha; do
    [[ " ${AVAILABLE[*]} " == *" $tool "* ]] || continue
    for secs in "$D" "$LONG_S"; do
      tool_cmd "$tool" "$secs"
      measure "flat-${secs}s" "$tool" 1 "$secs" || true
    done
  done
}

ensure_tools
ensure_flames
build_loadgate
start_nginx
: >"$work/runs.tsv"; : >"$work/startup.tsv"
failed=()
say "rounds $ROUNDS, duration ${D}s, nginx pid $nginx_pid ($NGINX_WORKERS workers) on cores $NGINX_CORES," \
  "clients ($THREADS threads) on cores $CLIENT_CORES," \
  "runs with more than $OTHER_MAX cores used by other processes are retried $RETRIES times, then kept as BUSY"
for scen in $SCENARIOS; do
  case $scen in
    startup) run_startup ;;
    flat) run_flat ;;
    *) run_load "$scen" ;;
  esac
done
report=$(python3 "$HERE/compare_report.py" report "$work/runs.tsv" "$work/startup.tsv" \
  "rounds=$ROUNDS duration=${D}s long=${LONG_S}s other_max=$OTHER_MAX open_rate=$OPEN_RATE threads=$THREADS nginx_workers=$NGINX_WORKERS")
echo "$report"
if [ -n "$OUT" ]; then echo "$report" >"$OUT"; fi
