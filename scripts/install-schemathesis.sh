#!/usr/bin/env bash
# Installs schemathesis (PyPI, pinned with all its dependencies in
# scripts/schemathesis-requirements.txt) into $OTC_CORPUS_DIR/schemathesis-venv, a venv of its
# own: schemathesis's dependencies must not meet the oxp client's. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."

DIR="${OTC_CORPUS_DIR:-.corpus}"
mkdir -p "$DIR"
VENV="$DIR/schemathesis-venv"
ST_VERSION=4.32.5

if [ -x "$VENV/bin/st" ] && "$VENV/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('schemathesis') != '$ST_VERSION')" 2>/dev/null; then
    echo "schemathesis: $ST_VERSION already installed in $VENV"
else
    echo "schemathesis: installing $ST_VERSION into $VENV"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet --disable-pip-version-check -r scripts/schemathesis-requirements.txt
fi
