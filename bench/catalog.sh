#!/usr/bin/env bash
# The runner bench/memory.sh and bench/scale.sh share: resolves the paths given in the
# environment from the caller's directory, builds the release otc-bridge unless OTC_BRIDGE names
# one, and runs bench/catalog.py with the arguments given (its subcommand first).
#   OTC_BRIDGE, OTC_CORPUS_DIR, BENCH_TIMEOUT_SECS, BENCH_MAX_RSS_MB: see those scripts.
set -euo pipefail
for var in OTC_BRIDGE OTC_CORPUS_DIR; do
  if [ -n "${!var:-}" ]; then export "$var=$(realpath "${!var}")"; fi
done
cd "$(dirname "$0")/.."
if [ -z "${OTC_BRIDGE:-}" ]; then
  cargo build --release -p otc-bridge --bin otc-bridge
fi
exec python3 bench/catalog.py \
  --bridge "${OTC_BRIDGE:-target/release/otc-bridge}" \
  --corpus-dir "${OTC_CORPUS_DIR:-.corpus}" \
  --timeout "${BENCH_TIMEOUT_SECS:-600}" \
  --max-rss-mb "${BENCH_MAX_RSS_MB:-0}" \
  "$@"
