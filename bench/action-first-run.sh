#!/usr/bin/env bash
# How long a first action run takes with a release binary and without one (issue 37).
#
#   bench/action-first-run.sh release      a release (on the stand-in GitHub API) holding
#                                          this runner's packaged, stripped engine
#   bench/action-first-run.sh build        no release: cargo build --profile fallback on an
#                                          empty target folder, with ~/.cargo's registry
#   bench/action-first-run.sh build-cold   the same with an empty CARGO_HOME (crates.io
#                                          index and every crate downloaded)
#
# The action runs from a fresh copy of this checkout (git archive HEAD, plus the current
# action/dist bundle: run `npm run build` in action/ first), so its target/ is empty, as on a
# runner. LOADGATE is the engine packaged for `release` (default: target/fallback/loadgate),
# stripped first. NICE (default 10) is the build's niceness on a shared machine. Needs Node
# 24 on PATH (it runs the TypeScript harness by stripping the types), tar, strip, cargo.
set -euo pipefail

mode=${1:?usage: bench/action-first-run.sh release|build|build-cold}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/loadgate-first-run-XXXXXX")
trap 'rm -rf "$work"' EXIT

copy=$work/action-copy
mkdir -p "$copy"
git -C "$root" archive HEAD | tar -x -C "$copy"
cp "$root/action/dist/index.js" "$copy/action/dist/index.js"
ln -s "$root/action/node_modules" "$copy/action/node_modules"
cp "$root/bench/action-first-run.ts" "$copy/bench/"

case $mode in
  release)
    target=$(rustc -vV | sed -n 's/^host: //p')
    mkdir -p "$work/pkg/loadgate"
    strip -o "$work/pkg/loadgate/loadgate" "${LOADGATE:-$root/target/fallback/loadgate}"
    tar -czf "$work/loadgate-$target.tar.gz" -C "$work/pkg" loadgate
    (cd "$copy" && node bench/action-first-run.ts release "$work/loadgate-$target.tar.gz")
    ;;
  build | build-cold)
    if [ "$mode" = build-cold ]; then export CARGO_HOME=$work/cargo-home; fi
    echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
    (cd "$copy" && nice -n "${NICE:-10}" node bench/action-first-run.ts build)
    echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
    ;;
  *) echo "unknown mode $mode" >&2; exit 2 ;;
esac
