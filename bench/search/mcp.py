#!/usr/bin/env python3
"""Tool search through MCP, as a host uses it: starts otc-bridge on every document of the shared
corpus manifest (one `openapi` source each, a loopback base_url, nothing is called), then sends
each development query as a `search_tools` call to POST /mcp (stateless streamable HTTP) and
prints hit@1, hit@5, the share of `none` queries answered with no result, and the latency of the
whole MCP exchange seen by the client (p50/p99). Standard library only.

With --model DIR the bridge searches with that sentence-embedding model: the script also times
embedding every tool from an empty vector cache (until /health says all are embedded), searches
once they are, then restarts the bridge on the now full cache and times how long it takes to
have every vector again.

  python3 bench/search/mcp.py --bridge target/release/otc-bridge \
      --manifest ../shared/corpus/openapi/manifest.json --queries ../shared/search/dev-queries.json \
      [--model .models/all-minilm-l6-v2]
"""

import argparse
import http.client
import json
import os
import socket
import statistics
import subprocess
import tempfile
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def post(conn, body):
    conn.request("POST", "/mcp", body=json.dumps(body), headers={
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2025-11-25",
    })
    response = conn.getresponse()
    data = response.read()
    if response.status != 200:
        raise SystemExit(f"POST /mcp: {response.status} {data[:300]!r}")
    return json.loads(data)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bridge", required=True)
    parser.add_argument("--manifest", required=True)
    parser.add_argument("--queries", required=True)
    parser.add_argument("--repeat", type=int, default=5, help="times each query is sent (latency)")
    parser.add_argument("--model", help="a sentence-embedding model directory (semantic search)")
    args = parser.parse_args()
    base = os.path.dirname(os.path.abspath(args.manifest))
    with open(args.manifest, encoding="utf-8") as f:
        documents = json.load(f)["documents"]
    with open(args.queries, encoding="utf-8") as f:
        queries = json.load(f)
    if isinstance(queries, dict):
        queries = queries.get("queries", [])
    lines = ["allow_partial: true"]
    if args.model:
        lines.append(f"search: {{model: {json.dumps(os.path.abspath(args.model))}, cache: CACHE}}")
    lines.append("sources:")
    for doc in documents:
        lines.append(f"  - type: openapi\n    spec: {json.dumps(os.path.join(base, doc['file']))}"
                     f"\n    base_url: \"http://127.0.0.1:9/\"")
    with tempfile.TemporaryDirectory() as tmp:
        config = os.path.join(tmp, "bridge.yaml")
        with open(config, "w", encoding="utf-8") as f:
            f.write("\n".join(lines).replace("CACHE", json.dumps(os.path.join(tmp, "vectors"))) + "\n")
        bridge, conn, started = start(args.bridge, config, tmp)
        try:
            if args.model:
                tools = wait_embedded(conn, bridge)
                print(f"embedded {tools} tools in {time.perf_counter() - started:.1f} s from start "
                      "(empty vector cache)")
            hit1 = hit5 = matches = nones = empty = 0
            latencies = []
            for i, q in enumerate(queries):
                call = {"jsonrpc": "2.0", "id": i, "method": "tools/call",
                        "params": {"name": "search_tools", "arguments": {"query": q["query"], "limit": 5}}}
                for _ in range(args.repeat):
                    started = time.perf_counter()
                    answer = post(conn, call)
                    latencies.append((time.perf_counter() - started) * 1000)
                results = answer["result"]["structuredContent"]["results"]
                paths = [r["path"].split("@")[0] for r in results]
                if q["kind"] == "none":
                    nones += 1
                    empty += not paths
                else:
                    matches += 1
                    hit1 += bool(paths) and paths[0] in q["expect"]
                    hit5 += any(p in q["expect"] for p in paths)
            latencies.sort()
            p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
            print(f"search_tools over POST /mcp: {len(documents)} documents, {len(queries)} queries x {args.repeat}")
            print(f"  hit@1 {hit1}/{matches} ({100 * hit1 / matches:.1f} %)  hit@5 {hit5}/{matches} ({100 * hit5 / matches:.1f} %)"
                  f"  none empty {empty}/{nones} ({100 * empty / max(nones, 1):.1f} %)")
            print(f"  MCP exchange latency p50 {statistics.median(latencies):.2f} ms  p99 {p99:.2f} ms")
        finally:
            bridge.terminate()
            bridge.wait(timeout=30)
        if args.model:
            bridge, conn, started = start(args.bridge, config, tmp)
            try:
                ready = time.perf_counter() - started
                wait_embedded(conn, bridge)
                print(f"restart on the full cache: ready in {ready:.2f} s, every vector in "
                      f"{time.perf_counter() - started:.2f} s")
            finally:
                bridge.terminate()
                bridge.wait(timeout=30)


def start(binary, config, tmp):
    """The bridge on `config`, once /health answers: (process, connection, start time)."""
    started = time.perf_counter()
    port = free_port()
    bridge = subprocess.Popen([binary, "--config", config, "--listen", f"127.0.0.1:{port}"],
                              stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "log"), "a"),
                              env={**os.environ, "OTC_LOG": "warn"})
    deadline = time.time() + 600
    while True:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
            conn.request("GET", "/health")
            conn.getresponse().read()
            return bridge, conn, started
        except OSError:
            if time.time() > deadline or bridge.poll() is not None:
                raise SystemExit("the bridge did not start")
            time.sleep(0.2)


def wait_embedded(conn, bridge):
    """Polls /health until every tool has its vector; returns how many tools there are."""
    while True:
        conn.request("GET", "/health")
        search = json.loads(conn.getresponse().read()).get("search", {})
        if search.get("mode") == "semantic":
            return search["tools"]
        if bridge.poll() is not None:
            raise SystemExit("the bridge exited while embedding")
        time.sleep(0.1)


if __name__ == "__main__":
    main()
