#!/usr/bin/env bash
# Prints the path of a Python that has grpcio, grpcio-tools and websockets, for the peers of
# bench/grpc.sh and bench/ws.sh: $PYTHON when set; else the integration tests' venv
# (target/ci-tools/aioquic, made by the tests) when it has them; else target/ci-tools/bench-py,
# made here with pip when missing (needs python3 with venv, and PyPI).
set -euo pipefail
cd "$(dirname "$0")/../.."
GRPCIO=1.85.1
WEBSOCKETS=17.4
has() { "$1" -c 'import grpc, grpc_tools, websockets' 2>/dev/null; }
if [ -n "${PYTHON:-}" ]; then echo "$PYTHON"; exit 0; fi
for python in target/ci-tools/aioquic/bin/python target/ci-tools/bench-py/bin/python; do
  if [ -x "$python" ] && has "$python"; then echo "$PWD/$python"; exit 0; fi
done
echo "installing grpcio $GRPCIO, grpcio-tools $GRPCIO and websockets $WEBSOCKETS into target/ci-tools/bench-py" >&2
python3 -m venv target/ci-tools/bench-py
target/ci-tools/bench-py/bin/pip install -q "grpcio==$GRPCIO" "grpcio-tools==$GRPCIO" \
  "websockets==$WEBSOCKETS" >&2
has target/ci-tools/bench-py/bin/python || { echo "bench-py lacks grpcio or websockets" >&2; exit 1; }
echo "$PWD/target/ci-tools/bench-py/bin/python"
