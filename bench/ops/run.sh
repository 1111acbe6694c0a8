#!/usr/bin/env bash
# What the operations features cost (issue 13), measured in one run against baselines from the
# same run:
#
#   1. metrics: the MCP echo benchmark (server-everything over stdio, as bench/mcp/run.sh) at
#      concurrency 64, with /metrics on (the default) and off, in alternating rounds;
#   2. idempotent replays: a call repeated with the same call_id, answered from the memory store
#      and from Redis on loopback, at concurrency 1 (p50 latency), against the same call without
#      a call_id (which reaches the upstream).
#
#   bench/ops/run.sh                      # ROUNDS=3, DURATION=5 s per run
#   ROUNDS=5 DURATION=10 bench/ops/run.sh
#
# Installs what it needs (pinned): server-everything (scripts/install-mcp-servers.sh) and Redis
# (scripts/install-redis.sh). Builds otc-bridge and otc-loadgen in release mode. Tracing (OTLP) is
# off throughout. Prints the loadgen lines and a summary of ratios.
set -euo pipefail
cd "$(dirname "$0")/../.."

export OTC_CORPUS_DIR="${OTC_CORPUS_DIR:-$PWD/.corpus}"
DURATION="${DURATION:-5}"
ROUNDS="${ROUNDS:-3}"
unset OTEL_EXPORTER_OTLP_ENDPOINT OTEL_EXPORTER_OTLP_TRACES_ENDPOINT

scripts/install-mcp-servers.sh >/dev/null
scripts/install-redis.sh >/dev/null
EVERYTHING="$OTC_CORPUS_DIR/mcp/everything/node_modules/.bin/mcp-server-everything"
cargo build --quiet --release -p otc-bridge -p otc-loadgen
TARGET="${CARGO_TARGET_DIR:-$PWD/target}/release"
WORK="$(mktemp -d)"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
PIDS=()
cleanup() { for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT

REDIS_PORT=$(free_port)
"$OTC_CORPUS_DIR/redis/bin/redis-server" --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no \
    >"$WORK/redis.log" 2>&1 &
PIDS+=($!)

# bridge NAME EXTRA_YAML: starts a bridge over its own server-everything child; sets NAME_URL.
bridge() {
    local name="$1" extra="$2" port
    port=$(free_port)
    printf '%s\nsources:\n  - type: mcp\n    toolkit: Everything\n    transport: {type: stdio, command: "%s stdio"}\n' \
        "$extra" "$EVERYTHING" >"$WORK/$name.yaml"
    "$TARGET/otc-bridge" --config "$WORK/$name.yaml" --listen "127.0.0.1:$port" \
        --log-level warn >"$WORK/$name.log" 2>&1 &
    PIDS+=($!)
    printf -v "${name}_URL" '%s' "http://127.0.0.1:$port/tools/call"
}
bridge on ""
bridge off "metrics: {enabled: false}"
bridge redis "state: redis://127.0.0.1:$REDIS_PORT"

ECHO='{"$schema":"otc://1.0","request":{"tool_id":"Everything.Echo","input":{"message":"hi"}}}'
REPLAY='{"$schema":"otc://1.0","request":{"call_id":"replay","tool_id":"Everything.Echo","input":{"message":"hi"}}}'
wait_ready() {
    for _ in $(seq 1 600); do
        if curl -fsS -o /dev/null -H 'content-type: application/json' -d "$ECHO" "$1" 2>/dev/null; then return 0; fi
        sleep 0.1
    done
    echo "bench: $1 did not come up; see $WORK/*.log" >&2
    exit 1
}
for url in "$on_URL" "$off_URL" "$redis_URL"; do wait_ready "$url"; done
# The first call with the replay id runs; every later one is a replay.
for url in "$on_URL" "$redis_URL"; do
    curl -fsS -o /dev/null -H 'content-type: application/json' -d "$REPLAY" "$url"
done

load() { "$TARGET/otc-loadgen" --expect '"success":true' --duration-secs "$DURATION" "$@"; }
field() { sed -E "s/.* $1=([0-9.]+).*/\1/"; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

echo "bench: $(nproc) cores; ${DURATION}s per run; $ROUNDS alternating rounds"
echo "== 1. metrics on vs off: MCP echo, concurrency 64"
: >"$WORK/on.rps"; : >"$WORK/off.rps"
for round in $(seq 1 "$ROUNDS"); do
    for which in on off; do
        url_var="${which}_URL"
        line=$(load --label "metrics-$which" --url "${!url_var}" --body "$ECHO" --concurrency 64)
        echo "$line"
        echo "$line" | field rps >>"$WORK/$which.rps"
    done
done
ON=$(median <"$WORK/on.rps"); OFF=$(median <"$WORK/off.rps")

echo "== 2. replays of one call_id vs calls that reach the upstream, concurrency 1"
for which in on redis; do
    url_var="${which}_URL"
    load --label "call-$which" --url "${!url_var}" --body "$ECHO" --concurrency 1 | tee -a "$WORK/calls"
    load --label "replay-$which" --url "${!url_var}" --body "$REPLAY" --concurrency 1 | tee -a "$WORK/replays"
done
MEM_P50=$(grep 'replay-on ' "$WORK/replays" | field p50_us)
REDIS_P50=$(grep 'replay-redis ' "$WORK/replays" | field p50_us)
CALL_P50=$(grep 'call-on ' "$WORK/calls" | field p50_us)

echo "== summary"
awk -v on="$ON" -v off="$OFF" 'BEGIN { printf "metrics on: median %.0f calls/s; off: %.0f calls/s; on/off = %.3f (%.1f %% lost)\n", on, off, on/off, 100*(1-on/off) }'
echo "replay p50: memory ${MEM_P50} µs, Redis ${REDIS_P50} µs; the same call reaching the upstream: ${CALL_P50} µs"
