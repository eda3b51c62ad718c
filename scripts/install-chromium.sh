#!/usr/bin/env bash
# Installs Debian's chromium (for the dashboard's browser tests) when /usr/bin/chromium is missing.
# As root apt-get runs directly; otherwise through `sudo -n` (no password prompt: CI has no tty).
set -euo pipefail
bin=/usr/bin/chromium
if [ -x "$bin" ]; then echo "$bin"; exit 0; fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "chromium not found at $bin and apt-get is not available: install Chromium and link it there." >&2
  exit 1
fi
if [ "$(id -u)" -eq 0 ]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  as_root=(sudo -n)
else
  echo "chromium not found at $bin; installing it needs root: run 'sudo apt-get install -y chromium' once." >&2
  exit 1
fi
echo "installing Debian's chromium for the dashboard tests..." >&2
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -qq >&2
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >&2
[ -x "$bin" ] || { echo "apt-get finished but $bin is missing" >&2; exit 1; }
echo "$bin"
