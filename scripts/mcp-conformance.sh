#!/usr/bin/env bash
# Runs the official MCP conformance suite's server scenarios against an MCP streamable-HTTP
# endpoint, with the pinned Node 22 and suite that scripts/install-mcp-conformance.sh installs
# (run first, here too: it is idempotent). Exits non-zero when any scenario fails.
#
#   scripts/mcp-conformance.sh http://127.0.0.1:8080/mcp                 # the four default scenarios
#   scripts/mcp-conformance.sh http://127.0.0.1:8080/mcp tools-list ping # just these
#   scripts/mcp-conformance.sh --demo [SCENARIO...]                      # against `otc-bridge demo`
#   scripts/mcp-conformance.sh --client [SCENARIO...]                    # the bridge as MCP client
#
# --client runs the suite's client scenarios (default: initialize, tools_call, sse-retry and the
# auth/* scenarios the README lists as passing): for each,
# the suite starts its test server and runs scripts/mcp-conformance/client.py with its URL, which
# starts `otc-bridge --mcp-url URL` (debug build) and lists and calls every tool over OTC, the way a
# user would; the suite judges what the bridge sent upstream.
#
# --demo builds otc-bridge (debug, in $CARGO_TARGET_DIR or target/), starts
# `otc-bridge demo --listen 127.0.0.1:0`, runs against <its URL>/mcp and stops it.
# Default scenarios: server-initialize ping tools-list dns-rebinding-protection.
# dns-rebinding-protection needs a loopback URL (localhost, 127.0.0.1 or [::1]): with any other
# host the suite fails it without sending anything.
# Each scenario's checks are kept as JSON in $OTC_CORPUS_DIR/mcp-conformance-results/<run>/.
# Environment: OTC_CORPUS_DIR (default .corpus), MCP_CONFORMANCE_TIMEOUT (seconds per scenario, 120),
# OTC_BRIDGE (an otc-bridge binary to use for --demo and --client instead of building one).
set -euo pipefail

if [ $# -lt 1 ]; then
    echo "usage: $0 URL|--demo [SCENARIO...]" >&2
    exit 2
fi
URL="$1"
shift
SCENARIOS=("$@")
if [ ${#SCENARIOS[@]} -eq 0 ]; then
    if [ "$URL" = "--client" ]; then
        SCENARIOS=(initialize tools_call sse-retry
            auth/metadata-default auth/metadata-var1 auth/metadata-var2 auth/metadata-var3
            auth/basic-cimd auth/scope-from-www-authenticate auth/scope-from-scopes-supported
            auth/scope-omitted-when-undefined auth/scope-step-up auth/scope-retry-limit
            auth/token-endpoint-auth-basic auth/token-endpoint-auth-post auth/token-endpoint-auth-none
            auth/pre-registration auth/2025-03-26-oauth-endpoint-fallback
            auth/client-credentials-basic auth/client-credentials-jwt)
    else
        SCENARIOS=(server-initialize ping tools-list dns-rebinding-protection)
    fi
fi

DIR="${OTC_CORPUS_DIR:-.corpus}"
"$(dirname "$0")/install-mcp-conformance.sh" >&2
NODE="$DIR/node22/node_modules/.bin/node"
SUITE="$DIR/mcp-conformance/node_modules/@modelcontextprotocol/conformance/dist/index.js"
TIMEOUT="${MCP_CONFORMANCE_TIMEOUT:-120}"
RESULTS="$DIR/mcp-conformance-results/$(date +%Y%m%d-%H%M%S)-$$"
mkdir -p "$RESULTS"

BRIDGE_PID=""
stop_bridge() {
    if [ -n "$BRIDGE_PID" ]; then
        kill "$BRIDGE_PID" 2>/dev/null || true
        wait "$BRIDGE_PID" 2>/dev/null || true
        BRIDGE_PID=""
    fi
}
trap stop_bridge EXIT
if [ -n "${OTC_BRIDGE:-}" ]; then
    # A binary built already (the tests pass the workspace build's): building `-p otc-bridge` alone
    # would unify features differently, rebuild the bridge and replace the workspace's binary.
    BIN="$(realpath "$OTC_BRIDGE")"
elif [ "$URL" = "--demo" ] || [ "$URL" = "--client" ]; then
    cargo build --locked --manifest-path "$(dirname "$0")/../Cargo.toml" -p otc-bridge --bin otc-bridge
    BIN="$(realpath "${CARGO_TARGET_DIR:-$(dirname "$0")/../target}/debug/otc-bridge")"
fi
if [ "$URL" = "--demo" ]; then
    LOG="$RESULTS/bridge.log"
    "$BIN" demo --listen 127.0.0.1:0 >"$LOG" 2>&1 &
    BRIDGE_PID=$!
    BASE=""
    for _ in $(seq 1 600); do
        BASE="$(grep -o 'listening on http://[^ ]*' "$LOG" | head -n1 | sed 's/^listening on //' || true)"
        [ -n "$BASE" ] && break
        if ! kill -0 "$BRIDGE_PID" 2>/dev/null; then
            echo "mcp-conformance: the demo bridge exited before it was ready:" >&2
            cat "$LOG" >&2
            exit 1
        fi
        sleep 0.1
    done
    if [ -z "$BASE" ]; then
        echo "mcp-conformance: the demo bridge did not announce its URL within 60 s:" >&2
        cat "$LOG" >&2
        exit 1
    fi
    URL="${BASE%/}/mcp"
fi

echo "mcp-conformance: $("$NODE" "$SUITE" --version) on node $("$NODE" --version), against $URL"
passed=()
failed=()
for scenario in "${SCENARIOS[@]}"; do
    echo
    echo "=== $scenario ==="
    status=0
    if [ "$URL" = "--client" ]; then
        OTC_BRIDGE="$BIN" timeout "$TIMEOUT" "$NODE" "$SUITE" client \
            --command "python3 $(realpath "$(dirname "$0")")/mcp-conformance/client.py" \
            --scenario "$scenario" --output-dir "$RESULTS" || status=$?
    else
        timeout "$TIMEOUT" "$NODE" "$SUITE" server --url "$URL" --scenario "$scenario" --output-dir "$RESULTS" || status=$?
    fi
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
