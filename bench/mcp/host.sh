#!/usr/bin/env bash
# What a call costs through the MCP edge: the same tool (the built-in demo MCP server's `echo`,
# a real stdio child) called through `POST /tools/call` and through `POST /mcp` (`call_tool`,
# stateless streamable HTTP, JSON response), against one release bridge, in the same run.
#
#   bench/mcp/host.sh                          # concurrency 1 and 8; 5 s each after 1 s warm-up
#   DURATION=10 LEVELS="1" bench/mcp/host.sh
#
# Prints one line per (endpoint, concurrency): calls/s and p50/p90/p99 latency in µs; the
# difference of the p50s is what the MCP edge adds (JSON-RPC parsing, rmcp's per-request service,
# the result's rendering).
set -euo pipefail
cd "$(dirname "$0")/../.."

DURATION="${DURATION:-5}"
LEVELS="${LEVELS:-1 8}"
cargo build --quiet --release -p otc-bridge -p otc-loadgen
TARGET="${CARGO_TARGET_DIR:-$PWD/target}/release"

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
OTC_LOG=warn "$TARGET/otc-bridge" --listen "127.0.0.1:$PORT" \
    --mcp "'$TARGET/otc-bridge' demo-mcp-server" >/tmp/otc-bench-host.log 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null || true; wait 2>/dev/null || true' EXIT

OTC_URL="http://127.0.0.1:$PORT/tools/call"
OTC_BODY='{"request":{"tool_id":"DemoTools.Echo","input":{"message":"hi"}}}'
MCP_URL="http://127.0.0.1:$PORT/mcp"
MCP_BODY='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"call_tool","arguments":{"path":"DemoTools.Echo","arguments":{"message":"hi"}}}}'
for _ in $(seq 1 600); do
    if curl -fsS -o /dev/null -H 'content-type: application/json' -d "$OTC_BODY" "$OTC_URL" 2>/dev/null; then break; fi
    sleep 0.1
done

echo "bench: DemoTools.Echo over a stdio child; ${DURATION}s per run; $(nproc) cores"
for c in $LEVELS; do
    "$TARGET/otc-loadgen" --label tools/call --url "$OTC_URL" --body "$OTC_BODY" \
        --expect '"success":true' --concurrency "$c" --duration-secs "$DURATION"
    "$TARGET/otc-loadgen" --label mcp --url "$MCP_URL" --body "$MCP_BODY" \
        --header 'accept: application/json, text/event-stream' --header 'mcp-protocol-version: 2025-11-25' \
        --expect '"isError":false' --concurrency "$c" --duration-secs "$DURATION"
done
