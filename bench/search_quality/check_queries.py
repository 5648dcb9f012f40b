#!/usr/bin/env python3
"""Checks queries.json against the catalog: ids unique and in order, kinds and
splits valid, every relevant tool exists, the split rule holds, and prints the
counts per kind, split and server. Usage: check_queries.py [queries.json] [catalog dir]"""
import collections, glob, json, os, sys

here = os.path.dirname(os.path.abspath(__file__))
queries_path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "queries.json")
catalog_dir = sys.argv[2] if len(sys.argv) > 2 else os.path.join(here, "..", "..", "..", "shared", "data", "catalog")

ids = set()
for path in sorted(glob.glob(os.path.join(catalog_dir, "*.json"))):
    for tool in json.load(open(path)):
        tool_id = tool["server"] + "/" + tool["name"]
        assert tool_id not in ids, "duplicate tool id " + tool_id
        ids.add(tool_id)
assert ids, "no catalog in " + catalog_dir

queries = json.load(open(queries_path))
errors = []
seen_text = set()
per_kind = collections.Counter()
for i, q in enumerate(queries):
    if q["id"] != "q%03d" % (i + 1):
        errors.append("%s: expected id q%03d" % (q["id"], i + 1))
    if q["kind"] not in ("task", "paraphrase", "keyword"):
        errors.append("%s: bad kind %r" % (q["id"], q["kind"]))
    # Split rule: within each kind, in id order, alternate tune, heldout, tune, ...
    want = "tune" if per_kind[q["kind"]] % 2 == 0 else "heldout"
    per_kind[q["kind"]] += 1
    if q["split"] != want:
        errors.append("%s: split %s, the rule says %s" % (q["id"], q["split"], want))
    if q["query"].lower() in seen_text:
        errors.append("%s: duplicate query text" % q["id"])
    seen_text.add(q["query"].lower())
    if not q["relevant"] or len(set(q["relevant"])) != len(q["relevant"]):
        errors.append("%s: relevant list empty or repeated" % q["id"])
    for r in q["relevant"]:
        if r not in ids:
            errors.append("%s: unknown tool %s" % (q["id"], r))

print("%d queries, %d tools in the catalog" % (len(queries), len(ids)))
print("kind x split:", dict(sorted(collections.Counter((q["kind"], q["split"]) for q in queries).items())))
print("by server of the first relevant tool:",
      dict(collections.Counter(q["relevant"][0].split("/")[0] for q in queries).most_common()))
print("queries touching each server:",
      dict(collections.Counter(s for q in queries for s in {r.split("/")[0] for r in q["relevant"]}).most_common()))
print("relevant tools per query:", dict(sorted(collections.Counter(len(q["relevant"]) for q in queries).items())))
for e in errors:
    print("ERROR", e)
sys.exit(1 if errors else 0)
