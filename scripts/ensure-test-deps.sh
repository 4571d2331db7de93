#!/usr/bin/env bash
# Runs before `npm test`: the browser tests drive Debian's Chromium (Playwright cannot download its own
# browser here). Installs it when missing and this user may; otherwise says what to install.
set -euo pipefail
if command -v chromium >/dev/null 2>&1 || [ -n "${CHROMIUM_PATH:-}" ]; then exit 0; fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing Debian's chromium for the browser tests"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
else
  echo "the browser tests need Chromium: install Debian's 'chromium' package or set CHROMIUM_PATH" >&2
  exit 1
fi
