#!/usr/bin/env bash
# Issue 17: what the per-second histograms cost. Runs a 10-target spec (open model, RATE
# arrivals/s spread over the targets by weight, for DURATION seconds) against `loadgate serve`
# on 127.0.0.1 and reports the result file's size and loadgate's peak memory (maximum resident
# set size, from GNU time's `-v`) and CPU time, with the share of the file that is per-second histograms
# (the run's and each target's `time_series[].histogram`).
#
# The targets answer after 0, 1, ..., 9 ms (`?delay=`), so that their latencies spread over
# many histogram buckets, as a real service's do (a single latency would compress to nothing).
# The load takes little CPU at the default rate: the 10-minute run can go on in the background.
#
#   bench/shards/size.sh                              # 10 minutes, 2000/s, 10 targets
#   DURATION=60 bench/shards/size.sh                  # the short variant, to extrapolate
#   LOADGATE=/path/to/loadgate DURATION=60 OUT=/tmp/r.json bench/shards/size.sh
#
# Prints one line of `name=value` pairs: duration_s, targets, rate, seconds (in the run's time
# series), result_bytes, histogram_bytes (the per-second histograms' base64 text, run and
# targets), bytes_per_second (result_bytes / seconds), max_rss_kb, cpu_s (loadgate's user +
# system time), exit (loadgate's status: 5 when the load was not applied as planned, e.g. a
# busy machine; the sizes are still measured).
set -euo pipefail
cd "$(dirname "$0")/../.."
DURATION=${DURATION:-600}
RATE=${RATE:-2000}
TARGETS=${TARGETS:-10}
if [ -z "${LOADGATE:-}" ]; then
  cargo build --release --locked -q -p loadgate
  LOADGATE=$PWD/target/release/loadgate
fi
for t in python3 /usr/bin/time; do
  command -v "$t" >/dev/null || { echo "missing $t" >&2; exit 2; }
done
work=$(mktemp -d /tmp/loadgate-size.XXXXXX)
server_pid=
trap 'if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; fi; rm -rf "$work"' EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$LOADGATE" serve --listen "127.0.0.1:$port" --threads 1 >"$work/serve.log" 2>&1 &
server_pid=$!
for _ in $(seq 50); do
  python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 1)" 2>/dev/null && break
  sleep 0.1
done
{
  printf 'version: 1\nname: size\ndefaults:\n  base_url: http://127.0.0.1:%s\ntargets:\n' "$port"
  for i in $(seq 0 $((TARGETS - 1))); do
    printf '  - name: t%s\n    path: /?delay=%sms\n' "$i" "$((i % 10))"
  done
  printf 'load:\n  model: open\n  rate: %s/s\n  max_in_flight: 200\n  duration: %ss\n' \
    "$RATE" "$DURATION"
} >"$work/spec.yaml"
out=${OUT:-$work/result.json}
status=0
/usr/bin/time -v -o "$work/time.txt" "$LOADGATE" run -q "$work/spec.yaml" --out "$out" \
  >"$work/run.log" 2>&1 || status=$?
if [ ! -s "$out" ]; then
  echo "no result (exit $status):" >&2
  head -20 "$work/run.log" >&2
  exit 1
fi
python3 - "$out" "$work/time.txt" "$DURATION" "$TARGETS" "$RATE" "$status" <<'PY'
import json, os, re, sys
path, time_txt, duration, targets, rate, status = sys.argv[1:]
gnu_time = open(time_txt).read()
rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", gnu_time).group(1)
cpu = sum(float(x) for x in re.findall(r"(?:User|System) time \(seconds\): ([\d.]+)", gnu_time))
r = json.load(open(path))
series = [r["time_series"]] + [t.get("time_series", []) for t in r["targets"]]
hist = sum(len(s.get("histogram", "")) for ts in series for s in ts)
size = os.path.getsize(path)
seconds = len(r["time_series"])
print(f"duration_s={duration} targets={targets} rate={rate} seconds={seconds} "
      f"result_bytes={size} histogram_bytes={hist} "
      f"bytes_per_second={size // max(seconds, 1)} max_rss_kb={rss} cpu_s={cpu:.2f} exit={status}")
PY
