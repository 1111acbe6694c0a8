#!/usr/bin/env bash
# Builds what the tests run, once, for scripts/test.sh and scripts/schemathesis.sh alike (the
# same command in both, so the second is a no-op): every library, binary, test and example of the
# workspace. The benches are not built (no test runs them), except when clippy-driver compiles the
# workspace (.ci/run: the lints ride on this build), so that they are linted. `-p otc-bridge` alone would resolve
# the workspace's features differently and rebuild the bridge (73 s of CI on two cores).
set -euo pipefail
cd "$(dirname "$0")/.."
targets=(--lib --bins --tests --examples)
if [[ "${RUSTC_WORKSPACE_WRAPPER:-}" == *clippy-driver ]]; then
    targets=(--all-targets)
fi
cargo build --workspace "${targets[@]}" --locked
