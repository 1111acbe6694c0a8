#!/usr/bin/env bash
# Installs the real OAuth 2.1 authorization server of the OAuth end-to-end test bed: npm
# `oidc-provider` (pinned, with its whole dependency tree, by scripts/oauth-e2e/package-lock.json),
# which scripts/oauth-e2e/provider.mjs runs on loopback for the OAuth client tests of otc-bridge.
#
#   scripts/install-oauth-server.sh                    # into ./.corpus
#   OTC_CORPUS_DIR=/tmp/c scripts/install-oauth-server.sh
#
# Layout:  $OTC_CORPUS_DIR/oauth-server/node_modules/oidc-provider             (the server library)
# It is run with the Node 22 that scripts/install-mcp-conformance.sh installs
# ($OTC_CORPUS_DIR/node22/node_modules/.bin/node): run that script first.
# Idempotent: already installed at its pinned version from the same lock file, it is skipped.
# The dependencies are plain JavaScript: their install scripts are not run.
set -euo pipefail

DIR="${OTC_CORPUS_DIR:-.corpus}"
OIDC_PROVIDER_VERSION=9.13.3
LOCK_DIR="$(dirname "$0")/oauth-e2e"
NODE="$DIR/node22/node_modules/.bin/node"
mkdir -p "$DIR"

if [ ! -x "$NODE" ]; then
    echo "oauth-server: Node 22 is missing ($NODE): run scripts/install-mcp-conformance.sh first" >&2
    exit 1
fi

PREFIX="$DIR/oauth-server"
manifest="$PREFIX/node_modules/oidc-provider/package.json"
if [ -f "$manifest" ] && cmp -s "$LOCK_DIR/package-lock.json" "$PREFIX/package-lock.json" \
    && "$NODE" -e 'process.exit(require(process.argv[1]).version === process.argv[2] ? 0 : 1)' "$(realpath "$manifest")" "$OIDC_PROVIDER_VERSION"; then
    echo "oauth-server: oidc-provider@$OIDC_PROVIDER_VERSION already installed in $PREFIX"
else
    echo "oauth-server: installing oidc-provider@$OIDC_PROVIDER_VERSION into $PREFIX"
    mkdir -p "$PREFIX"
    cp "$LOCK_DIR/package.json" "$LOCK_DIR/package-lock.json" "$PREFIX/"
    # `npm ci`: exactly the lock file's tree (it fails rather than resolve anything anew).
    (cd "$PREFIX" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
fi
