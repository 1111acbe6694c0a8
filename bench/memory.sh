#!/usr/bin/env bash
# Memory and start-up of the release otc-bridge on large catalogs (issue 9). Prints:
# - `otc-bridge tools --openapi <GitHub's REST description>`: wall time and peak RSS of 3 runs
#   (/usr/bin/time -v) and their median; targets < 0.6 s and < 120 MB;
# - the bridge serving (a) GitHub's description (13 MB, ~1,223 operations) and (b) the 63
#   documents of the shared corpus at once, one source each: tools served, `GET /tools` JSON bytes
#   (and gzip bytes on the wire when the server compresses), VmRSS and VmHWM after listing and two
#   calls, RSS ÷ JSON, and the ready time (spawn to the first 200 from `GET /health`); targets:
#   RSS ≤ 4 × JSON, GitHub < 50 MB, the 63 documents < 350 MB.
# Every source gets base_url http://127.0.0.1:9/, so calls fail on loopback and nothing leaves the
# machine. How one run is measured: bench/catalog.py.
#
# Usage: bench/memory.sh [--strict]     (--strict: exit 3 when a target is missed)
#   OTC_BRIDGE=path/to/otc-bridge       the binary to measure (default: target/release/otc-bridge,
#                                       built first with cargo when OTC_BRIDGE is unset)
#   OTC_CORPUS_DIR=.corpus              GitHub's description (scripts/fetch-corpus.sh fills it)
#   OTC_OPENAPI_CORPUS_DIR=../shared/corpus/openapi   the 63 documents (manifest.json)
#   BENCH_TIMEOUT_SECS=600              limit for each bridge run
#   BENCH_MAX_RSS_MB=N                  kill a bridge whose RSS passes N MB (default: 3/4 of the
#                                       memory available when it starts)
set -euo pipefail
# Taken from the caller's directory; by default the shared corpus beside the project's root.
openapi_dir="$(realpath -m "${OTC_OPENAPI_CORPUS_DIR:-$(dirname "$0")/../../shared/corpus/openapi}")"
exec "$(dirname "$0")/catalog.sh" memory --openapi-dir "$openapi_dir" "$@"
