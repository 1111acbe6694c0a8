#!/usr/bin/env bash
# Runs every test of otc-bridge, installing first what the tests need (scripts/install-test-deps.sh:
# pinned registry packages, the OpenAPI corpus, third-party MCP servers, the Python OTC and MCP
# clients, the MCP conformance suite with its Node 22, the OAuth authorization server, Redis, the
# search model, schemathesis, the catalog page's browser), so nothing is skipped.
#
#   scripts/test.sh
#
# The official spec files are read from $OTC_SPEC_DIR (default: ../shared/spec when it exists).
set -euo pipefail
cd "$(dirname "$0")/.."

export OTC_CORPUS_DIR="${OTC_CORPUS_DIR:-$PWD/.corpus}"
if [ -z "${OTC_SPEC_DIR:-}" ] && [ -d ../shared/spec ]; then
    export OTC_SPEC_DIR="$(cd ../shared/spec && pwd)"
fi
if [ -n "${OTC_SPEC_DIR:-}" ]; then
    echo "spec: validating against $OTC_SPEC_DIR"
else
    # Loud on purpose: without the spec files the suite still passes (a fresh clone must), so
    # this banner and otc-fixtures' build warning are the only signs of what did not run.
    cat >&2 <<'BANNER'
##########################################################################################
#  OTC_SPEC_DIR is not set and ../shared/spec does not exist:                            #
#  the SPEC-CONFORMANCE CHECKS WILL NOT RUN (bodies and definitions validated against    #
#  the official OTC/OXP documents, the spec's examples round-tripped).                   #
#  Point OTC_SPEC_DIR at the official spec files to run them (CI fails without them).    #
##########################################################################################
BANNER
fi

# How long each step took, on stderr (the runner's summary stays the last output on stdout).
phase_started=$SECONDS
phase() {
    echo "test.sh: $1 took $((SECONDS - phase_started)) s" >&2
    phase_started=$SECONDS
}

# What the tests need is installed beside the builds: on a fresh machine the downloads (about ten
# minutes on a two-core VM) wait on the network, the builds on the CPU, and nothing is built from
# them. An interrupted run may leave a download going; the next run's installer waits for it. The
# installer's output is shown, and its status checked, once the build is done; the release
# corpus test below waits for it before it runs. (The installer holds a lock: when .ci/run's
# earlier run of it is still going, this one waits for it, then finds everything in place.)
install_log="$(mktemp)"
install_status="$(mktemp -u)"
(
    status=0
    scripts/install-test-deps.sh >"$install_log" 2>&1 || status=$?
    echo "$status" >"$install_status.tmp" && mv "$install_status.tmp" "$install_status"
) &
install_pid=$!
# Waits until the installer has finished; fails when it failed.
installed() {
    until [ -e "$install_status" ]; do sleep 1; done
    [ "$(cat "$install_status")" = 0 ]
}

# Every document of the real-world OpenAPI corpus (about 2,600), in release: debug builds only
# sample it (see mappings/tests/it/corpus.rs). Built and run beside the debug build below, in its
# own target directory (two cargo processes on one directory wait for each other's lock): a build
# on two cores leaves a core idle for long stretches (one large crate, then linking), and this
# fills them. It runs once the corpus is installed. Its output is shown, and its status checked,
# before the test runner starts. At opt-level 1 rather than 3: on two cores the build took 360
# CPU-s and the run 178 (114 s), against 474 and 134 (90 s) at 3, 70 CPU-s less in all, which the
# debug build beside it gets; the run still ends before the test runner starts.
corpus_log="$(mktemp)"
# Not linted (under .ci/run the debug build is): linting otc-mappings again would only cost time.
corpus_test() {
    env -u RUSTC_WORKSPACE_WRAPPER -u CLIPPY_ARGS CARGO_PROFILE_RELEASE_DEBUG=false CARGO_PROFILE_RELEASE_OPT_LEVEL=1 \
        CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}/corpus-release" \
        cargo test --release --locked -p otc-mappings --test it "$@"
}
(
    corpus_test --no-run
    if ! installed; then
        echo "the release corpus test did not run: installing what the tests need failed" >&2
        exit 1
    fi
    corpus_test -- corpus
) >"$corpus_log" 2>&1 &
corpus_pid=$!
trap 'kill "$corpus_pid" "$install_pid" 2>/dev/null || true' EXIT

# The example servers are spawned by the tests as real child processes. Run alone, the tests
# rebuild them themselves (otc_fixtures::workspace_bin), so a stale binary is never tested; here
# everything is built first and the tests are told so (OTC_BINARIES_BUILT), so they only look the
# binaries up instead of building the bridge again with one package's features.
scripts/build-tests.sh
export OTC_BINARIES_BUILT=1
phase "building"
wait "$install_pid" || true
cat "$install_log"
if ! installed; then
    echo "installing what the tests need failed (above)" >&2
    exit 1
fi
phase "installing (beside the build), what was left of it"
cargo test --workspace --doc --locked
phase "doc tests"
# Contract test: schemathesis against the real bridge (demo sources), driven by the standard's own
# OpenAPI documents; skipped loudly without OTC_SPEC_DIR (and failing under CI). Before the test
# runner, so the runner's summary stays the last output; a failure still fails this script.
schemathesis_status=0
scripts/schemathesis.sh || schemathesis_status=$?
phase "schemathesis"
corpus_status=0
wait "$corpus_pid" || corpus_status=$?
cat "$corpus_log"
phase "waiting for the release corpus test (started with the build)"
if [ "$corpus_status" -ne 0 ]; then
    echo "the release corpus test failed (exit $corpus_status): see its output above" >&2
    exit "$corpus_status"
fi
if cargo nextest --version >/dev/null 2>&1; then
    cargo nextest run --workspace --locked --no-fail-fast
else
    cargo test --workspace --locked --no-fail-fast
fi
if [ "$schemathesis_status" -ne 0 ]; then
    echo "scripts/schemathesis.sh failed (exit $schemathesis_status): see its report above" >&2
    exit "$schemathesis_status"
fi
