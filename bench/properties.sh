#!/usr/bin/env bash
# The long run of the property tests: otc-mappings' (mappings/tests/it/properties.rs: the tool-id
# grammar, dialect detection, call-body parsing and the OpenAPI loader on mutated real documents)
# and the HTTP edge's (tests/tests/it/properties.rs: arbitrary bytes, JSON and near-valid
# envelopes through the real router).
#
# `cargo test` runs a bounded number of cases (256 per property, fewer for the corpus documents);
# this script raises PROPTEST_CASES (default 100000; the corpus properties divide it by 4, GitHub's
# 11 MB description by 5000) and builds in release, so the mapper runs at the speed it is shipped
# at. With OTC_CORPUS_DIR set (scripts/fetch-corpus.sh), corpus documents are mutated too.
# A failure prints the minimal failing input; keep it as a regression test (issue_8_...).
# OTC_PROPERTY_DEADLINE_SECS (default 300) is the per-case watchdog that reports a hang.
#
# Usage: bench/properties.sh [CASES] [test name filter, default: properties]
set -euo pipefail
cd "$(dirname "$0")/.."
export PROPTEST_CASES="${1:-100000}"
filter="${2:-properties}"
cargo test --release -p otc-mappings --test it -- "$filter" --nocapture
cargo test --release -p otc-tests --test it -- "$filter" --nocapture
