#!/usr/bin/env bash
# Runs the official MCP conformance suite's server scenarios against an MCP streamable-HTTP
# endpoint, with the pinned Node 22 and suite that scripts/install-mcp-conformance.sh installs
# (run first, here too: it is idempotent). Exits non-zero when any scenario fails.
#
#   scripts/mcp-conformance.sh http://127.0.0.1:8080/mcp                 # the four default scenarios
#   scripts/mcp-conformance.sh http://127.0.0.1:8080/mcp tools-list ping # just these
#
# Default scenarios: server-initialize ping tools-list dns-rebinding-protection.
# dns-rebinding-protection needs a loopback URL (localhost, 127.0.0.1 or [::1]): with any other
# host the suite fails it without sending anything.
# Each scenario's checks are kept as JSON in $OTC_CORPUS_DIR/mcp-conformance-results/<run>/.
# Environment: OTC_CORPUS_DIR (default .corpus), MCP_CONFORMANCE_TIMEOUT (seconds per scenario, 120).
set -euo pipefail

if [ $# -lt 1 ]; then
    echo "usage: $0 URL [SCENARIO...]" >&2
    exit 2
fi
URL="$1"
shift
SCENARIOS=("$@")
if [ ${#SCENARIOS[@]} -eq 0 ]; then
    SCENARIOS=(server-initialize ping tools-list dns-rebinding-protection)
fi

DIR="${OTC_CORPUS_DIR:-.corpus}"
"$(dirname "$0")/install-mcp-conformance.sh" >&2
NODE="$DIR/node22/node_modules/.bin/node"
SUITE="$DIR/mcp-conformance/node_modules/@modelcontextprotocol/conformance/dist/index.js"
TIMEOUT="${MCP_CONFORMANCE_TIMEOUT:-120}"
RESULTS="$DIR/mcp-conformance-results/$(date +%Y%m%d-%H%M%S)-$$"
mkdir -p "$RESULTS"

echo "mcp-conformance: $("$NODE" "$SUITE" --version) on node $("$NODE" --version), against $URL"
passed=()
failed=()
for scenario in "${SCENARIOS[@]}"; do
    echo
    echo "=== $scenario ==="
    status=0
    timeout "$TIMEOUT" "$NODE" "$SUITE" server --url "$URL" --scenario "$scenario" --output-dir "$RESULTS" || status=$?
    if [ "$status" -eq 0 ]; then
        passed+=("$scenario")
    else
        [ "$status" -eq 124 ] && echo "mcp-conformance: $scenario timed out after ${TIMEOUT}s"
        failed+=("$scenario")
    fi
done

echo
echo "=== mcp-conformance summary ($URL) ==="
for s in "${passed[@]}"; do echo "  PASS $s"; done
for s in "${failed[@]}"; do echo "  FAIL $s"; done
echo "  checks: $RESULTS"
echo "mcp-conformance: ${#passed[@]} passed, ${#failed[@]} failed"
[ ${#failed[@]} -eq 0 ]
