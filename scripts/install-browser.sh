#!/usr/bin/env bash
# Installs what the catalog page's browser tests need (issue 28): Debian's Chromium (the
# packages chromium and chromium-driver, pinned), Playwright for Python (PyPI, pinned, in a venv
# of its own; it drives the system browser through `executable_path`, it never downloads one) and
# axe-core (npm, pinned; injected into the page for the accessibility checks).
#
#   scripts/install-browser.sh          # Chromium system-wide (root), the rest in ./.corpus
#
# Layout: /usr/bin/chromium; $OTC_CORPUS_DIR/browser-venv/bin/python with playwright;
# $OTC_CORPUS_DIR/browser/node_modules/axe-core/axe.min.js. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."

DIR="${OTC_CORPUS_DIR:-.corpus}"
mkdir -p "$DIR"
CHROMIUM_VERSION="156.0.8078.108-1~deb12u1"
PLAYWRIGHT_VERSION=1.65.2
AXE_VERSION=4.14.1

if dpkg-query -W -f='${Version}' chromium 2>/dev/null | grep -qx "$CHROMIUM_VERSION"; then
    echo "browser: chromium $CHROMIUM_VERSION already installed"
elif [ "$(id -u)" = 0 ]; then
    echo "browser: installing chromium $CHROMIUM_VERSION (Debian)"
    install() {
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
            "chromium=$1" "chromium-common=$1" "chromium-driver=$1" fonts-liberation >/dev/null
    }
    # A fresh machine may have no package lists yet.
    if ! install "$CHROMIUM_VERSION" && ! { apt-get update -qq && install "$CHROMIUM_VERSION"; }; then
        # Debian's security archive keeps only the newest Chromium: a security update removes
        # the pinned build. The archive's own build of the same major version is then taken,
        # said loudly, rather than leaving the tests without a browser; update the pin.
        offered="$(apt-cache policy chromium | sed -n 's/^  Candidate: //p')"
        if [ "${offered%%.*}" != "${CHROMIUM_VERSION%%.*}" ]; then
            echo "browser: chromium $CHROMIUM_VERSION is no longer offered, and the archive's $offered is another major version" >&2
            exit 1
        fi
        echo "browser: WARNING chromium $CHROMIUM_VERSION is no longer offered by Debian; installing its successor $offered (update CHROMIUM_VERSION in $0)" >&2
        install "$offered"
    fi
else
    echo "browser: Debian's chromium $CHROMIUM_VERSION is needed; run 'apt-get install chromium=$CHROMIUM_VERSION' as root" >&2
    exit 1
fi

VENV="$DIR/browser-venv"
if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('playwright') != '$PLAYWRIGHT_VERSION')" 2>/dev/null; then
    echo "browser: playwright $PLAYWRIGHT_VERSION already installed in $VENV"
else
    echo "browser: installing playwright $PLAYWRIGHT_VERSION into $VENV"
    python3 -m venv "$VENV"
    # Only the Python package: its browsers are never downloaded (the tests use /usr/bin/chromium).
    "$VENV/bin/pip" install --quiet --disable-pip-version-check "playwright==$PLAYWRIGHT_VERSION"
fi

AXE="$DIR/browser/node_modules/axe-core/package.json"
if [ -f "$AXE" ] && node -e 'process.exit(require(process.argv[1]).version === process.argv[2] ? 0 : 1)' "$(realpath "$AXE")" "$AXE_VERSION"; then
    echo "browser: axe-core $AXE_VERSION already installed"
else
    echo "browser: installing axe-core $AXE_VERSION"
    mkdir -p "$DIR/browser"
    npm install --prefix "$DIR/browser" "axe-core@$AXE_VERSION" --ignore-scripts --no-audit --no-fund --loglevel=error
fi
