#!/usr/bin/env bash
# The google.api HTTP annotations come from the npm package google-proto-files (the BSR is not reachable
# from CI). Copied, not edited, so `buf generate` needs no network; CI re-runs this and fails on drift.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p proto/google/api
for f in annotations http field_behavior; do
  cp node_modules/google-proto-files/google/api/$f.proto proto/google/api/$f.proto
done
# google.rpc.ErrorInfo: the detail that carries a server fault's reference (src/errors/errors.ts).
mkdir -p proto/google/rpc
cp node_modules/google-proto-files/google/rpc/error_details.proto proto/google/rpc/error_details.proto

# gRPC reflection v1alpha is v1 under another package name.
mkdir -p proto/grpc/reflection/v1alpha
sed -e 's/package grpc.reflection.v1;/package grpc.reflection.v1alpha;/' \
    -e 's#^// The gRPC server reflection protocol.*#// Derived from ../v1/reflection.proto by scripts/vendor-protos.sh: do not edit.#' \
    -e '/^\/\/ definition. v1alpha/d' \
  proto/grpc/reflection/v1/reflection.proto > proto/grpc/reflection/v1alpha/reflection.proto
