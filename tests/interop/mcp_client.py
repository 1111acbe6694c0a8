"""Drives an MCP server with the official Python MCP SDK (PyPI `mcp`, pinned by
scripts/install-python-client.sh) and prints what the SDK parsed, one JSON object per line.

Usage:
    python mcp_client.py [OPTIONS] http URL [--header K=V ...] SCRIPT
    python mcp_client.py [OPTIONS] stdio COMMAND [ARG ...] [--env K=V ...] -- SCRIPT

OPTIONS (before the transport):
    --mode legacy   connect with the `initialize` handshake only (default; what the bridge speaks)
    --mode auto     the SDK's own connect policy: probe `server/discover` (protocol 2026-07-28),
                    fall back to `initialize` on any JSON-RPC error or HTTP 4xx
    --timeout S     seconds each request may take (default 30)

In `stdio` mode the server gets only the SDK's safe environment (HOME, LOGNAME, PATH, SHELL, TERM,
USER), plus each `--env K=V` (before `--`), or `--env K` to pass this process's own K on; a
literal `--` (the last one) separates the server's command line from SCRIPT.

SCRIPT is a JSON array of steps, given inline, as `@FILE`, or `-` (standard input):
    {"op": "list_tools"}                        one page; "cursor": "…" for another;
                                                "all": true follows nextCursor to the end
    {"op": "call_tool", "name": "…", "arguments": {…}}
    {"op": "ping"}
    {"op": "request", "method": "…", "params": {…}}   any JSON-RPC request, result as raw JSON

Output (stdout), one line each:
    {"op": "initialize", "ok": true, "protocolVersion", "serverInfo", "capabilities", "instructions"}
    {"step": N, "op": "list_tools", "ok": true, "tools": [{name, title, description, inputSchema,
        outputSchema, annotations, …}], "nextCursor"}
    {"step": N, "op": "call_tool", "ok": true, "isError", "content": [{type, text, …}],
        "structuredContent"}
    {"step": N, "op": "ping", "ok": true, "result": {}}
    {"step": N, "op": "request", "ok": true, "result": {…}}
A failed step prints "ok": false and "error": {"kind": "jsonrpc", "code", "message", "data"} for
a JSON-RPC error response (HTTP-level 4xx rejections arrive as one too, mapped by the SDK), or
{"kind": "client", "type", "message"} for anything the SDK raised itself (a result it could not
validate, a timeout, a transport failure); the following steps still run.
Exit status: 0 when the connection was made and every step was run (whatever their results),
1 when connecting/initializing failed (its line says why), 2 on a usage error.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import anyio
import mcp.types as types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError
from pydantic import TypeAdapter

USAGE = __doc__.split("\nSCRIPT", 1)[0]
CLIENT_INFO = types.Implementation(name="otc-interop-mcp-client", version="1.0.0")


def emit(obj: dict[str, Any]) -> None:
    print(json.dumps(obj, ensure_ascii=False, default=str), flush=True)


def dump(model: Any) -> Any:
    """A result model as the JSON the SDK parsed, in the protocol's own (camelCase) field names."""
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


def error_of(exc: BaseException) -> dict[str, Any]:
    if isinstance(exc, MCPError):
        err: dict[str, Any] = {"kind": "jsonrpc", "code": exc.code, "message": exc.message}
        if exc.data is not None:
            err["data"] = exc.data
        return err
    if isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        return error_of(exc.exceptions[0])
    return {"kind": "client", "type": type(exc).__name__, "message": str(exc)}


def usage(message: str) -> None:
    print(f"mcp_client.py: {message}\n{USAGE}", file=sys.stderr)
    sys.exit(2)


def pairs(values: list[str], flag: str, inherit: bool = False) -> dict[str, str]:
    out = {}
    for value in values:
        key, sep, val = value.partition("=")
        if not key or (not sep and not inherit):
            usage(f"{flag} wants K=V, got {value!r}")
        if sep:
            out[key] = val
        elif key in os.environ:
            out[key] = os.environ[key]
    return out


def load_script(arg: str) -> list[dict[str, Any]]:
    if arg == "-":
        text = sys.stdin.read()
    elif arg.startswith("@"):
        with open(arg[1:], encoding="utf-8") as f:
            text = f.read()
    else:
        text = arg
    try:
        steps = json.loads(text)
    except json.JSONDecodeError as e:
        usage(f"SCRIPT is not JSON: {e}")
    if not isinstance(steps, list) or not all(isinstance(s, dict) and "op" in s for s in steps):
        usage('SCRIPT must be a JSON array of objects with an "op"')
    return steps


