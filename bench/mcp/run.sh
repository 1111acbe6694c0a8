#!/usr/bin/env bash
# Throughput and latency of MCP calls through otc-bridge, side by side with mcpo (PyPI), over the
# same upstream: @modelcontextprotocol/server-everything's `echo` tool over stdio.
#
#   bench/mcp/run.sh                       # concurrency 1, 8, 64; 5 s each after 1 s warm-up
#   DURATION=10 LEVELS="1 64" bench/mcp/run.sh
#   BASELINE=/path/to/old/otc-bridge bench/mcp/run.sh   # also an older build, in the same run
#   AUDIT=1 bench/mcp/run.sh               # also this build with the audit trail on (a file)
#   ROUNDS=5 AUDIT=1 LEVELS=64 bench/mcp/run.sh   # bridges alternated over 5 rounds; then the
#                                          # median of each round's ratio to this build
#   TOGETHER=1 ROUNDS=6 AUDIT=1 LEVELS=64 bench/mcp/run.sh   # the bridges loaded at the same
#                                          # time, each by its own clients: a ratio under the
#                                          # same conditions (the machine's drift cancels out)
#
# Installs what it needs (pinned): the MCP server (scripts/install-mcp-servers.sh) and mcpo in a
# virtualenv under $OTC_CORPUS_DIR/bench. Builds otc-bridge and otc-loadgen in release mode.
# Both servers listen on loopback; the load generator (bench/loadgen) keeps one connection per
# client. Prints one line per (server, concurrency): calls/s and p50/p90/p99 latency in µs, and
# for otc-bridge (and the baseline) its own CPU time per call. Then, as `pipe`, the same server
# alone, its `echo` called over its own stdio pipe with as many requests outstanding as there are
# clients (otc-loadgen --mcp-stdio): the limit any bridge in front of it works against (issue 23:
# the bridge at >= 75 % of it), with the bridge's share of it.
set -euo pipefail
cd "$(dirname "$0")/../.."

export OTC_CORPUS_DIR="${OTC_CORPUS_DIR:-$PWD/.corpus}"
DURATION="${DURATION:-5}"
LEVELS="${LEVELS:-1 8 64}"
ROUNDS="${ROUNDS:-1}"
MCPO_VERSION=0.0.20

scripts/install-mcp-servers.sh >/dev/null
EVERYTHING="$OTC_CORPUS_DIR/mcp/everything/node_modules/.bin/mcp-server-everything"
VENV="$OTC_CORPUS_DIR/bench/mcpo-$MCPO_VERSION"
if [ ! -x "$VENV/bin/mcpo" ]; then
    echo "bench: installing mcpo==$MCPO_VERSION into $VENV"
    python3 -m venv "$VENV"
    # mcpo 0.0.20 predates mcp 2.x and FastAPI's stricter constructor: pin what it runs with.
    "$VENV/bin/pip" install --quiet "mcpo==$MCPO_VERSION" "mcp==1.30.0" "fastapi==0.116.1" "starlette==0.47.3"
fi
cargo build --quiet --release -p otc-bridge -p otc-loadgen
TARGET="${CARGO_TARGET_DIR:-$PWD/target}/release"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
BRIDGE_PORT=$(free_port)
MCPO_PORT=$(free_port)
PIDS=()
cleanup() { for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "${AUDIT_DIR:-}"; }
trap cleanup EXIT

# The bridge reads its filter from --log-level or OTC_LOG (RUST_LOG is not read): measured at
# the default, info, as users run it. OTC_LOG=warn shows what logging costs.
"$TARGET/otc-bridge" --listen "127.0.0.1:$BRIDGE_PORT" \
    --mcp "'$EVERYTHING' stdio" --toolkit Everything >/tmp/otc-bench-bridge.log 2>&1 &
PIDS+=($!)
BRIDGE_PID=$!
if [ -n "${BASELINE:-}" ]; then
    BASELINE_PORT=$(free_port)
    "$BASELINE" --listen "127.0.0.1:$BASELINE_PORT" \
        --mcp "'$EVERYTHING' stdio" --toolkit Everything >/tmp/otc-bench-baseline.log 2>&1 &
    PIDS+=($!)
    BASELINE_PID=$!
