"""Self-check of the OAuth end-to-end test bed, without otc-bridge: starts the real authorization
server (provider.mjs, npm oidc-provider) and the real OAuth-protected MCP server (mcp_server.py, the
official MCP SDK) on loopback, then walks the whole OAuth 2.1 flow an MCP client makes against them
and prints PASS/FAIL per step. Both servers are stopped at the end.

Needs scripts/install-mcp-conformance.sh (Node 22), scripts/install-oauth-server.sh (oidc-provider)
and scripts/install-python-client.sh (the venv with mcp and httpx). Run from anywhere:
    .corpus/venv/bin/python scripts/oauth-e2e/smoke.py [--verbose]

Node is $OTC_NODE, else ${OTC_CORPUS_DIR:-<repo>/.corpus}/node22/node_modules/.bin/node; the
oidc-provider directory is found by provider.mjs (OTC_OAUTH_SERVER_DIR / OTC_CORPUS_DIR). The
servers' logs go to a temporary directory, printed (tail) on failure, or streamed with --verbose.

Steps:
  a  unauthenticated POST /mcp → 401 with WWW-Authenticate naming resource_metadata
  b  protected resource metadata (RFC 9728) and the authorization server's metadata
  c  dynamic client registration (RFC 7591): a public client (auth method none), and a confidential one
  d  authorization code + PKCE S256 with resource=<MCP URL> and scope=tools; user.py signs in as
     alice and consents; the code is exchanged (with resource) for an access + refresh token
  e  the MCP SDK's client (streamable HTTP, Authorization: Bearer) calls whoami → alice, echo
  e2 the refresh token (with resource) gives a new access token (and a rotated refresh token) → whoami → alice
  f  that access token is revoked (RFC 7009, as the public client); the next MCP request → 401, and
     the refresh token died with it (oidc-provider revokes all the grant's tokens)
  g  client_credentials as otc-bridge-service (client_secret_basic) with resource → whoami → otc-bridge-service
  h  a resource other than the MCP URL is refused at the token endpoint (invalid_target)
Exit status: 0 when every step passed, 1 otherwise.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import secrets
import select
import socket
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any, Callable
from urllib.parse import parse_qs, urlencode, urlsplit

import anyio
import httpx

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
CORPUS = Path(os.environ.get("OTC_CORPUS_DIR") or REPO / ".corpus")
NODE = os.environ.get("OTC_NODE") or str(CORPUS / "node22" / "node_modules" / ".bin" / "node")
VERBOSE = "--verbose" in sys.argv[1:]

results: list[tuple[str, bool]] = []


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(name: str, argv: list[str], logdir: Path, timeout: float = 30.0) -> tuple[subprocess.Popen, str]:
    """Starts a server, waits for its `READY URL` line, returns (process, URL)."""
    log = None if VERBOSE else open(logdir / f"{name}.log", "w")
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=log if log else None, text=True, cwd=REPO)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stdout], [], [], 0.2)
        if ready:
            line = proc.stdout.readline()
            if line.startswith("READY "):
                return proc, line.split(" ", 1)[1].strip()
            if line == "":
                break
            print(f"  {name} stdout: {line.rstrip()}")
        if proc.poll() is not None:
            break
    proc.kill()
    raise RuntimeError(f"{name} did not print READY (exit status {proc.poll()}); see {logdir / f'{name}.log'}")


def stop(proc: subprocess.Popen | None) -> None:
    if proc is None or proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def step(label: str, fn: Callable[[], str]) -> bool:
    try:
        detail = fn()
        results.append((label, True))
        print(f"PASS {label}: {detail}", flush=True)
        return True
    except Exception as exc:  # noqa: BLE001 - report every failure the same way
        results.append((label, False))
        print(f"FAIL {label}: {type(exc).__name__}: {exc}", flush=True)
        if VERBOSE:
            traceback.print_exc()
        return False


def check(cond: bool, message: str) -> None:
    if not cond:
        raise AssertionError(message)


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "smoke", "version": "1"}},
}
MCP_HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


async def mcp_calls(url: str, token: str, calls: list[tuple[str, dict[str, Any]]]) -> list[str]:
    """Calls tools with the official SDK client over streamable HTTP; returns each first text."""
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    out = []
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    async with http, streamable_http_client(url, http_client=http) as (read, write):
        async with ClientSession(read, write, read_timeout_seconds=20) as session:
            with anyio.fail_after(30):
                await session.initialize()
                for name, arguments in calls:
                    result = await session.call_tool(name, arguments)
                    if result.is_error:
                        raise AssertionError(f"{name} returned isError: {result.content}")
                    out.append(result.content[0].text)
    return out


def main() -> int:
    logdir = Path(tempfile.mkdtemp(prefix="oauth-e2e-"))
    http = httpx.Client(timeout=15.0)
    st: dict[str, Any] = {}
    provider = mcp = None
    try:
        # The chicken and egg: the AS needs the MCP URL as its resource, the MCP server the issuer.
        mcp_port = free_port()
        mcp_url = f"http://127.0.0.1:{mcp_port}/mcp"
        provider, issuer = start("provider", [NODE, str(HERE / "provider.mjs"), "--port", "0", "--resource", mcp_url], logdir)
        print(f"     authorization server: {issuer} (resource {mcp_url})")
        mcp, url = start("mcp_server", [sys.executable, str(HERE / "mcp_server.py"), "--port", str(mcp_port), "--issuer", issuer], logdir)
        check(url == mcp_url, f"mcp_server.py serves {url}, expected {mcp_url}")
        print(f"     MCP server: {url}")
        st["issuer"] = issuer

        def a() -> str:
            r = http.post(mcp_url, json=INITIALIZE, headers=MCP_HEADERS)
            check(r.status_code == 401, f"status {r.status_code}, expected 401: {r.text[:200]}")
            www = r.headers.get("www-authenticate", "")
            m = re.search(r'resource_metadata="([^"]+)"', www)
            check(www.lower().startswith("bearer ") and m is not None, f"WWW-Authenticate: {www!r}")
            st["prm_url"] = m.group(1)
            return f"401, WWW-Authenticate: {www}"

        def b() -> str:
            prm = http.get(st["prm_url"]).raise_for_status().json()
            check(prm.get("resource") == mcp_url, f"PRM resource {prm.get('resource')!r}")
            check(prm.get("authorization_servers") == [issuer], f"PRM authorization_servers {prm.get('authorization_servers')}")
            as_url = issuer + "/.well-known/openid-configuration"
            meta = http.get(as_url).raise_for_status().json()
            check(meta.get("issuer") == issuer, f"AS issuer {meta.get('issuer')!r} != {issuer!r}")
            check("S256" in meta.get("code_challenge_methods_supported", []), "no S256")
            check("tools" in meta.get("scopes_supported", []), f"scopes_supported {meta.get('scopes_supported')}")
            for key in ("authorization_endpoint", "token_endpoint", "registration_endpoint", "introspection_endpoint", "revocation_endpoint"):
                check(bool(meta.get(key)), f"AS metadata lacks {key}")
            rfc8414 = http.get(issuer + "/.well-known/oauth-authorization-server").status_code
            st["meta"] = meta
            return (
                f"PRM {st['prm_url']} = {json.dumps(prm)}; AS metadata {as_url}: issuer {meta['issuer']}, "
                f"scopes_supported {meta['scopes_supported']}, token_endpoint_auth_methods_supported "
                f"{meta['token_endpoint_auth_methods_supported']} (/.well-known/oauth-authorization-server → {rfc8414})"
            )

        def c() -> str:
            st["redirect_uri"] = f"http://127.0.0.1:{free_port()}/oauth/callback"
            r = http.post(
                st["meta"]["registration_endpoint"],
                json={
                    "client_name": "otc-oauth-e2e smoke (public)",
                    "redirect_uris": [st["redirect_uri"]],
                    "grant_types": ["authorization_code", "refresh_token"],
                    "response_types": ["code"],
                    "token_endpoint_auth_method": "none",
                },
            )
            check(r.status_code == 201, f"public registration: {r.status_code} {r.text[:300]}")
            pub = r.json()
            check("client_secret" not in pub, "a public client got a secret")
            st["client_id"] = pub["client_id"]
            r = http.post(
                st["meta"]["registration_endpoint"],
                json={
                    "client_name": "otc-oauth-e2e smoke (confidential)",
                    "redirect_uris": [st["redirect_uri"]],
                    "grant_types": ["authorization_code", "refresh_token", "client_credentials"],
                    "response_types": ["code"],
                    "token_endpoint_auth_method": "client_secret_basic",
                },
            )
            check(r.status_code == 201 and r.json().get("client_secret"), f"confidential registration: {r.status_code} {r.text[:300]}")
            conf = r.json()
            r = http.post(st["meta"]["token_endpoint"], auth=(conf["client_id"], conf["client_secret"]),
                          data={"grant_type": "client_credentials", "resource": mcp_url, "scope": "tools"})
            check(r.status_code == 200, f"confidential client's client_credentials: {r.status_code} {r.text[:200]}")
            return (f"public client_id {pub['client_id']} (redirect_uri {st['redirect_uri']}, auth none); "
                    f"confidential client_id {conf['client_id']} (client_secret_basic, client_credentials OK)")

        def d() -> str:
            verifier = b64url(secrets.token_bytes(32))
            challenge = b64url(hashlib.sha256(verifier.encode()).digest())
            state = b64url(secrets.token_bytes(16))
            auth_url = st["meta"]["authorization_endpoint"] + "?" + urlencode({
                "response_type": "code",
                "client_id": st["client_id"],
                "redirect_uri": st["redirect_uri"],
                "scope": "tools",
                "state": state,
                "code_challenge": challenge,
                "code_challenge_method": "S256",
                "resource": mcp_url,
            })
            p = subprocess.run([sys.executable, str(HERE / "user.py"), auth_url, "--login", "alice"],
                               capture_output=True, text=True, timeout=60)
            if VERBOSE:
                sys.stderr.write(p.stderr)
            check(p.returncode == 0, f"user.py exited {p.returncode}: {p.stderr.strip()}")
            back = p.stdout.strip()
            parts = urlsplit(back)
            check(f"{parts.scheme}://{parts.netloc}{parts.path}" == st["redirect_uri"], f"user.py ended at {back}")
            q = {k: v[0] for k, v in parse_qs(parts.query).items()}
            check(q.get("state") == state, f"state {q.get('state')!r} != {state!r}")
            check("code" in q, f"no code in {back}")
            check(q.get("iss") == issuer, f"iss {q.get('iss')!r}")
            r = http.post(st["meta"]["token_endpoint"], data={
                "grant_type": "authorization_code",
                "code": q["code"],
                "redirect_uri": st["redirect_uri"],
                "client_id": st["client_id"],
                "code_verifier": verifier,
                "resource": mcp_url,
            })
            check(r.status_code == 200, f"token endpoint: {r.status_code} {r.text[:300]}")
            tok = r.json()
            check(tok.get("token_type") == "Bearer" and tok.get("scope") == "tools", f"token response {tok}")
            check("." not in tok["access_token"], "the access token looks like a JWT, not opaque")
            check(bool(tok.get("refresh_token")), "no refresh_token")
            intro = http.post(st["meta"]["introspection_endpoint"], auth=("mcp-server", "rs-secret"),
                              data={"token": tok["access_token"]}).json()
            check(intro.get("active") and intro.get("aud") == mcp_url and intro.get("sub") == "alice",
                  f"introspection {intro}")
            st["token"], st["refresh"] = tok["access_token"], tok["refresh_token"]
            return (f"user.py → {back.split('?')[0]}?code=…&state=…&iss=…; token response keys "
                    f"{sorted(tok)}, expires_in {tok['expires_in']}, scope {tok['scope']}; introspection aud "
                    f"{intro['aud']}, sub {intro['sub']}, client_id {intro['client_id']}")

        def e() -> str:
            who, echo = anyio.run(mcp_calls, mcp_url, st["token"], [("whoami", {}), ("echo", {"text": "hello"})])
            check(who == "alice", f"whoami answered {who!r}")
            check(echo == "hello", f"echo answered {echo!r}")
            return f"whoami → {who}; echo → {echo}"

        def f() -> str:
            r = http.post(st["meta"]["revocation_endpoint"], data={
                "token": st["token"], "token_type_hint": "access_token", "client_id": st["client_id"]})
            check(r.status_code == 200, f"revocation: {r.status_code} {r.text[:200]}")
            r = http.post(mcp_url, json=INITIALIZE, headers={**MCP_HEADERS, "authorization": f"Bearer {st['token']}"})
            check(r.status_code == 401, f"after revocation MCP answered {r.status_code}")
            status = r.status_code
            # oidc-provider revokes the whole grant's tokens (the refresh token too), not the consent.
            r = http.post(st["meta"]["token_endpoint"], data={
                "grant_type": "refresh_token", "refresh_token": st["refresh"], "client_id": st["client_id"], "resource": mcp_url})
            check(r.status_code == 400, f"the refresh token still works after revoking its access token: {r.status_code}")
            return (f"revocation 200; MCP with the revoked token → {status}; the grant's refresh token is revoked "
                    f"with it (refresh → {r.status_code} {r.json().get('error')})")

        def g() -> str:
            r = http.post(st["meta"]["token_endpoint"], auth=("otc-bridge-service", "service-secret"),
                          data={"grant_type": "client_credentials", "resource": mcp_url, "scope": "tools"})
            check(r.status_code == 200, f"token endpoint: {r.status_code} {r.text[:300]}")
            tok = r.json()
            check(tok.get("scope") == "tools" and "refresh_token" not in tok, f"token response {tok}")
            (who,) = anyio.run(mcp_calls, mcp_url, tok["access_token"], [("whoami", {})])
            check(who == "otc-bridge-service", f"whoami answered {who!r}")
            return f"token response keys {sorted(tok)}, scope {tok['scope']}; whoami → {who}"

        def e2() -> str:
            r = http.post(st["meta"]["token_endpoint"], data={
                "grant_type": "refresh_token", "refresh_token": st["refresh"], "client_id": st["client_id"], "resource": mcp_url})
            check(r.status_code == 200, f"refresh: {r.status_code} {r.text[:300]}")
            tok = r.json()
            (who,) = anyio.run(mcp_calls, mcp_url, tok["access_token"], [("whoami", {})])
            check(who == "alice", f"whoami answered {who!r}")
            rotated = tok.get("refresh_token") not in (None, st["refresh"])
            st["token"], st["refresh"] = tok["access_token"], tok.get("refresh_token") or st["refresh"]
            return f"new access token (refresh token rotated: {rotated}); whoami → {who}"

        def h() -> str:
            other = f"http://127.0.0.1:{mcp_port}/other"
            r = http.post(st["meta"]["token_endpoint"], auth=("otc-bridge-service", "service-secret"),
                          data={"grant_type": "client_credentials", "resource": other, "scope": "tools"})
            check(r.status_code == 400 and r.json().get("error") == "invalid_target", f"{r.status_code} {r.text[:200]}")
            return f"resource {other} → {r.status_code} {r.json()}"

        for label, fn in [("a unauthenticated 401", a), ("b metadata", b), ("c dynamic registration", c),
                          ("d authorization code + PKCE", d), ("e MCP whoami", e), ("e2 refresh token", e2),
                          ("f revocation", f), ("g client_credentials", g), ("h foreign resource refused", h)]:
            if not step(label, fn) and label[0] in "abcd":
                print("     (later steps need this one: stopping)")
                break
    except Exception as exc:  # noqa: BLE001
        results.append(("setup", False))
        print(f"FAIL setup: {exc}", flush=True)
    finally:
        stop(mcp)
        stop(provider)
        http.close()
    failed = [label for label, ok in results if not ok]
    if failed and not VERBOSE:
        for name in ("provider", "mcp_server"):
            path = logdir / f"{name}.log"
            if path.exists():
                print(f"----- {path} (tail) -----")
                print("\n".join(path.read_text(errors="replace").splitlines()[-30:]))
    passed = sum(ok for _, ok in results)
    print(f"{passed} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
