#!/usr/bin/env bash
# The one generator of protobuf code: Python messages, gRPC stubs and mypy stubs, written beside
# the .proto files as the `engram.v1` package, then the client's typed methods (engram.client._methods).
# Generated files are never committed or edited.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
export PATH="$PWD/$VENV/bin:$PATH"
rm -f protos/engram/v1/*_pb2*.py protos/engram/v1/*_pb2*.pyi protos/engram/client/_methods.py
"$VENV/bin/python" -m grpc_tools.protoc \
  -I protos \
  --python_out=protos --grpc_python_out=protos \
  --mypy_out=protos --mypy_grpc_out=protos \
  protos/engram/v1/*.proto
echo "generated $(ls protos/engram/v1/*_pb2*.py | wc -l) modules into protos/engram/v1"
"$VENV/bin/python" scripts/gen_client_methods.py
