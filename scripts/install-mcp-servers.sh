#!/usr/bin/env bash
# Installs the third-party MCP servers the tests and benchmarks run, from npm, pinned by version
# (DESIGN.md §6). Each server gets its own prefix: $OTC_CORPUS_DIR/mcp/<name>/node_modules/.bin/…
#
#   scripts/install-mcp-servers.sh                 # into ./.corpus/mcp
#   OTC_CORPUS_DIR=/tmp/c scripts/install-mcp-servers.sh
#
# Idempotent: a server already installed at its pinned version is skipped. Install scripts are
# not run (--ignore-scripts): these packages are plain JavaScript and need none.
set -euo pipefail

DIR="${OTC_CORPUS_DIR:-.corpus}/mcp"
mkdir -p "$DIR"

# Installs npm package $2 at version $3 under $DIR/$1 unless it is already there at that version.
npm_server() {
    local name="$1" pkg="$2" ver="$3"
    local prefix="$DIR/$name"
    local manifest="$prefix/node_modules/$pkg/package.json"
    if [ -f "$manifest" ] && node -e 'process.exit(require(process.argv[1]).version === process.argv[2] ? 0 : 1)' "$(realpath "$manifest")" "$ver"; then
        echo "mcp: $pkg@$ver already installed in $prefix"
        return 0
    fi
    echo "mcp: installing $pkg@$ver into $prefix"
    mkdir -p "$prefix"
    npm install --prefix "$prefix" "$pkg@$ver" --ignore-scripts --no-audit --no-fund --loglevel=error
}

# The reference server: 13 tools offline over stdio (echo, get-sum, structured content, images);
# also serves streamable HTTP and legacy SSE. Launch: $DIR/everything/node_modules/.bin/mcp-server-everything stdio
npm_server everything @modelcontextprotocol/server-everything 2026.8.31
