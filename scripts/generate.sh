#!/usr/bin/env bash
# Regenerates everything derived and committed: vendored protos, gen/ from buf, the Prisma client.
# CI runs this and fails when the working tree changes (gen/ stale).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$PATH"
# buf comes from the npm registry as its Linux x64 build (the only build the registry here serves; the
# @bufbuild/buf wrapper's other platforms cannot be locked). Elsewhere, a buf on PATH or $BUF is used.
BUF="${BUF:-}"
if [ -z "$BUF" ]; then
  if [ -x node_modules/@bufbuild/buf-linux-x64/bin/buf ]; then BUF=node_modules/@bufbuild/buf-linux-x64/bin/buf
  elif command -v buf >/dev/null 2>&1; then BUF=buf
  else echo "buf not found: install it or set BUF" >&2; exit 1; fi
fi
bash scripts/vendor-protos.sh
"$BUF" lint
"$BUF" generate       # cleans gen/ first, so the Prisma client below must come after it
# protoc-gen-es embeds descriptors without comments: the proto comments for the OpenAPI document come from an
# image with source info (buf build keeps it unless --exclude-source-info), as gen/svc/proto_comments.ts.
"$BUF" build -o - | tsx scripts/proto-comments.ts
# `prisma generate` never runs the schema engine, but the CLI insists on finding one (and would download
# it). Any existing file satisfies the check; this keeps generation offline.
PRISMA_SCHEMA_ENGINE_BINARY="$(type -P false)" prisma generate >/dev/null