fi
if [ -n "${AUDIT:-}" ]; then
    # The same build with every call written to a hash-chained audit file, in the same run.
    AUDIT_PORT=$(free_port)
    AUDIT_DIR=$(mktemp -d)
    printf 'audit: {file: %s/trail.jsonl}\n' "$AUDIT_DIR" >"$AUDIT_DIR/bridge.yaml"
    "$TARGET/otc-bridge" --listen "127.0.0.1:$AUDIT_PORT" --config "$AUDIT_DIR/bridge.yaml" \
        --mcp "'$EVERYTHING' stdio" --toolkit Everything >/tmp/otc-bench-audit.log 2>&1 &
    PIDS+=($!)
    AUDIT_PID=$!
fi
"$VENV/bin/mcpo" --host 127.0.0.1 --port "$MCPO_PORT" --log-level WARNING -- "$EVERYTHING" stdio \
    >/tmp/otc-bench-mcpo.log 2>&1 &
PIDS+=($!)

# Waits (up to 60 s) until a POST of $2 to $1 answers 200.
wait_ready() {
    for _ in $(seq 1 600); do
        if curl -fsS -o /dev/null -H 'content-type: application/json' -d "$2" "$1" 2>/dev/null; then return 0; fi
        sleep 0.1
    done
    echo "bench: $1 did not come up; see /tmp/otc-bench-*.log" >&2
    exit 1
}
BRIDGE_URL="http://127.0.0.1:$BRIDGE_PORT/tools/call"
# No call_id: a repeated one is answered from the idempotency store, not by the upstream.
BRIDGE_BODY='{"$schema":"otc://1.0","request":{"tool_id":"Everything.Echo","input":{"message":"hi"}}}'
MCPO_URL="http://127.0.0.1:$MCPO_PORT/echo"
MCPO_BODY='{"message":"hi"}'
wait_ready "$BRIDGE_URL" "$BRIDGE_BODY"
wait_ready "$MCPO_URL" "$MCPO_BODY"
if [ -n "${BASELINE:-}" ]; then
    BASELINE_URL="http://127.0.0.1:$BASELINE_PORT/tools/call"
    wait_ready "$BASELINE_URL" "$BRIDGE_BODY"
fi
if [ -n "${AUDIT:-}" ]; then
    AUDIT_URL="http://127.0.0.1:$AUDIT_PORT/tools/call"
    wait_ready "$AUDIT_URL" "$BRIDGE_BODY"
fi

# The calls/s of a load generator's result line.
rps_of() { sed -n 's/.* rps=\([0-9]*\).*/\1/p' <<<"$1"; }
declare -A rps ceiling

# CPU seconds (user + system, in clock ticks) a process has used.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# CPU microseconds per call from clock ticks.
us_per_call() { echo $(( $1 * 1000000 / $(getconf CLK_TCK) / ($2 > 0 ? $2 : 1) )); }
# One load run against a bridge, with the CPU time per call of the bridge itself (steadier than
# calls/s on a shared machine, and what the bridge adds to each call), of its MCP child and of
# the load generator. All three share the machine's cores, so the last two bound what any bridge
# could reach: `ceiling` is the calls/s of a bridge that cost nothing, the cores divided by the
# child's and the load generator's CPU per call.
measure_bridge() {
    local label="$1" url="$2" pid="$3" child before after child_before child_after line calls
    local lg_before lg_after
    child=$(pgrep -P "$pid" | head -1)
    before=$(cpu_ticks "$pid")
    child_before=$(cpu_ticks "$child")
    lg_before=$(awk '{print $16 + $17}' /proc/$$/stat)
    line=$("$TARGET/otc-loadgen" --label "$label" --url "$url" --body "$BRIDGE_BODY" \
        --expect '"success":true' --concurrency "$c" --duration-secs "$DURATION")
    # The load generator, a waited-for child of this shell: its CPU lands in the shell's
    # cumulative children's times (fields 16 and 17).
    lg_after=$(awk '{print $16 + $17}' /proc/$$/stat)
    after=$(cpu_ticks "$pid")
    child_after=$(cpu_ticks "$child")
    calls=$(sed -n 's/.* calls=\([0-9]*\).*/\1/p' <<<"$line")
    rps[$label]=$(rps_of "$line")
    local child_us lg_us
    child_us=$(us_per_call $((child_after - child_before)) "$calls")
    lg_us=$(us_per_call $((lg_after - lg_before)) "$calls")
    ceiling[$label]=$(( $(nproc) * 1000000 / (child_us + lg_us > 0 ? child_us + lg_us : 1) ))
    echo "$line bridge_cpu_us_per_call=$(us_per_call $((after - before)) "$calls") child_cpu_us_per_call=$child_us loadgen_cpu_us_per_call=$lg_us ceiling=${ceiling[$label]}"
}

