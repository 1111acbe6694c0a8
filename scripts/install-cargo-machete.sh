#!/usr/bin/env bash
# Installs cargo-machete (crates.io, pinned, built with its own lock file) into
# $OTC_CORPUS_DIR/cargo-tools/bin: .ci/run's check for dependencies no crate uses. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."

VERSION=0.9.1
ROOT="${OTC_CORPUS_DIR:-$PWD/.corpus}/cargo-tools"
if [ -x "$ROOT/bin/cargo-machete" ] && "$ROOT/bin/cargo-machete" --version 2>/dev/null | grep -q "$VERSION"; then
    echo "cargo-machete: $VERSION already installed in $ROOT"
    exit 0
fi
echo "cargo-machete: installing $VERSION into $ROOT"
# Unoptimised: crates.io has only its source, so a fresh CI machine compiles it beside the lints,
# and at its own release profile that took 235 CPU-s (126 s of wall on two cores) against 100
# (57 s) at opt-level 0. Scanning this workspace then takes 7.5 s instead of 0.9 (measured on
# two cores), once per CI run.
CARGO_PROFILE_RELEASE_OPT_LEVEL=0 CARGO_PROFILE_RELEASE_LTO=false \
    CARGO_PROFILE_RELEASE_CODEGEN_UNITS=256 CARGO_PROFILE_RELEASE_DEBUG=false \
    cargo install --quiet --locked --root "$ROOT" cargo-machete --version "$VERSION"
