#!/usr/bin/env bash
# End-to-end forwarding overhead of the bridge for an OpenAPI upstream, with a load generator on
# loopback: the demo's REST service (POST /notes) called directly, then the same operation
# through the bridge (DemoNotes.CreateNote). The overhead is the difference of the medians;
# the target (issue 3) is under 100 µs at the median.
#
# Usage: bench/openapi/e2e.sh [DURATION_SECS]
set -euo pipefail
cd "$(dirname "$0")/../.."
secs="${1:-5}"
port=18090
cargo build --release --quiet -p otc-bridge -p otc-loadgen
log=$(mktemp)
target/release/otc-bridge demo --listen "127.0.0.1:$port" > "$log" 2>&1 &
demo=$!
trap 'kill -INT $demo 2>/dev/null; wait $demo 2>/dev/null; rm -f "$log"' EXIT
for _ in $(seq 100); do grep -q "listening on" "$log" && break; sleep 0.1; done
rest=$(grep -o 'http://127.0.0.1:[0-9]*/openapi.yaml' "$log" | head -1 | sed 's|/openapi.yaml||')
[ -n "$rest" ] || { cat "$log"; exit 1; }

for c in 1 8; do
  target/release/otc-loadgen --url "$rest/notes" --body '{"title":"t","body":"b"}' --header content-type:application/json \
    --expect-status 201 --concurrency "$c" --duration-secs "$secs" --label direct
  target/release/otc-loadgen --url "http://127.0.0.1:$port/tools/call" \
    --body '{"request":{"tool_id":"DemoNotes.CreateNote","input":{"title":"t","body":"b"}}}' \
    --expect '"success":true' --concurrency "$c" --duration-secs "$secs" --label bridge
done
