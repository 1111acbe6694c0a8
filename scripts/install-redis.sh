#!/usr/bin/env bash
# Installs Redis (the Debian 12 packages `redis-server` and `redis-tools`, pinned, with the two
# libraries they need that a minimal system lacks) into $OTC_CORPUS_DIR/redis, without root and
# without touching the system: the packages are downloaded with `apt-get download` and unpacked
# with `dpkg-deb -x`. For the idempotency tests, where two bridge replicas share one Redis.
#
#   scripts/install-redis.sh              # into ./.corpus/redis
#
# Layout: $OTC_CORPUS_DIR/redis/bin/redis-server and bin/redis-cli (wrappers that set the library
# path). Idempotent: nothing is downloaded when the pinned version is already there.
set -euo pipefail

DIR="${OTC_CORPUS_DIR:-.corpus}/redis"
VERSION="5:7.0.15-1~deb12u10"
UPSTREAM="7.0.15"

if [ -x "$DIR/bin/redis-server" ] && "$DIR/bin/redis-server" --version 2>/dev/null | grep -q "v=$UPSTREAM"; then
    echo "redis: $UPSTREAM already installed in $DIR"
    exit 0
fi
echo "redis: installing redis-server=$VERSION into $DIR"
rm -rf "$DIR"
mkdir -p "$DIR/debs" "$DIR/root" "$DIR/bin"
DIR="$(cd "$DIR" && pwd)"
download() {
    (cd "$DIR/debs" && apt-get download "redis-server=$VERSION" "redis-tools=$VERSION" libjemalloc2 liblzf1)
}
if ! download 2>"$DIR/download.log"; then
    # A fresh machine may have no package lists yet.
    if [ "$(id -u)" = 0 ]; then
        apt-get update -qq
        download
    else
        cat "$DIR/download.log" >&2
        echo "redis: apt-get download failed; run 'apt-get update' (as root) and try again" >&2
        exit 1
    fi
fi
for deb in "$DIR"/debs/*.deb; do
    dpkg-deb -x "$deb" "$DIR/root"
done
for tool in redis-server redis-cli; do
    cat >"$DIR/bin/$tool" <<WRAPPER
#!/bin/sh
LD_LIBRARY_PATH="$DIR/root/usr/lib/x86_64-linux-gnu\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}" exec "$DIR/root/usr/bin/$tool" "\$@"
WRAPPER
    chmod +x "$DIR/bin/$tool"
done
"$DIR/bin/redis-server" --version
