#!/usr/bin/env bash
# The expansion bombs of issue 9 (item 3) through the release `otc-bridge tools`: each must be
# refused or cut with a diagnostic in < 1 s and < 100 MB peak RSS. Prints, per bomb, its size, the
# exit status, the wall time and the peak RSS (from /usr/bin/time -v), and the first diagnostics.
# The shapes are those of mappings/tests/it/bombs.rs:
# - dag-5k6: 13 operations over a `$ref` DAG 20 levels deep, each level referencing the next twice;
# - dag-20k: the same with 90 operations;
# - yaml-aliases: 20,000 aliases of one 20,000-item anchor.
#
# Usage: bench/bombs.sh            (builds otc-bridge in release first)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -p otc-bridge --bin otc-bridge
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
python3 - "$dir" <<'PY'
import sys
d = sys.argv[1]
def dag(levels, ops):
    s = [f'"L{n}":{{"type":"object","properties":{{"a":{{"$ref":"#/components/schemas/L{n+1}"}},"b":{{"$ref":"#/components/schemas/L{n+1}"}}}}}}' for n in range(levels)]
    s.append(f'"L{levels}":{{"type":"string"}}')
    ref = '{"$ref":"#/components/schemas/L0"}'
    p = [f'"/p{i}":{{"post":{{"operationId":"op{i}","requestBody":{{"content":{{"application/json":{{"schema":{ref}}}}}}},"responses":{{"200":{{"description":"ok","content":{{"application/json":{{"schema":{ref}}}}}}}}}}}}}' for i in range(ops)]
    return '{"openapi":"3.0.0","info":{"title":"Bomb","version":"1"},"servers":[{"url":"https://example.com"}],"paths":{' + ",".join(p) + '},"components":{"schemas":{' + ",".join(s) + '}}}'
open(f"{d}/dag-5k6.json", "w").write(dag(20, 13))
open(f"{d}/dag-20k.json", "w").write(dag(20, 90))
open(f"{d}/yaml-aliases.yaml", "w").write(
    "openapi: 3.0.0\ninfo: {title: Bomb, version: '1'}\npaths: {}\nx-a: &a ["
    + ",".join(["abcdefghij"] * 20000) + "]\nx-b: [" + ",".join(["*a"] * 20000) + "]\n")
PY
printf '%-14s %9s %6s %9s %12s\n' bomb bytes exit seconds peak_rss_kb
for bomb in dag-5k6.json dag-20k.json yaml-aliases.yaml; do
  set +e
  /usr/bin/time -v -o "$dir/time.txt" target/release/otc-bridge tools --openapi "$dir/$bomb" \
    >"$dir/out.json" 2>"$dir/err.txt"
  status=$?
  set -e
  secs=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$dir/time.txt")
  rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$dir/time.txt")
  printf '%-14s %9s %6s %9s %12s\n' "$bomb" "$(stat -c %s "$dir/$bomb")" "$status" "$secs" "$rss"
  head -c 300 "$dir/err.txt" | sed 's/^/    /'
  echo
done
