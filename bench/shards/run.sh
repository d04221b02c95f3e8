#!/usr/bin/env bash
# Issue 17's benchmark: 4 shards of one run as local processes, started together with one
# `--start-at`, against one `loadgate serve` on 127.0.0.1; then how long `loadgate merge` of
# their 4 results takes (docs: bench/README.md, "Issue 17").
#
# The spec: 10 targets (sizes and delays differ, so their histograms do), closed model,
# CONNECTIONS connections (shares 10, 10, 10, 10 by default) each paced at PACING requests/s:
# moderate load, so that 4 loadgate processes and the server fit on 2 cores. DURATION
# seconds measured after a 2 s warmup, starting 5 to 6 s after the shards are launched.
#
# Measured: each shard's exit code, responses and result size; the merge's start skew
# (`merged.start_skew_us`), the shards' `started_at` against their common `planned_start_at`
# and how late their paced requests started (p99 of the measured stage's lateness); the wall time of `loadgate merge` (the 4 results read, merged, checked,
# written), REPEAT times, and of `jq -s length` reading the same 4 files, as a reference of
# what merely parsing them costs; the merged result's size. Writes everything to OUT (JSON)
# and prints a summary. The issue's goal: the merge under 1 s.
#
#   bench/shards/run.sh                              # 60 s, 10 targets: about 80 s
#   DURATION=10 bench/shards/run.sh                  # a quick look
#
# Environment: DURATION (60, seconds), CONNECTIONS (40), PACING (50, requests/s per
# connection), REPEAT (5), OUT (target/bench-shards.json), LOADGATE (a loadgate binary;
# default: target/release/loadgate, built with `cargo build --release --locked -p loadgate`).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
DURATION=${DURATION:-60}
CONNECTIONS=${CONNECTIONS:-40}
PACING=${PACING:-50}
REPEAT=${REPEAT:-5}
OUT=${OUT:-target/bench-shards.json}
SHARDS=4

if [ -z "${LOADGATE:-}" ]; then
  cargo build --release --locked -q -p loadgate
  LOADGATE=$root/target/release/loadgate
fi
echo "loadgate: $("$LOADGATE" --version)" >&2

