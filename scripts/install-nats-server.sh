#!/usr/bin/env bash
# Installs nats-server >= 2.11 into .cache/nats-server/ without touching the system's apt state.
# Debian bookworm ships 2.9 (no per-message TTL, no delete markers); the unstable suite carries 2.11+.
# We fetch the signed .deb from the same mirror with private apt state dirs and unpack it.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
dest="$here/.cache/nats-server"
bin="$dest/nats-server"
if [ -x "$bin" ]; then echo "$bin"; exit 0; fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "nats-server >= 2.11 not found. Install it (e.g. 'brew install nats-server' or 'go install github.com/nats-io/nats-server/v2@latest') and put it on PATH or set NATS_SERVER_BIN." >&2
  exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/lists/partial" "$work/cache/archives/partial" "$dest"
uri=""
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
src=/etc/apt/sources.list.d/debian.sources
if [ -f "$src" ]; then
  uri=$(awk '/^URIs:/ {print $2; exit}' "$src")
  kr=$(awk '/^Signed-By:/ {print $2; exit}' "$src")
  [ -n "$kr" ] && keyring="$kr"
fi
if [ -z "$uri" ] && [ -f /etc/apt/sources.list ]; then
  uri=$(awk '$1=="deb" && $0 !~ /security/ {for(i=2;i<=NF;i++) if ($i ~ /^http/) {print $i; exit}}' /etc/apt/sources.list)
fi
if [ -z "$uri" ]; then echo "could not find a Debian mirror in apt's sources" >&2; exit 1; fi

cat > "$work/sid.sources" <<SRC
Types: deb
URIs: $uri
Suites: sid
Components: main
Signed-By: $keyring
SRC
opts=(-o "Dir::Etc::sourcelist=$work/sid.sources" -o "Dir::Etc::sourceparts=-"
      -o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache"
      -o "Dir::State::status=/dev/null" -o "APT::Get::List-Cleanup=0" -o Debug::NoLocking=1 -o APT::Sandbox::User=root)
apt-get "${opts[@]}" -qq update >&2
(cd "$work" && apt-get "${opts[@]}" -qq download nats-server >&2)
deb=$(ls "$work"/nats-server_*.deb | head -1)
dpkg-deb -x "$deb" "$work/x"
cp "$work/x/usr/sbin/nats-server" "$bin"
chmod +x "$bin"
"$bin" --version >&2
echo "$bin"
