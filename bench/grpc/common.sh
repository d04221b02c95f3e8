# shellcheck shell=bash disable=SC2154 # $limit and $server are the sourcing script's
# Sourced by bench/grpc.sh and bench/ws.sh: the server's life and one measured client run.
# Needs: $work (a folder), $limit (seconds), $server (the server's pid, or empty).

HZ=$(getconf CLK_TCK)
# Busy time of the whole machine so far, in clock ticks: user nice system irq softirq.
busy_ticks() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 }' /proc/stat; }
# CPU time of the server so far, in clock ticks (0 when there is none).
server_ticks() { awk '{ print $14 + $15 }' "/proc/$server/stat" 2>/dev/null || echo 0; }

stop_server() {
  [ -z "$server" ] || kill "$server" 2>/dev/null || true
  [ -z "$server" ] || wait "$server" 2>/dev/null || true
  server=
}

# wait_listening OUT NAME: waits (10 s at most) for the server's "listening on" line in OUT and
# prints its address (host:port, the URL's scheme removed).
wait_listening() {
  for _ in $(seq 100); do
    grep -qs "listening on" "$1" && break
    sleep 0.1
  done
  local addr
  addr=$(sed -n 's#^.*listening on \([a-z]*://\)\{0,1\}##p' "$1" | head -n 1)
  [ -n "$addr" ] || { echo "$2 server did not start: $(cat "$1")" >&2; exit 1; }
  echo "$addr"
}

# measured OUT -- COMMAND...: runs COMMAND on core 1 through bench/flow/measure.py (its line to
# OUT.json, its output to OUT.stdout and OUT.stderr), and writes OUT.load.json: the wall time,
# the server's CPU seconds over the run, and the CPU seconds the rest of the machine used
# (busy time less the client's and the server's: other sessions, builds).
measured() {
  local out=$1 b0 b1 s0 s1 t0 t1
  shift 2
  b0=$(busy_ticks); s0=$(server_ticks); t0=$EPOCHREALTIME
  taskset -c 1 python3 bench/flow/measure.py --limit "$limit" "$out.stdout" "$out.stderr" -- \
    "$@" > "$out.json" || true
  t1=$EPOCHREALTIME; b1=$(busy_ticks); s1=$(server_ticks)
  python3 - "$out" "$((b1 - b0))" "$((s1 - s0))" "$t0" "$t1" "$HZ" <<'PY'
import json, sys
out, busy, srv, t0, t1, hz = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6])
client = json.load(open(out + ".json"))
cpu = client["user_s"] + client["sys_s"]
json.dump({"wall_s": round(t1 - t0, 3), "server_cpu_s": srv / hz,
           "other_cpu_s": round(max(busy / hz - srv / hz - cpu, 0), 2)}, open(out + ".load.json", "w"))
PY
}
