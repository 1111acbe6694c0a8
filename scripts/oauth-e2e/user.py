"""Plays the user in a browser for otc-bridge's OAuth end-to-end tests: opens an authorization URL
of scripts/oauth-e2e/provider.mjs (oidc-provider), signs in on its dev login form, approves its
dev consent form, and hands back where the authorization server sends the browser at the end: the
client's redirect_uri with `?code=…&state=…&iss=…` (or `?error=…` when the server refuses).

Usage (with the venv of scripts/install-python-client.sh, for httpx):
    .corpus/venv/bin/python scripts/oauth-e2e/user.py AUTHORIZATION_URL [--login alice] [--password x]

It GETs AUTHORIZATION_URL with a cookie-keeping client, follows redirects only while they stay on
the authorization server's origin (that of AUTHORIZATION_URL), submits each HTML form it is shown
(the login form with `login` and `password` filled in, the consent form as it is), and stops at the
first redirect whose target is on another origin: it prints that URL alone on stdout and exits 0,
without requesting it (the client's callback listener gets it from whoever drives this script).
Exit 1, with the reason on stderr, when the server answers with an error page, a page with no form,
a redirect loop, or an unreachable server; exit 2 on a usage error.

The dev pages of oidc-provider (features.devInteractions), both at I/interaction/UID (I = the issuer):
  login ("Sign-in"):     <form action="I/interaction/UID" method="post">, hidden prompt=login, text
                         `login`, password `password`, button "Sign-in"
  consent ("Authorize"): <form action="I/interaction/UID" method="post">, hidden prompt=consent,
                         button "Continue"; the page lists the scopes and, per resource, its scopes
                         (e.g. `http://127.0.0.1:PORT/mcp: tools`); a "[ Cancel ]" link to
                         I/interaction/UID/abort (not followed here)
Each POST answers 303 to I/auth/UID, which redirects (303) to the next page or to the client. A
fresh run has no session, so both pages are shown every time. An authorization request the server
refuses before any page (bad client_id or redirect_uri) shows an HTML error page (status 400):
exit 1; one it refuses with a valid redirect_uri (invalid_target, missing PKCE, ...) redirects to the
client with ?error=...: printed like a success (with a note on stderr), exit 0.
"""

from __future__ import annotations

import argparse
import re
import sys
from html import unescape
from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit

import httpx

MAX_STEPS = 20


class Forms(HTMLParser):
    """Collects each <form>'s action, method and input fields."""

    def __init__(self) -> None:
        super().__init__()
        self.forms: list[dict] = []
        self._current: dict | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: (v or "") for k, v in attrs}
        if tag == "form":
            self._current = {"action": a.get("action", ""), "method": a.get("method", "get").lower(), "inputs": []}
            self.forms.append(self._current)
        elif tag in ("input", "button") and self._current is not None:
            if a.get("name"):
                self._current["inputs"].append({"name": a["name"], "type": a.get("type", "text"), "value": a.get("value", "")})

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self._current = None


def origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    return parts.scheme, (parts.hostname or "").lower(), port


def page_text(html: str, limit: int = 600) -> str:
    html = re.sub(r"(?is)<(script|style)\b.*?</\1>", " ", html)
    text = unescape(re.sub(r"(?s)<[^>]+>", " ", html))
    return re.sub(r"\s+", " ", text).strip()[:limit]


def fail(message: str) -> None:
    print(f"user.py: {message}", file=sys.stderr)
    sys.exit(1)


def main() -> None:
    parser = argparse.ArgumentParser(description="Sign in and consent on oidc-provider's dev pages.")
    parser.add_argument("authorization_url")
    parser.add_argument("--login", default="alice", help="the login to sign in as (the token's subject); default alice")
    parser.add_argument("--password", default="password", help="any password (the dev form accepts all)")
    args = parser.parse_args()

    as_origin = origin(args.authorization_url)
    if as_origin[0] not in ("http", "https") or not as_origin[1]:
        print(f"user.py: not an http(s) URL: {args.authorization_url}", file=sys.stderr)
        sys.exit(2)

    with httpx.Client(follow_redirects=False, timeout=15.0, headers={"user-agent": "otc-oauth-e2e-user/1"}) as http:
        method, url, data = "GET", args.authorization_url, None
        for _ in range(MAX_STEPS):
            try:
                response = http.request(method, url, data=data)
            except httpx.HTTPError as exc:
                fail(f"{method} {url} failed: {exc}")
            if response.is_redirect:
                location = response.headers.get("location")
                if not location:
                    fail(f"{method} {url} answered {response.status_code} without a Location")
                target = urljoin(str(response.url), location)
                if origin(target) != as_origin:
                    if "error=" in urlsplit(target).query:
                        print(f"user.py: note: the authorization server redirected with an error: {target}", file=sys.stderr)
                    print(target, flush=True)
                    return
                method, url, data = "GET", target, None
                continue
            body = response.text
            if response.status_code != 200:
                fail(f"{method} {url} answered {response.status_code}: {page_text(body)}")
            forms = Forms()
            forms.feed(body)
            form = next((f for f in forms.forms if f["method"] == "post"), None)
            if form is None:
                fail(f"{method} {url} shows a page with no form to submit: {page_text(body)}")
            fields: dict[str, str] = {}
            names = {i["name"] for i in form["inputs"]}
            for field in form["inputs"]:
                if field["type"] in ("submit", "button") or field["name"] in ("abort",):
                    continue
                fields[field["name"]] = field["value"]
            if "login" in names:
                fields["login"] = args.login
            if "password" in names:
                fields["password"] = args.password
            action = urljoin(str(response.url), form["action"]) if form["action"] else str(response.url)
            if origin(action) != as_origin:
                fail(f"{url} shows a form posting to another origin ({action}); not followed")
            print(f"user.py: submitting the {fields.get('prompt', 'unnamed')} form to {action}", file=sys.stderr)
            method, url, data = "POST", action, fields
        fail(f"gave up after {MAX_STEPS} requests without leaving the authorization server")


if __name__ == "__main__":
    main()
