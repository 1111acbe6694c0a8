#!/usr/bin/env python3
"""Import cycles between the modules of each crate of the workspace (issue 23).

A module is a source file (`a/mod.rs` is module `a`). An edge A -> B is a path in A that names an
item of B (`use crate::b::…`, `crate::b::f()`, `super::b::…`, `Self`-free paths, brace groups
expanded). Edges between a module and its own ancestor or descendant are not counted (a parent
re-exporting its child, a child using its parent's types: one room), nor test modules (`tests.rs`,
`*_tests.rs`, which exist to reach inside). Prints every strongly connected component of two or
more modules and exits 1 when there is one.

    scripts/module-cycles.py [CRATE_SRC_DIR…]     (default: every crate's src/ in the workspace)
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def modules(src):
    """{module path tuple: file}"""
    out = {}
    for dirpath, _, files in os.walk(src):
        for f in files:
            if not f.endswith(".rs"):
                continue
            rel = os.path.relpath(os.path.join(dirpath, f), src)
            parts = rel[:-3].split(os.sep)
            if parts[-1] in ("mod", "lib", "main"):
                parts = parts[:-1]
            out[tuple(parts)] = os.path.join(dirpath, f)
    return out


TOKENS = re.compile(
    r'(?<![A-Za-z0-9_])b?r(#*)".*?"\1'  # raw strings
    r'|"(?:\\.|[^"\\])*"'  # strings
    r"|'(?:\\u\{[0-9a-fA-F]+\}|\\.|[^'\\\n])'"  # char literals
    r"|//[^\n]*"  # line comments
    r"|/\*.*?\*/",  # block comments
    re.S,
)


def strip(text):
    """The code without comments, strings and char literals (whose text could look like paths)."""
    return TOKENS.sub(lambda m: '""' if m.group(0)[:1] in "br\"'" else " ", text)


def expand(path):
    """`a::{b::c, d}` -> ['a::b::c', 'a::d'] (nested groups too)."""
    i = path.find("{")
    if i < 0:
        return [path]
    head, rest = path[:i], path[i + 1:]
    depth, items, cur = 0, [], ""
    for ch in rest:
        if ch == "{":
            depth += 1
        elif ch == "}":
            if depth == 0:
                break
            depth -= 1
        if ch == "," and depth == 0:
            items.append(cur)
            cur = ""
        else:
            cur += ch
    items.append(cur)
    out = []
    for item in items:
        item = item.strip()
        if item:
            out.extend(expand(head + item))
    return out


PATH = re.compile(r"\b(crate|super|self)((?:::(?:\{[^;]*?\}|[A-Za-z_][A-Za-z0-9_]*))+)")


BARE = re.compile(r"(?<![A-Za-z0-9_:])([a-z_][a-z0-9_]*)((?:::(?:\{[^;]*?\}|[A-Za-z_][A-Za-z0-9_]*))+)")


def resolve(mods, here, path):
    segs = [s for s in path.split("::") if s]
    if not segs:
        return None
    if segs[0] == "crate":
        base, segs = (), segs[1:]
    else:
        base = here
        while segs and segs[0] in ("super", "self"):
            if segs[0] == "super":
                base = base[:-1]
            segs = segs[1:]
    best = None
    cur = base
    if cur in mods:
        best = cur
    for s in segs:
        cur = cur + (s,)
        if cur in mods:
            best = cur
        else:
            break
    return best


def is_test(mod):
    return bool(mod) and (mod[-1] == "tests" or mod[-1].endswith("_tests"))


def graph(src):
    mods = modules(src)
    edges = {m: set() for m in mods if not is_test(m)}
    for mod, file in mods.items():
        if is_test(mod):
            continue
        text = strip(open(file, encoding="utf-8").read())
        # #[cfg(test)] mod tests { … } inline: drop from the first such marker on.
        cut = re.search(r"#\[cfg\(test\)\]\s*mod\s+\w+\s*\{", text)
        if cut:
            text = text[: cut.start()]
        paths = [m.group(1) + m.group(2) for m in PATH.finditer(text)]
        # Relative paths: `child::item` names a child module of this one.
        paths += [
            "self::" + m.group(1) + m.group(2)
            for m in BARE.finditer(text)
            if mod + (m.group(1),) in mods
        ]
        for path in paths:
            for path in expand(path):
                target = resolve(mods, mod, path)
                if target is None or target == mod or is_test(target):
                    continue
                if target[: len(mod)] == mod or mod[: len(target)] == target:
                    continue
                edges[mod].add(target)
    return edges


def sccs(edges):
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in edges:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(comp)

    for v in list(edges):
        if v not in index:
            visit(v)
    return out


def main():
    dirs = sys.argv[1:]
    if not dirs:
        dirs = sorted(
            os.path.join(ROOT, d, "src")
            for d in os.listdir(ROOT)
            if os.path.isfile(os.path.join(ROOT, d, "Cargo.toml")) and os.path.isdir(os.path.join(ROOT, d, "src"))
        )
    found = 0
    for src in dirs:
        edges = graph(src)
        name = os.path.relpath(src, ROOT)
        comps = sccs(edges)
        for comp in comps:
            found += 1
            names = sorted("::".join(m) or "(root)" for m in comp)
            print(f"{name}: cycle among {', '.join(names)}")
            for m in comp:
                for t in sorted(edges[m]):
                    if t in comp:
                        print(f"    {'::'.join(m) or '(root)'} -> {'::'.join(t)}")
        print(f"{name}: {len(edges)} modules, {sum(map(len, edges.values()))} edges, {len(comps)} cycles")
    sys.exit(1 if found else 0)


main()