work=$(mktemp -d)
server=
cleanup() {
  [ -z "$server" ] || kill "$server" 2>/dev/null || true
  [ -z "$server" ] || wait "$server" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# The server, one thread, on a free port read from its first line.
"$LOADGATE" serve --listen 127.0.0.1:0 --threads 1 >"$work/serve.out" 2>&1 &
server=$!
for _ in $(seq 100); do
  grep -q "listening on" "$work/serve.out" && break
  sleep 0.1
done
base=$(sed -n 's/^loadgate serve: listening on //p' "$work/serve.out")
[ -n "$base" ] || { echo "loadgate serve did not start: $(cat "$work/serve.out")" >&2; exit 1; }

# The spec: 10 targets.
{
  cat <<EOF
version: 1
name: bench-shards
defaults:
  base_url: $base
  timeout: 2s
targets:
EOF
  for i in 0 1 2 3 4 5 6 7 8 9; do
    printf '  - name: t%d\n    path: /t%d?size=%d&delay=%dus\n' "$i" "$i" $((256 * (i + 1))) $((200 * i))
  done
  cat <<EOF
load:
  connections: $CONNECTIONS
  pacing: $PACING/s
  duration: ${DURATION}s
  warmup: 2s
slo:
  errors: ["rate < 1%"]
EOF
} >"$work/spec.yaml"
"$LOADGATE" validate "$work/spec.yaml" >&2

# The shards, started together 5 s from now (whole seconds).
at=$(date -u -d '+6 seconds' +%Y-%m-%dT%H:%M:%SZ)
echo "4 shards of ${DURATION} s, starting at $at" >&2
pids=()
for k in $(seq "$SHARDS"); do
  "$LOADGATE" run "$work/spec.yaml" --shard "$k/$SHARDS" --start-at "$at" --quiet \
    --out "$work/shard-$k.json" >"$work/shard-$k.log" 2>&1 &
  pids+=("$!")
done
codes=()
for k in $(seq "$SHARDS"); do
  code=0
  wait "${pids[$((k - 1))]}" || code=$?
  codes+=("$code")
  [ "$code" -eq 0 ] || { echo "shard $k exited $code:" >&2; tail -n 20 "$work/shard-$k.log" >&2; }
done
shard_files=()
for k in $(seq "$SHARDS"); do shard_files+=("$work/shard-$k.json"); done

# Wall time of a command, in ms (the best of REPEAT, and the median).
timed() { # timed NAME COMMAND...: appends "NAME ms" lines to $work/times
  local name=$1 start end
  shift
  for _ in $(seq "$REPEAT"); do
    start=$(date +%s%N)
    "$@" >/dev/null
    end=$(date +%s%N)
    echo "$name $(((end - start) / 1000))" >>"$work/times"
  done
}
timed merge "$LOADGATE" merge "${shard_files[@]}" --out "$work/merged.json"
timed jq jq -s length "${shard_files[@]}"

python3 - "$work" "$SHARDS" "$DURATION" "$OUT" "${codes[@]}" <<'PY'
import datetime, json, os, statistics, sys

work, shards, duration, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
codes = [int(c) for c in sys.argv[5:]]

def micros(text):
    at = datetime.datetime.strptime(text.replace("Z", "+0000"), "%Y-%m-%dT%H:%M:%S.%f%z")
    return round(at.timestamp() * 1e6)

times = {}
for line in open(os.path.join(work, "times")):
    name, us = line.split()
    times.setdefault(name, []).append(int(us) / 1000)

rows = []
for k in range(1, shards + 1):
    path = os.path.join(work, f"shard-{k}.json")
    r = json.load(open(path))
    rows.append({
        "shard": k,
        "exit": codes[k - 1],
        "connections": r["load"]["connections"],
        "responses": r["total"]["responses"],
        "started_at": r["started_at"],
        "late_us": micros(r["started_at"]) - micros(r["planned_start_at"]),
        # How late the paced requests of the measured stage started after they were due.
        "lateness_p99_us": [s for s in r["health"]["stages"] if not s["warmup"]][0]["lateness_us"]["p99_us"],
        "bytes": os.path.getsize(path),
    })
merged_path = os.path.join(work, "merged.json")
merged = json.load(open(merged_path))
summary = {
    "duration_s": duration,
    "targets": len(merged["targets"]),
    "shards": rows,
    "merged": {
        "responses": merged["total"]["responses"],
        "sum_of_shards": sum(r["responses"] for r in rows),
        "start_skew_us": merged["merged"]["start_skew_us"],
        "bytes": os.path.getsize(merged_path),
    },
    "merge_ms": {"min": min(times["merge"]), "median": statistics.median(times["merge"])},
    "jq_ms": {"min": min(times["jq"]), "median": statistics.median(times["jq"])},
}
summary["merge_over_jq"] = summary["merge_ms"]["median"] / summary["jq_ms"]["median"]
os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
json.dump(summary, open(out, "w"), indent=2)

print(f"| shard | exit | connections | responses | started_at - planned_start_at | requests late, p99 | result size |")
print(f"|---|---:|---:|---:|---:|---:|---:|")
for r in rows:
    print(f"| {r['shard']} | {r['exit']} | {r['connections']} | {r['responses']:,} | {r['late_us'] / 1000:.3f} ms | {r['lateness_p99_us'] / 1000:.3f} ms | {r['bytes'] / 1024:,.0f} KiB |")
m = summary["merged"]
print(f"| merged | | {sum(r['connections'] for r in rows)} | {m['responses']:,} | skew {m['start_skew_us'] / 1000:.3f} ms | | {m['bytes'] / 1024:,.0f} KiB |")
print()
print(f"loadgate merge of {shards} results: median {summary['merge_ms']['median']:.0f} ms, best {summary['merge_ms']['min']:.0f} ms")
print(f"jq -s length of the same files: median {summary['jq_ms']['median']:.0f} ms, best {summary['jq_ms']['min']:.0f} ms")
print(f"merge / jq: {summary['merge_over_jq']:.2f}; merged responses {m['responses']:,} = sum of the shards {m['sum_of_shards']:,}: {m['responses'] == m['sum_of_shards']}")
print(f"written: {out}")
PY
for code in "${codes[@]}"; do [ "$code" -eq 0 ] || exit 1; done
