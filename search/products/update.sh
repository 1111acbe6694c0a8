#!/usr/bin/env bash
# Regenerates products.txt: the names of products and services people name in requests ("a
# HubSpot deal", "my Fitbit", "on WhatsApp"), from the brand list of the npm package simple-icons
# (CC0-1.0: 3,400 brands with their aliases, kept up to date by its community). Search reads it to
# tell a product the catalog does not serve from a place, a person or a title it has never seen
# ("in Delhi", "book Ana", "The Crown"): see search/src/products.rs. The package is downloaded
# without running anything from it; only its data file is read.
#
#   search/products/update.sh
set -euo pipefail
cd "$(dirname "$0")"
VERSION=16.37.0
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "simple-icons@$VERSION" >/dev/null && tar xzf simple-icons-*.tgz)
python3 - "$work/package/data/simple-icons.json" "$VERSION" > products.txt <<'PY'
import json, re, sys
data = json.load(open(sys.argv[1]))
icons = data if isinstance(data, list) else data["icons"]
names = set()
for icon in icons:
    for name in [icon["title"], *(icon.get("aliases") or {}).get("aka", [])]:
        name = " ".join(name.split())
        # Names a request can spell: letters, digits and a few joiners; at most three words.
        if re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9 .&+'-]*", name) and len(name.split()) <= 3 and len(name) >= 2:
            names.add(name)
print(f"# simple-icons {sys.argv[2]} (CC0-1.0): brand names and aliases, one per line; see update.sh")
for name in sorted(names, key=lambda n: (n.lower(), n)):
    print(name)
PY
echo "products.txt: $(grep -vc '^#' products.txt) names from simple-icons $VERSION"