def parse_args(argv: list[str]) -> dict[str, Any]:
    opts: dict[str, Any] = {"mode": "legacy", "timeout": 30.0}
    i = 0
    while i < len(argv) and argv[i].startswith("--"):
        if argv[i] in ("--mode", "--timeout") and i + 1 < len(argv):
            opts[argv[i][2:]] = argv[i + 1]
            i += 2
        elif argv[i] in ("-h", "--help"):
            print(__doc__)
            sys.exit(0)
        else:
            usage(f"unknown option {argv[i]}")
    if opts["mode"] not in ("legacy", "auto"):
        usage("--mode is legacy or auto")
    opts["timeout"] = float(opts["timeout"])
    rest = argv[i:]
    if not rest:
        usage("missing transport (http or stdio)")
    kind, rest = rest[0], rest[1:]
    opts["kind"] = kind
    if kind == "http":
        if len(rest) < 2:
            usage("http wants URL [--header K=V ...] SCRIPT")
        opts["url"], script, middle = rest[0], rest[-1], rest[1:-1]
        headers = []
        while middle:
            if middle[0] == "--header" and len(middle) >= 2:
                headers.append(middle[1])
                middle = middle[2:]
            else:
                usage(f"unexpected argument {middle[0]!r}")
        opts["headers"] = pairs(headers, "--header")
    elif kind == "stdio":
        if "--" not in rest:
            usage("stdio wants COMMAND [ARG ...] -- SCRIPT")
        cut = len(rest) - 1 - rest[::-1].index("--")
        command, tail = rest[:cut], rest[cut + 1 :]
        if len(tail) != 1:
            usage("exactly one SCRIPT after --")
        script = tail[0]
        envs = []
        while len(command) >= 2 and command[-2] == "--env":
            envs.insert(0, command[-1])
            command = command[:-2]
        if not command:
            usage("stdio wants a COMMAND")
        opts["command"], opts["args"] = command[0], command[1:]
        opts["env"] = pairs(envs, "--env", inherit=True)
    else:
        usage(f"unknown transport {kind!r}")
    opts["steps"] = load_script(script)
    return opts


async def connect(session: ClientSession, mode: str) -> None:
    if mode == "auto":
        from mcp.client._probe import negotiate_auto  # the SDK's own policy for `Client(mode="auto")`

        await negotiate_auto(session)
    else:
        await session.initialize()


async def run_step(session: ClientSession, step: dict[str, Any], timeout: float) -> dict[str, Any]:
    op = step["op"]
    if op == "list_tools":
        tools: list[Any] = []
        cursor = step.get("cursor")
        while True:
            params = types.PaginatedRequestParams(cursor=cursor) if cursor is not None else None
            result = await session.list_tools(params=params)
            tools.extend(dump(tool) for tool in result.tools)
            cursor = result.next_cursor
            if not step.get("all") or cursor is None:
                break
        return {"tools": tools, "nextCursor": cursor}
    if op == "call_tool":
        result = await session.call_tool(step["name"], step.get("arguments"), read_timeout_seconds=timeout)
        body = dump(result)
        return {
            "isError": bool(body.get("isError", False)),
            "content": body.get("content", []),
            "structuredContent": body.get("structuredContent"),
        }
    if op == "ping":
        return {"result": dump(await session.send_ping())}
    if op == "request":
        request = types.Request[Any, Any](method=step["method"], params=step.get("params"))
        result = await session.send_request(request, TypeAdapter(dict[str, Any]), request_read_timeout_seconds=timeout)
        return {"result": result}
    raise ValueError(f"unknown op {op!r}")


async def drive(opts: dict[str, Any], read: Any, write: Any) -> int:
    async with ClientSession(read, write, read_timeout_seconds=opts["timeout"], client_info=CLIENT_INFO) as session:
        try:
            with anyio.fail_after(opts["timeout"] * 2):
                await connect(session, opts["mode"])
        except Exception as exc:
            emit({"op": "initialize", "ok": False, "error": error_of(exc)})
            return 1
        emit(
            {
                "op": "initialize",
                "ok": True,
                "mode": "discover" if session.discover_result is not None else "initialize",
                "protocolVersion": session.protocol_version,
                "serverInfo": dump(session.server_info) if session.server_info else None,
                "capabilities": dump(session.server_capabilities) if session.server_capabilities else None,
                "instructions": session.instructions,
            }
        )
        for n, step in enumerate(opts["steps"]):
            line: dict[str, Any] = {"step": n, "op": step["op"]}
            if step["op"] == "call_tool":
                line["name"] = step.get("name")
            try:
                with anyio.fail_after(opts["timeout"] * 4):
                    line.update({"ok": True, **await run_step(session, step, opts["timeout"])})
            except Exception as exc:
                line.update({"ok": False, "error": error_of(exc)})
            emit(line)
    return 0


async def main(opts: dict[str, Any]) -> int:
    if opts["kind"] == "http":
        http = create_mcp_http_client(headers=opts["headers"] or None)
        async with http, streamable_http_client(opts["url"], http_client=http) as (read, write):
            return await drive(opts, read, write)
    params = StdioServerParameters(command=opts["command"], args=opts["args"], env=opts["env"] or None)
    async with stdio_client(params) as (read, write):
        return await drive(opts, read, write)


if __name__ == "__main__":
    options = parse_args(sys.argv[1:])
    try:
        status = anyio.run(main, options)
    except Exception as exc:  # the transport itself failed (connection refused, server exited…)
        emit({"op": "initialize", "ok": False, "error": error_of(exc)})
        status = 1
    sys.exit(status)
