#!/usr/bin/env python3
"""Sanity check of the tuning set: JSON valid, every expected id exists in tools/*.txt (without
@version), multi requests have >= 2 parts whose union is `expect`, none requests expect nothing,
and no provider is shared with the development manifest or the second set."""
import glob, json, os, re, sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "../../../.."))  # /work
ok = True
def fail(msg):
    global ok; ok = False; print("FAIL:", msg)

ids = set()
for f in glob.glob(os.path.join(HERE, "tools", "*.txt")):
    for line in open(f):
        if line.startswith("#") or not line.strip(): continue
        ids.add(line.split("\t", 1)[0].rsplit("@", 1)[0])
data = json.load(open(os.path.join(HERE, "queries.json")))
cat = json.load(open(os.path.join(HERE, data["catalog"])))
assert isinstance(data["seed"], int)
seen = set()
for i, q in enumerate(data["queries"]):
    if q["query"] in seen: fail(f"duplicate query {q['query']!r}")
    seen.add(q["query"])
    if q["kind"] not in ("match", "none"): fail(f"{i}: kind")
    if q["kind"] == "none" and q["expect"]: fail(f"{i}: none with expect")
    if q["kind"] == "match" and not q["expect"]: fail(f"{i}: match without expect")
    for t in q["expect"]:
        if t not in ids: fail(f"{i}: unknown id {t}")
    if q["style"] == "multi":
        parts = q.get("parts") or []
        if len(parts) < 2: fail(f"{i}: multi with <2 parts")
        union = {t for p in parts for t in p}
        if union != set(q["expect"]): fail(f"{i}: parts union != expect")
        for p in parts:
            if not p: fail(f"{i}: empty part")
            for t in p:
                if t not in ids: fail(f"{i}: unknown id {t}")
    elif "parts" in q: fail(f"{i}: parts on non-multi")

def provider(path):
    p = re.sub(r"^(api|apis-guru-openapi-directory|apis-guru-unofficial)/", "", path)
    return p.split("/")[0].replace(".json", "")
mine = {provider(d) for d in cat["openapi"]}
dev = json.load(open(os.path.join(ROOT, "shared/corpus/openapi/manifest.json")))
devp = {provider(d["file"]) for d in dev["documents"]} | {provider(d["source"].get("path", "")) for d in dev["documents"]}
second = json.load(open(os.path.join(HERE, "../second-set/catalog.json")))
secp = {provider(d) for d in second["openapi"]}
others = devp | secp
label = lambda p: p.lower().split(".")[0]  # "stripe" (vendor repo) also matches "stripe.com"
for p in sorted(mine):
    if p in others or label(p) in {label(o) for o in others}: fail(f"provider {p} overlaps")
for d in cat["openapi"]:
    name = re.sub(r"\.json$", "", d.split("/", 1)[1]).replace("/", "_")
    if not os.path.exists(os.path.join(HERE, "tools", name + ".txt")): fail(f"no tools list for {d}")
print(f"{len(cat['openapi'])} sources, {len(ids)} tools, {len(data['queries'])} requests;",
      "OK" if ok else "FAILED")
sys.exit(0 if ok else 1)
