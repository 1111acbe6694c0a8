#!/usr/bin/env bash
# Hostile files through the release `otc-bridge`, each as every kind of file that takes it: an
# OpenAPI document (`tools --openapi`), a configuration (`check --config`), an MCP host file
# (`import`), a lockfile (`lock --lock`, and `--lock` when serving) and a `diff` side. Each must be
# refused (or cut with a diagnostic) in < 0.4 s and < 100 MB peak RSS. Prints, per file and
# command, its size, the exit status, the wall time and the peak RSS (from /usr/bin/time -v), a
# verdict, and the first line of what the bridge said.
#
# The shapes:
# - dag-5k6, dag-20k: the `$ref` DAGs of issue 9 (mappings/tests/it/bombs.rs): 13 and 90
#   operations over a DAG 20 levels deep, each level referencing the next twice;
# - aliases-doc: 20,000 aliases of one 20,000-item anchor in a document (issue 9);
# - aliases: 5,000 aliases of a 5,000-item anchor in a configuration's `sources` (70 KB; issue 25);
# - deep-flow-50k/100k: `[` nested 50,000 and 100,000 times (100 and 200 KB) in a configuration,
#   and in a document;
# - deep-block-50k: `- ` nested 50,000 times, YAML's block style;
# - deep-json-100k: a host file whose `mcpServers` is an array nested 100,000 times;
# - fifo: a FIFO nobody writes; zero: a symlink to /dev/zero.
#
# Usage: bench/bombs.sh            (builds otc-bridge in release first)
set -euo pipefail
cd "$(dirname "$0")/.."
# Wherever the target directory is: the path cargo reports for the binary it built.
bin=$(cargo build --release -p otc-bridge --bin otc-bridge --message-format=json-render-diagnostics |
  python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable"):
        print(m["executable"])')
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
def write(name, text):
    open(f"{d}/{name}", "w").write(text)
doc = "openapi: 3.0.0\ninfo: {title: Bomb, version: '1'}\npaths: {}\n"
write("dag-5k6.json", dag(20, 13))
write("dag-20k.json", dag(20, 90))
write("aliases-doc.yaml", doc + "x-a: &a [" + ",".join(["abcdefghij"] * 20000) + "]\nx-b: [" + ",".join(["*a"] * 20000) + "]\n")
write("aliases.yaml", "sources:\n  - &a [" + ",".join(["abcdefghij"] * 5000) + "]\n  - [" + ",".join(["*a"] * 5000) + "]\n")
for n, label in [(50000, "50k"), (100000, "100k")]:
    write(f"deep-flow-{label}.yaml", "sources: " + "[" * n + "]" * n + "\n")
    write(f"deep-flow-{label}-doc.yaml", doc + "x-deep: " + "[" * n + "]" * n + "\n")
write("deep-block-50k.yaml", "sources:\n" + "- " * 50000 + "x\n")
write("deep-block-50k-doc.yaml", doc + "x-deep:\n" + "- " * 50000 + "x\n")
write("deep-json-100k.json", '{"mcpServers": ' + "[" * 100000 + "]" * 100000 + "}\n")
write("export.json", '{"tools": []}\n')
PY
mkfifo "$dir/fifo.yaml"
ln -s /dev/zero "$dir/zero.yaml"

# Each case: a label, the file, then the command with FILE where the file goes.
cases=(
  "document|dag-5k6.json|tools --openapi FILE"
  "document|dag-20k.json|tools --openapi FILE"
  "document|aliases-doc.yaml|tools --openapi FILE"
  "document|deep-flow-50k-doc.yaml|tools --openapi FILE"
  "document|deep-flow-100k-doc.yaml|tools --openapi FILE"
  "document|deep-block-50k-doc.yaml|tools --openapi FILE"
  "document|fifo.yaml|tools --openapi FILE"
  "document|zero.yaml|tools --openapi FILE"
  "config|aliases.yaml|check --config FILE"
  "config|deep-flow-50k.yaml|check --config FILE"
  "config|deep-flow-100k.yaml|check --config FILE"
  "config|deep-block-50k.yaml|check --config FILE"
  "config|deep-json-100k.json|check --config FILE"
  "config|fifo.yaml|check --config FILE"
  "config|zero.yaml|check --config FILE"
  "serve config|aliases.yaml|--config FILE --listen 127.0.0.1:0"
  "host file|aliases.yaml|import FILE"
  "host file|deep-json-100k.json|import FILE"
  "host file|fifo.yaml|import FILE"
  "host file|zero.yaml|import FILE"
  "lockfile|deep-json-100k.json|lock --lock FILE"
  "lockfile|fifo.yaml|lock --lock FILE"
  "lockfile|zero.yaml|lock --lock FILE"
  "serve lock|fifo.yaml|--lock FILE --listen 127.0.0.1:0"
  "diff side|aliases.yaml|diff FILE $dir/export.json"
  "diff side|deep-flow-100k.yaml|diff FILE $dir/export.json"
  "diff side|deep-json-100k.json|diff FILE $dir/export.json"
  "diff side|fifo.yaml|diff FILE $dir/export.json"
  "diff side|zero.yaml|diff $dir/export.json FILE"
)

printf '%-12s %-24s %-17s %9s %5s %8s %9s  %s\n' kind file command bytes exit seconds rss_kb verdict
failed=0
for case in "${cases[@]}"; do
  IFS='|' read -r kind file command <<<"$case"
  args="${command//FILE/$dir/$file}"
  set +e
  # shellcheck disable=SC2086 # the arguments are split on purpose
  /usr/bin/time -v -o "$dir/time.txt" timeout 20 "$bin" $args >"$dir/out.txt" 2>"$dir/err.txt"
  status=$?
  set -e
  secs=$(awk -F': ' '/Elapsed \(wall clock\)/ {split($2, t, ":"); print t[1] * 60 + t[2]}' "$dir/time.txt")
  rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$dir/time.txt")
  bytes=$(stat -L -c %s "$dir/$file" 2>/dev/null || echo -)
  [ -p "$dir/$file" ] && bytes=fifo
  [ -c "$(readlink -f "$dir/$file")" ] && bytes=device
  verdict=ok
  if awk -v s="$secs" 'BEGIN { exit !(s >= 0.4) }'; then verdict=SLOW; fi
  if [ "$rss" -ge 102400 ]; then verdict="$verdict BIG"; fi
  # Refused means a failure exit with a message (a DAG is cut with diagnostics, and lists).
  case "$file" in dag-*) ;; *) [ "$status" -ne 0 ] || verdict="$verdict ACCEPTED" ;; esac
  [ "$verdict" = ok ] || failed=1
  said=$(cat "$dir/err.txt" "$dir/out.txt" | grep -m1 -iE 'error|fail|skipped|refused|not a regular' | cut -c1-110 || true)
  printf '%-12s %-24s %-17s %9s %5s %8s %9s  %s\n' "$kind" "$file" "${command%% *}" "$bytes" "$status" "$secs" "$rss" "$verdict"
  [ -z "$said" ] || printf '%-12s %s\n' '' "$said"
done
exit "$failed"
