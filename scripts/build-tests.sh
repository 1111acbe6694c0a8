#!/usr/bin/env bash
# Builds what the tests run, once, for scripts/test.sh and scripts/schemathesis.sh alike (the
# same command in both, so the second is a no-op): every library, binary, test and example of the
# workspace. The benches are not built: no test runs them (clippy checks that they compile), and
# linking six of them was about a minute of a two-core CI run. `-p otc-bridge` alone would resolve
# the workspace's features differently and rebuild the bridge (73 s of CI on two cores).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --workspace --lib --bins --tests --examples --locked
