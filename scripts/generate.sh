#!/usr/bin/env bash
# Regenerates everything derived and committed: vendored protos, gen/ from buf, the Prisma client.
# CI runs this and fails when the working tree changes (gen/ stale).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$PATH"
bash scripts/vendor-protos.sh
buf lint
buf generate          # cleans gen/ first, so the Prisma client below must come after it
# `prisma generate` never runs the schema engine, but the CLI insists on finding one (and would download
# it). Any existing file satisfies the check; this keeps generation offline.
PRISMA_SCHEMA_ENGINE_BINARY="$(type -P false)" prisma generate >/dev/null
