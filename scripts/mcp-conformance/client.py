#!/usr/bin/env python3
"""The client under test for the MCP conformance suite's client scenarios: otc-bridge.

The suite runs `client.py SERVER_URL` with MCP_CONFORMANCE_SCENARIO (and, for the scenarios that
pre-register a client, MCP_CONFORMANCE_CONTEXT) set. This starts `otc-bridge --mcp-url SERVER_URL`
on loopback, the way a user would, then does what an OTC client does: lists the tools and calls
each one with an input its schema accepts. The bridge is the MCP client the suite judges.

Environment: OTC_BRIDGE (the binary; default target/debug/otc-bridge); CLIENT_LOG=FILE appends
what it did to FILE (the suite shows a client's stderr only when it exits non-zero).
"""
import json
import os
import subprocess
import sys
import time
import urllib.request

START_TIMEOUT = 60


def sample(schema):
    """A value the JSON Schema accepts (enough for the suite's tools)."""
    kind = schema.get("type")
    if "default" in schema:
        return schema["default"]
    if "enum" in schema:
        return schema["enum"][0]
    if kind in ("number", "integer"):
        return 1
    if kind == "boolean":
        return True
    if kind == "array":
        return []
    if kind == "object":
        return {name: sample(prop) for name, prop in schema.get("properties", {}).items()
                if name in schema.get("required", [])}
    return "conformance"


def request(url, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


def main():
    server_url = sys.argv[-1]
    if os.environ.get("CLIENT_LOG"):
        sys.stderr = open(os.environ["CLIENT_LOG"], "a")
    binary = os.environ.get("OTC_BRIDGE", "target/debug/otc-bridge")
    args = [binary, "--listen", "127.0.0.1:0", "--mcp-url", server_url]
    bridge = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
    try:
        started = time.monotonic()
        base = None
        for line in bridge.stdout:
            if "listening on " in line:
                base = line.split("listening on ", 1)[1].split()[0]
                break
            if time.monotonic() - started > START_TIMEOUT:
                break
        if base is None:
            print("the bridge did not start", file=sys.stderr)
            return 1
        status, listed = request(f"{base}/tools")
        print(f"GET /tools: {status}, {len(listed.get('tools', []))} tools", file=sys.stderr)
        for tool in listed.get("tools", []):
            schema = tool.get("input_schema") or tool.get("inputSchema") or {}
            schema = schema.get("parameters", schema)  # OTC 1.0 wraps it
            body = {"$schema": "otc://1.0",
                    "request": {"call_id": "conformance", "tool_id": tool["id"], "input": sample(schema)}}
            status, answer = request(f"{base}/tools/call", body)
            print(f"call {tool['id']}: {status} {json.dumps(answer)[:300]}", file=sys.stderr)
        return 0
    finally:
        bridge.terminate()
        try:
            bridge.wait(timeout=10)
        except subprocess.TimeoutExpired:
            bridge.kill()


if __name__ == "__main__":
    sys.exit(main())
