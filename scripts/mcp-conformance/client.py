#!/usr/bin/env python3
"""The client under test for the MCP conformance suite's client scenarios: otc-bridge.

The suite runs `client.py SERVER_URL` with MCP_CONFORMANCE_SCENARIO (and, for the scenarios that
pre-register a client, MCP_CONFORMANCE_CONTEXT) set. This starts `otc-bridge --mcp-url SERVER_URL`
on loopback, the way a user would, then does what an OTC client does: lists the tools and calls
each one with an input its schema accepts. The bridge is the MCP client the suite judges.

Environment: OTC_BRIDGE (the binary; default target/debug/otc-bridge); CLIENT_LOG=FILE appends
what it did to FILE (the suite shows a client's stderr only when it exits non-zero).
"""
import http.client
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.parse
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


# The client ID metadata document URL the suite's auth/basic-cimd scenario expects (a user
# configures their own; the suite never fetches it).
CIMD_URL = "https://conformance-test.local/client-metadata.json"

# Everything the bridge and `login` write to stderr, at debug level: checked for secrets at the end.
LOG = tempfile.NamedTemporaryFile(prefix="otc-conformance-log-", delete=False)


def debug_env():
    return dict(os.environ, OTC_LOG="debug")

# What the suite's authorization server hands out (tokens start with these; its code is fixed).
SECRETS = ["test-token-", "cc-token", "test-auth-code"]


def leaked(context):
    """The secrets (tokens, codes, client secrets, private keys) found in the logs."""
    with open(LOG.name, encoding="utf-8", errors="replace") as log:
        text = log.read()
    secrets = SECRETS + [context[k] for k in ("client_secret", "private_key_pem") if k in context]
    return [s[:12] + "…" for s in secrets if s and s in text]


def auth_config(server_url, scenario, context):
    """The `--config` YAML of an auth/* scenario: the server behind OAuth, with what the suite
    gave in MCP_CONFORMANCE_CONTEXT (a pre-registered client, client credentials)."""
    auth = {"type": "oauth", "client_metadata_url": CIMD_URL}
    if "client_id" in context:
        auth["client_id"] = context["client_id"]
    if "client_secret" in context:
        auth["client_secret"] = {"value": context["client_secret"]}
    if scenario.startswith("auth/client-credentials"):
        auth["grant"] = "client_credentials"
        auth.pop("client_metadata_url")
        if "private_key_pem" in context:
            auth["private_key"] = {"value": context["private_key_pem"]}
    source = {"type": "mcp", "transport": {"type": "streamable_http", "url": server_url}, "auth": auth}
    return json.dumps({"sources": [source]})  # JSON is YAML


def follow_once(url):
    """GETs `url` without following a redirect; returns the Location it redirects to."""
    parts = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    connection.request("GET", parts.path + ("?" + parts.query if parts.query else ""))
    response = connection.getresponse()
    location = response.getheader("Location")
    response.read()
    return location


def sign_in(binary, config):
    """`otc-bridge login --config FILE`, playing the user: opens the printed authorization URL
    (the suite's authorization server redirects at once) and delivers the redirect to the
    bridge's loopback listener."""
    login = subprocess.Popen([binary, "login", "--config", config], stdout=subprocess.PIPE,
                             stderr=LOG, env=debug_env(), text=True)
    for line in login.stdout:
        print(f"login: {line.rstrip()}", file=sys.stderr)
        if line.startswith("  http"):
            location = follow_once(line.strip())
            if location:
                urllib.request.urlopen(location, timeout=30).read()
    return login.wait(timeout=60)


def main():
    server_url = sys.argv[-1]
    if os.environ.get("CLIENT_LOG"):
        sys.stderr = open(os.environ["CLIENT_LOG"], "a")
    binary = os.environ.get("OTC_BRIDGE", "target/debug/otc-bridge")
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    args = [binary, "--listen", "127.0.0.1:0"]
    config = None
    context = {}
    if scenario.startswith("auth/"):
        home = tempfile.mkdtemp(prefix="otc-conformance-")
        os.environ["XDG_CONFIG_HOME"] = home  # the token file goes there
        context.update(json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT", "{}")))
        config = os.path.join(home, "bridge.yaml")
        with open(config, "w") as out:
            out.write(auth_config(server_url, scenario, context))
        if scenario == "auth/metadata-default":
            # Before anyone signed in, serving stops at start-up and says how to sign in.
            early = subprocess.run([binary, "--listen", "127.0.0.1:0", "--config", config],
                                   capture_output=True, text=True, timeout=60, env=debug_env())
            said = early.stdout + early.stderr
            LOG.write(said.encode())
            if early.returncode == 0 or "otc-bridge login" not in said:
                print(f"serving before login: exit {early.returncode}, no `otc-bridge login` hint:\n{said}",
                      file=sys.stderr)
                return 1
        if not scenario.startswith("auth/client-credentials"):
            status = sign_in(binary, config)
            print(f"login exited {status}", file=sys.stderr)
            if status != 0:
                return 1
        args += ["--config", config]
    else:
        args += ["--mcp-url", server_url]
    bridge = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=LOG, env=debug_env(), text=True)
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
            LOG.write(json.dumps(answer).encode() + b"\n")  # answers must not carry secrets either
            LOG.flush()
            if config and "otc-bridge login" in json.dumps(answer):
                # The server wants more (scopes): sign in again, as the error says, and retry;
                # the running bridge reads the new token from its file.
                print(f"login again exited {sign_in(binary, config)}", file=sys.stderr)
                status, answer = request(f"{base}/tools/call", body)
                print(f"retry {tool['id']}: {status} {json.dumps(answer)[:300]}", file=sys.stderr)
        found = leaked(context)
        if found:
            print(f"secrets in the bridge's log ({LOG.name}): {found}", file=sys.stderr)
            return 1
        return 0
    finally:
        bridge.terminate()
        try:
            bridge.wait(timeout=10)
        except subprocess.TimeoutExpired:
            bridge.kill()


if __name__ == "__main__":
    sys.exit(main())
