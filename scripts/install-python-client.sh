#!/usr/bin/env bash
# Installs the standard's own Python client (PyPI `oxp`, pinned) into a virtual environment at
# $OTC_CORPUS_DIR/venv, for the interop tests. Idempotent.
set -euo pipefail

DIR="${OTC_CORPUS_DIR:-.corpus}"
VENV="$DIR/venv"
OXP_VERSION=0.1.1

if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('oxp') != '$OXP_VERSION')" 2>/dev/null; then
    echo "python: oxp==$OXP_VERSION already installed in $VENV"
    exit 0
fi
echo "python: installing oxp==$OXP_VERSION into $VENV"
python3 -m venv "$VENV"
"$VENV/bin/pip" install --quiet --disable-pip-version-check "oxp==$OXP_VERSION"
