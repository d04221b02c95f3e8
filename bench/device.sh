#!/usr/bin/env bash
# The issue-36 rows on a bare many-core x86-64 Linux machine (no network; no nginx, h2load or
# wrk; bash, coreutils, gzip and python3 are enough), from the folder bench/device-pack.sh made:
#
#   DIR/bench/device.sh                      # THREADS=1, then THREADS=4; tables in $OUT
#   THREADS_LIST=4 DIR/bench/device.sh       # one of them (each takes about 4-5 minutes)
#
# Runs DIR/bench/compare.sh with the packed tools (DIR/bin first in PATH), nginx with
# NGINX_WORKERS=8 workers on cores 0-7 and the client on the cores after them, ROUNDS=2 of
# DURATION=4s, tools loadgate, base (when the pack has a second loadgate), floor (1 thread
# only), h2load and wrk. Writes $OUT/threads-N.md (the tables) and $OUT/threads-N.log (the
# suite's progress) for each N in THREADS_LIST; OUT defaults to DIR/out. Every compare.sh
# setting passes through (SCENARIOS, ROUNDS, TOOLS, FLAMES when the machine has perf and
# inferno, ...).
set -euo pipefail
pack=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$pack/out}
say() { echo "device: $*" >&2; }
cd "$pack"
command -v python3 >/dev/null || { say "python3 is missing (compare.sh's report needs it)"; exit 2; }
[ -x target/bench/floor ] || { say "run bench/device-pack.sh first: $pack is not a pack"; exit 2; }
for z in real/*.gz; do
  [ -e "${z%.gz}" ] || { gzip -dc "$z" >"${z%.gz}.part" && chmod +x "${z%.gz}.part" && mv "${z%.gz}.part" "${z%.gz}"; }
done
touch target/bench/floor # newer than floor.c, whatever the copy did to the times: not rebuilt
mkdir -p "$out"

export PATH="$pack/bin:$PATH" NGINX=$pack/bin/nginx GNU_TIME=$pack/bin/time LOADGATE=$pack/bin/loadgate
export OPENSSL_CONF=$pack/etc/openssl.cnf
export INSTALL=0 NGINX_WORKERS=${NGINX_WORKERS:-8} ROUNDS=${ROUNDS:-2} DURATION=${DURATION:-4s}
export IDLE_WAIT=${IDLE_WAIT:-2} RETRIES=${RETRIES:-0} TOOLS=${TOOLS:-"loadgate floor h2load wrk"}
if [ -x bin/loadgate-base ] && [ -z "${LOADGATE_BASE+set}" ]; then export LOADGATE_BASE=$pack/bin/loadgate-base; fi
say "$(nproc) cores, $(uname -r); nginx $NGINX_WORKERS workers; ROUNDS=$ROUNDS DURATION=$DURATION; out: $out"

for t in ${THREADS_LIST:-1 4}; do
  case $t in # the issue's rows at 1 thread, and at 4
    1) scenarios="h1-c64 h2c-c8m16 h2tls-c8m16 open open-20k open-10k h1-c10k" ;;
    *) scenarios="h1-c64 h2tls-c32m16 open-50k h1-c10k" ;;
  esac
  say "THREADS=$t: ${SCENARIOS:-$scenarios}"
  THREADS=$t SCENARIOS=${SCENARIOS:-$scenarios} OUT=$out/threads-$t.md bench/compare.sh \
    2> >(tee "$out/threads-$t.log" >&2) || say "THREADS=$t: compare.sh failed (exit $?)"
done
ls -l "$out" >&2
