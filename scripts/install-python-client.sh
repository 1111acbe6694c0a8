#!/usr/bin/env bash
# Installs the Python clients the interop tests drive into a virtual environment at
# $OTC_CORPUS_DIR/venv, pinned: the standard's own OTC client (PyPI `oxp`, for
# tests/interop/oxp_client.py), the official MCP SDK (PyPI `mcp`, for tests/interop/mcp_client.py)
# and the official Prometheus client (PyPI `prometheus-client`, whose parser reads /metrics).
# Idempotent: nothing is installed when both are already there at their pinned versions.
set -euo pipefail

DIR="${OTC_CORPUS_DIR:-.corpus}"
VENV="$DIR/venv"
OXP_VERSION=0.1.1
MCP_VERSION=2.3.0
# The official Prometheus client's text-format parser, for the /metrics test.
PROMETHEUS_VERSION=0.26.0

if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c "
import importlib.metadata as m, sys
sys.exit(m.version('oxp') != '$OXP_VERSION' or m.version('mcp') != '$MCP_VERSION'
         or m.version('prometheus-client') != '$PROMETHEUS_VERSION')" 2>/dev/null; then
    echo "python: oxp==$OXP_VERSION, mcp==$MCP_VERSION and prometheus-client==$PROMETHEUS_VERSION already installed in $VENV"
    exit 0
fi
echo "python: installing oxp==$OXP_VERSION, mcp==$MCP_VERSION and prometheus-client==$PROMETHEUS_VERSION into $VENV"
python3 -m venv "$VENV"
"$VENV/bin/pip" install --quiet --disable-pip-version-check "oxp==$OXP_VERSION" "mcp==$MCP_VERSION" \
    "prometheus-client==$PROMETHEUS_VERSION"
