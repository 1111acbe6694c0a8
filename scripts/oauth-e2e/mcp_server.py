"""A real OAuth-protected MCP server on loopback for otc-bridge's OAuth end-to-end tests: the
official MCP SDK's `MCPServer` (PyPI `mcp`, pinned by scripts/install-python-client.sh) over
streamable HTTP, as a resource server of scripts/oauth-e2e/provider.mjs (oidc-provider).

Usage (with the venv of scripts/install-python-client.sh):
    .corpus/venv/bin/python scripts/oauth-e2e/mcp_server.py --port PORT --issuer ISSUER_URL [--transport sse]

    PORT         0 picks a free port. The MCP endpoint is http://127.0.0.1:PORT/mcp (streamable
                 HTTP), or with `--transport sse` the legacy HTTP+SSE stream http://127.0.0.1:PORT/sse
                 (which is then the resource URL the tokens must be issued for).
    ISSUER_URL   the authorization server, e.g. http://127.0.0.1:4444 (as provider.mjs prints it);
                 it must be up: its introspection endpoint is discovered at start from
                 ISSUER_URL/.well-known/openid-configuration.

Stdout carries exactly one line, `READY http://127.0.0.1:PORT/mcp`, once the server listens; logs
go to stderr. SIGTERM/SIGINT stop it.

What it does:
  - every request to /mcp without a valid token is answered 401 with
    `WWW-Authenticate: Bearer error="invalid_token", ..., resource_metadata="http://127.0.0.1:PORT/.well-known/oauth-protected-resource/mcp"`
    (403 insufficient_scope for a valid token without the scope `tools`), as the SDK does;
  - the RFC 9728 protected resource metadata is at
    http://127.0.0.1:PORT/.well-known/oauth-protected-resource/mcp
    ({"resource": ".../mcp", "authorization_servers": [ISSUER_URL], "scopes_supported": ["tools"], ...});
  - each bearer token is checked by RFC 7662 introspection at the authorization server, on every
    request (no cache: a revoked token is refused at once), authenticated as `mcp-server` /
    `rs-secret` (client_secret_basic); an inactive token, a refresh token or a sender-constrained
    (DPoP/mTLS) token is refused, and the SDK refuses one whose audience is not this /mcp URL
    (`validate_token_resource=True`);
  - tools: `whoami` → the token's subject (the user's login; for a client-credentials token, which
    has no subject, its client_id), `echo {text}` → text.
"""

from __future__ import annotations

import argparse
import logging
import socket
import sys
import time
from typing import Any

import anyio
import httpx
import uvicorn
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver.server import MCPServer

log = logging.getLogger("oauth-e2e.mcp_server")

RS_CLIENT_ID = "mcp-server"
RS_CLIENT_SECRET = "rs-secret"


class IntrospectionTokenVerifier:
    """A `TokenVerifier` that asks the authorization server about each token (RFC 7662)."""

    def __init__(self, introspection_endpoint: str, resource_url: str):
        self.introspection_endpoint = introspection_endpoint
        self.resource_url = resource_url

    async def verify_token(self, token: str) -> AccessToken | None:
        try:
            async with httpx.AsyncClient(timeout=10.0) as http:
                response = await http.post(
                    self.introspection_endpoint,
                    data={"token": token, "token_type_hint": "access_token"},
                    auth=(RS_CLIENT_ID, RS_CLIENT_SECRET),
                )
        except httpx.HTTPError as exc:
            log.warning("introspection failed: %s", exc)
            return None
        if response.status_code != 200:
            log.warning("introspection answered %s: %s", response.status_code, response.text[:200])
            return None
        data: dict[str, Any] = response.json()
        if not data.get("active"):
            log.info("token refused: inactive")
            return None
        if data.get("token_type") not in ("Bearer", "bearer"):
            log.info("token refused: token_type %r is not an access token", data.get("token_type"))
            return None
        if data.get("cnf"):
            log.info("token refused: sender-constrained (%s), which this server does not check", data["cnf"])
            return None
        aud = data.get("aud")
        if isinstance(aud, list):
            resource = self.resource_url if self.resource_url in aud else (aud[0] if aud else None)
        else:
            resource = aud
        claims = {k: v for k, v in data.items() if k != "active"}
        return AccessToken(
            token=token,
            client_id=data.get("client_id", ""),
            scopes=(data.get("scope") or "").split(),
            expires_at=data.get("exp"),
            resource=resource,
            subject=data.get("sub"),
            claims=claims,
        )


def discover_introspection(issuer: str) -> str:
    url = issuer.rstrip("/") + "/.well-known/openid-configuration"
    deadline = time.monotonic() + 15
    while True:
        try:
            response = httpx.get(url, timeout=5.0)
            response.raise_for_status()
            endpoint = response.json().get("introspection_endpoint")
            if not endpoint:
                sys.exit(f"mcp_server.py: {url} names no introspection_endpoint")
            return endpoint
        except (httpx.HTTPError, ValueError) as exc:
            if time.monotonic() > deadline:
                sys.exit(f"mcp_server.py: cannot read the authorization server metadata at {url}: {exc}")
            time.sleep(0.2)


def build_server(issuer: str, resource_url: str, introspection_endpoint: str) -> MCPServer:
    mcp = MCPServer(
        name="otc-oauth-e2e",
        instructions="OAuth-protected test server: whoami, echo.",
        token_verifier=IntrospectionTokenVerifier(introspection_endpoint, resource_url),
        auth=AuthSettings(
            issuer_url=issuer,
            resource_server_url=resource_url,
            required_scopes=["tools"],
            validate_token_resource=True,
        ),
    )

    @mcp.tool(description="The subject of the access token this request carries (its client_id when it has none).")
    def whoami() -> str:
        token = get_access_token()
        if token is None:
            raise ValueError("no access token in this request")
        return token.subject or token.client_id

    @mcp.tool(description="Returns the text it is given.")
    def echo(text: str) -> str:
        return text

    return mcp


async def serve(app: Any, sock: socket.socket, url: str) -> None:
    config = uvicorn.Config(app, log_config=None, access_log=True, lifespan="on")
    server = uvicorn.Server(config)
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve, [sock])
        while not server.started:
            if server.should_exit:
                break
            await anyio.sleep(0.05)
        if server.started:
            sys.stdout.write(f"READY {url}\n")
            sys.stdout.flush()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, required=True, help="0 = any free port")
    parser.add_argument("--issuer", required=True, help="the authorization server's issuer URL")
    parser.add_argument("--transport", choices=["streamable-http", "sse"], default="streamable-http")
    args = parser.parse_args()
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="mcp_server.py: %(name)s %(levelname)s %(message)s")

    # Bind first so that PORT 0 gives the port the resource URL needs.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", args.port))
    sock.listen(128)
    port = sock.getsockname()[1]
    resource_url = f"http://127.0.0.1:{port}/" + ("sse" if args.transport == "sse" else "mcp")

    introspection_endpoint = discover_introspection(args.issuer)
    log.info("resource %s, issuer %s, introspection %s", resource_url, args.issuer, introspection_endpoint)
    mcp = build_server(args.issuer, resource_url, introspection_endpoint)
    if args.transport == "sse":
        app = mcp.sse_app(host="127.0.0.1")
    else:
        app = mcp.streamable_http_app(host="127.0.0.1")
    try:
        anyio.run(serve, app, sock, resource_url)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
