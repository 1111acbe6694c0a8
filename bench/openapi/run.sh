#!/usr/bin/env bash
# Per-call forwarding overhead of the OpenAPI adapter versus calling the upstream directly.
#
# Runs the criterion benchmark adapters/benches/openapi_call.rs: one axum upstream on loopback,
# the same GET /items/{id}?q=… sent (a) with a plain reqwest client and (b) through
# OpenApiAdapter::call. The adapter's overhead is the difference of the two medians; the
# target (issue 3) is under 100 µs at the median.
#
# Usage: bench/openapi/run.sh [criterion args, e.g. --measurement-time 10]
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo bench -p otc-adapters --bench openapi_call -- "$@"
# Criterion's "time:" line is the slope estimate; the medians are in its estimates.json files.
median_us() {
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["median"]["point_estimate"] / 1000)' \
    "target/criterion/$1/new/estimates.json"
}
direct=$(median_us "direct reqwest GET + JSON")
adapter=$(median_us "OpenApiAdapter__call")
awk -v d="$direct" -v a="$adapter" \
  'BEGIN { printf "median: direct %.1f µs, through the adapter %.1f µs, overhead %.1f µs\n", d, a, a - d }'