# The bridges of a round (label, URL, pid each) loaded at the same time, each by its own
# clients; one line per bridge, as measure_bridge prints it.
measure_together() {
    local bridge label url pid lines=() befores=() loads=() i calls
    for bridge in "$@"; do
        read -r label url pid <<<"$bridge"
        befores+=("$(cpu_ticks "$pid")")
        lines+=("$(mktemp)")
        "$TARGET/otc-loadgen" --label "$label" --url "$url" --body "$BRIDGE_BODY" \
            --expect '"success":true' --concurrency "$c" --duration-secs "$DURATION" >"${lines[-1]}" &
        loads+=($!)
    done
    wait "${loads[@]}"
    i=0
    for bridge in "$@"; do
        read -r label url pid <<<"$bridge"
        line=$(<"${lines[i]}")
        rm -f "${lines[i]}"
        calls=$(sed -n 's/.* calls=\([0-9]*\).*/\1/p' <<<"$line")
        rps[$label]=$(rps_of "$line")
        echo "$line together bridge_cpu_us_per_call=$(( ($(cpu_ticks "$pid") - befores[i]) * 1000000 / $(getconf CLK_TCK) / (calls > 0 ? calls : 1) ))"
        i=$((i + 1))
    done
}

echo "bench: echo via server-everything over stdio; ${DURATION}s per run; $(nproc) cores; $ROUNDS round(s)${TOGETHER:+; bridges loaded together}"
# The bridges measured, besides this build: each round runs them in another order, so that no
# build always runs first (on a shared machine, load drifts over a minute).
others=()
[ -n "${BASELINE:-}" ] && others+=("baseline $BASELINE_URL $BASELINE_PID")
[ -n "${AUDIT:-}" ] && others+=("otc-bridge+audit $AUDIT_URL $AUDIT_PID")
# The median of integers.
median() { printf '%s\n' "$@" | sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
for c in $LEVELS; do
    declare -A ratios=()
    for round in $(seq 1 "$ROUNDS"); do
        bridges=("otc-bridge $BRIDGE_URL $BRIDGE_PID" "${others[@]}")
        if (( round % 2 == 0 )); then
            # Every other round in reverse order.
            for (( i = 0, j = ${#bridges[@]} - 1; i < j; i++, j-- )); do
                swap="${bridges[i]}"; bridges[i]="${bridges[j]}"; bridges[j]="$swap"
            done
        fi
        if [ -n "${TOGETHER:-}" ]; then
            measure_together "${bridges[@]}"
        else
            for bridge in "${bridges[@]}"; do
                # shellcheck disable=SC2086 # label, URL and pid, split on purpose
                measure_bridge $bridge
            done
        fi
        for other in "${others[@]}"; do
            label="${other%% *}"
            ratios[$label]+=" $(( ${rps[$label]} * 1000 / (${rps[otc-bridge]} > 0 ? ${rps[otc-bridge]} : 1) ))"
        done
    done
    if (( ROUNDS > 1 )); then
        for label in "${!ratios[@]}"; do
            # shellcheck disable=SC2086 # one number per round
            m=$(median ${ratios[$label]})
            echo "ratio c=$c $label/otc-bridge calls/s: median $((m / 10)).$((m % 10))% over $ROUNDS rounds (per round, ‰:${ratios[$label]})"
        done
    fi
    "$TARGET/otc-loadgen" --label mcpo --url "$MCPO_URL" --body "$MCPO_BODY" \
        --expect 'Echo: hi' --concurrency "$c" --duration-secs "$DURATION"
    pipe=$("$TARGET/otc-loadgen" --label pipe --mcp-stdio "'$EVERYTHING' stdio" \
        --body '{"name":"echo","arguments":{"message":"hi"}}' --expect 'Echo: hi' \
        --concurrency "$c" --duration-secs "$DURATION")
    limit=$(rps_of "$pipe")
    shares=""
    for label in "${!rps[@]}"; do
        shares+=" ${label}_share=$(( ${rps[$label]} * 100 / (limit > 0 ? limit : 1) ))%"
    done
    # The most any bridge could reach of the pipe on this machine (see measure_bridge).
    [ -n "${ceiling[otc-bridge]:-}" ] && shares+=" ceiling_share=$(( ${ceiling[otc-bridge]} * 100 / (limit > 0 ? limit : 1) ))%"
    echo "$pipe$shares"
done
