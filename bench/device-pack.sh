#!/usr/bin/env bash
# Packs what bench/device.sh needs to run bench/compare.sh on a bare x86-64 Linux machine (no
# network, no nginx, h2load or wrk): those three and the host tools compare.sh uses (openssl,
# ss, GNU time, taskset) with every shared library ldd names and this machine's dynamic loader,
# the loadgate binaries given (stripped, gzipped), the floor client (static), and compare.sh.
#
#   bench/device-pack.sh LOADGATE [LOADGATE_BASE] [DIR]     # DIR: target/device-pack
#   DIR/bench/device.sh                                     # there (see that script)
#
# Each tool runs through a wrapper in DIR/bin that starts it with the packed loader and
# libraries (ld-linux-x86-64.so.2 --library-path DIR/lib), so that the device's own glibc,
# older or newer, plays no part; LD_LIBRARY_PATH stays unset, as it would also reach the
# device's python3 and bash. The pack must stay under 60 MB (the device's carry limit).
set -euo pipefail
cd "$(dirname "$0")/.."
say() { echo "device-pack: $*" >&2; }
if [ $# -lt 1 ] || [ $# -gt 3 ]; then echo "usage: bench/device-pack.sh LOADGATE [LOADGATE_BASE] [DIR]" >&2; exit 2; fi
lg=$1 base=${2:-} dir=${3:-target/device-pack}
MAX_KB=$((60 * 1024))

rm -rf "$dir"
mkdir -p "$dir/bin" "$dir/real" "$dir/lib" "$dir/bench/floor" "$dir/target/bench"

# Copies the shared libraries and the loader that ELF file $1 needs into lib/ (by their sonames).
pack_libs() {
  local line name path
  while read -r line; do
    case $line in
      *' => '/*) name=${line%% =>*}; path=${line#*=> }; path=${path%% (*} ;;
      /*) path=${line%% (*}; name=$(basename "$path") ;; # the loader
      *) continue ;; # linux-vdso, or "not a dynamic executable"
    esac
    [ -e "$dir/lib/$name" ] || cp -L "$path" "$dir/lib/$name"
  done < <(ldd "$1")
}

# Packs executable $2 as tool $1: real/$1, its libraries, and the wrapper bin/$1.
pack_tool() {
  local name=$1 path=$2
  [ -x "$path" ] || { say "missing $path"; exit 1; }
  cp -L "$path" "$dir/real/$name"
  pack_libs "$path"
  cat >"$dir/bin/$name" <<EOF
#!/bin/sh
# $name from the pack ($path on the machine that made it), with the pack's loader and libraries.
d=\$(dirname "\$(readlink -f "\$0")")/..
exec "\$d/lib/ld-linux-x86-64.so.2" --library-path "\$d/lib" "\$d/real/$name" "\$@"
EOF
  chmod +x "$dir/bin/$name"
}

for t in nginx h2load wrk openssl ss taskset; do
  p=$(command -v "$t" || true)
  [ -n "$p" ] || { [ "$t" = nginx ] && p=/usr/sbin/nginx; }
  pack_tool "$t" "${p:-/nonexistent/$t}"
done
pack_tool time /usr/bin/time

# loadgate binaries: stripped and gzipped (device.sh unpacks them), wrapped like the tools.
pack_loadgate() {
  local name=$1 path=$2
  [ -x "$path" ] || { say "$path is not an executable"; exit 1; }
  pack_tool "$name" "$path"
  strip -o "$dir/real/$name.stripped" "$path"
  gzip -9 -c "$dir/real/$name.stripped" >"$dir/real/$name.gz"
  rm "$dir/real/$name" "$dir/real/$name.stripped"
}
pack_loadgate loadgate "$lg"
[ -z "$base" ] || pack_loadgate loadgate-base "$base"

# openssl's configuration (openssl req reads it; a bare machine may have none).
mkdir -p "$dir/etc"
cp "$(openssl version -d | sed 's/^OPENSSLDIR: "\(.*\)"$/\1/')/openssl.cnf" "$dir/etc/openssl.cnf"

# compare.sh as it runs here (bench/ and the floor client's source), and floor built static.
cp bench/compare.sh bench/compare_report.py bench/device.sh "$dir/bench/"
cp bench/floor/floor.c "$dir/bench/floor/"
cc -O2 -static -o "$dir/target/bench/floor" bench/floor/floor.c

kb=$(du -sk "$dir" | cut -f1)
say "$dir: $((kb / 1024)) MB ($(find "$dir" -type f | wc -l) files)"
if [ "$kb" -gt "$MAX_KB" ]; then say "over the 60 MB limit"; exit 1; fi
