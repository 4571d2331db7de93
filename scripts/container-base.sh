#!/usr/bin/env bash
# Builds a local base image for the Containerfile where no container registry is reachable (the Containerfile's
# default base is docker.io/library/node). It is a minimal Debian bookworm made by mmdebstrap from Debian's
# packages, plus Node.js and npm from the npm registry:
#   - `node-linux-<arch>@<version>`: the official Node.js build's `bin/node`, as a package (the same binary as
#     nodejs.org's tarball and the node images), checked against the registry's integrity hash by `npm pack`;
#   - `npm@<version>`: npm itself, with its dependencies bundled.
# The versions default to the build machine's (`node -v`, `npm -v`), so the image runs what the tests ran.
#
#   scripts/container-base.sh [image name]        default: localhost/svc-node-base:<node version>
#   NODE_VERSION=20.19.5 NPM_VERSION=10.8.2 scripts/container-base.sh
#
# Needs root (or mmdebstrap's unshare mode), mmdebstrap, podman (for `podman import`) and npm. Prints the image
# name on the last line. SOURCE_DATE_EPOCH (default: the Node package's release time is not known here, so
# a fixed date) makes mmdebstrap's file times reproducible; the package versions come from the mirror's state.
set -euo pipefail

NODE_VERSION=${NODE_VERSION:-$(node -p process.versions.node)}
NPM_VERSION=${NPM_VERSION:-$(npm -v)}
SUITE=${SUITE:-bookworm}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
case "$(uname -m)" in
  x86_64) arch=x64 ;;
  aarch64) arch=arm64 ;;
  *) echo "container-base: no Node.js package for $(uname -m)" >&2; exit 1 ;;
esac
TAG=${1:-localhost/svc-node-base:$NODE_VERSION}
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-1735689600} # 2025-01-01

for tool in mmdebstrap podman npm; do
  command -v "$tool" >/dev/null 2>&1 || { echo "container-base: '$tool' is missing (Debian packages: mmdebstrap, podman; npm comes with Node.js)" >&2; exit 1; }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# npm pack fetches by the registry's integrity hash; --ignore-scripts: nothing of the packages runs here
(cd "$work" && npm pack --silent --ignore-scripts "node-linux-$arch@$NODE_VERSION" "npm@$NPM_VERSION" >/dev/null)
node_tgz=$work/node-linux-$arch-$NODE_VERSION.tgz
npm_tgz=$work/npm-$NPM_VERSION.tgz
[ -f "$node_tgz" ] && [ -f "$npm_tgz" ] || { echo "container-base: npm pack did not produce $node_tgz and $npm_tgz" >&2; exit 1; }

# minbase: essential packages and apt; Node.js needs libstdc++ (and the embedded PostgreSQL too, which brings the
# rest of its libraries itself); ca-certificates for HTTPS from the server (SMTP, targets, OTLP, S3).
# /usr/local/bin/node, /usr/local/lib/node_modules/npm with the npm and npx links, like the node images.
mmdebstrap --quiet --variant=minbase --include=ca-certificates,libstdc++6 \
  --customize-hook="tar -xzf '$node_tgz' -C \"\$1/usr/local\" --strip-components=1 --no-same-owner package/bin/node" \
  --customize-hook="mkdir -p \"\$1/usr/local/lib/node_modules/npm\" && tar -xzf '$npm_tgz' -C \"\$1/usr/local/lib/node_modules/npm\" --strip-components=1 --no-same-owner" \
  --customize-hook='ln -s ../lib/node_modules/npm/bin/npm-cli.js "$1/usr/local/bin/npm" && ln -s ../lib/node_modules/npm/bin/npx-cli.js "$1/usr/local/bin/npx"' \
  --customize-hook='chroot "$1" node --version && chroot "$1" npm --version' \
  --customize-hook='rm -rf "$1"/var/cache/apt/* "$1"/var/lib/apt/lists/* "$1"/usr/share/doc/* "$1"/usr/share/man/*' \
  "$SUITE" "$work/rootfs.tar" "$MIRROR"

podman import --quiet \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change "ENV NODE_VERSION=$NODE_VERSION" \
  --change "LABEL org.opencontainers.image.description=Debian $SUITE (mmdebstrap) with Node.js $NODE_VERSION and npm $NPM_VERSION from the npm registry" \
  --change 'CMD ["node"]' \
  "$work/rootfs.tar" "$TAG" >/dev/null
echo "$TAG"
