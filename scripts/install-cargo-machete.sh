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
cargo install --quiet --locked --root "$ROOT" cargo-machete --version "$VERSION"
