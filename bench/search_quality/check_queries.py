#!/usr/bin/env python3
"""Checks a query set against the catalog and prints its counts per kind, split
and server. Usage: check_queries.py [queries file] [catalog dir]

Two sets live here, told apart by the file name:

- queries.json (the default): ids q001, q002, ... in order; split tune or heldout
  by the split rule of README.md (within each kind, in id order, alternate tune,
  heldout, tune, ...).
- sealed.json (any file whose name starts with "sealed"): ids s001, s002, ... in
  order; split "sealed" for every query; no query text may equal one of
  queries.json (compared lower-cased, punctuation and spacing ignored).

For both: kinds task, paraphrase or keyword; no two query texts alike; a non-empty
relevant list without repeats, every tool in it present in the catalog; the
optional "source_words" flag, if present, is true."""
import collections, glob, json, os, re, sys

here = os.path.dirname(os.path.abspath(__file__))
queries_path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "queries.json")


def default_catalog():
    # <repo>/../shared/data/catalog; from a worktree nested deeper (e.g. /work/wt/<name>)
    # the nearest ancestor holding shared/data/catalog.
    d = os.path.join(here, "..", "..")
    for _ in range(4):
        d = os.path.dirname(os.path.abspath(d))
        candidate = os.path.join(d, "shared", "data", "catalog")
        if os.path.isdir(candidate):
            return candidate
    return os.path.join(here, "..", "..", "..", "shared", "data", "catalog")


catalog_dir = sys.argv[2] if len(sys.argv) > 2 else default_catalog()
sealed = os.path.basename(queries_path).startswith("sealed")

ids = set()
for path in sorted(glob.glob(os.path.join(catalog_dir, "*.json"))):
    for tool in json.load(open(path)):
        tool_id = tool["server"] + "/" + tool["name"]
        assert tool_id not in ids, "duplicate tool id " + tool_id
        ids.add(tool_id)
assert ids, "no catalog in " + catalog_dir


def normalized(text):
    # Lower-cased words only, so "Close issue 88!" and "close  issue 88" compare equal.
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


queries = json.load(open(queries_path))
errors = []
seen_text = set()
per_kind = collections.Counter()
# The sealed set must be new text: none of its queries may repeat one of queries.json.
tuning_texts = {}
if sealed:
    for q in json.load(open(os.path.join(here, "queries.json"))):
        tuning_texts[normalized(q["query"])] = q["id"]
prefix = "s" if sealed else "q"
for i, q in enumerate(queries):
    if q["id"] != "%s%03d" % (prefix, i + 1):
        errors.append("%s: expected id %s%03d" % (q["id"], prefix, i + 1))
    if q["kind"] not in ("task", "paraphrase", "keyword"):
        errors.append("%s: bad kind %r" % (q["id"], q["kind"]))
    if sealed:
        want = "sealed"
    else:
        # Split rule: within each kind, in id order, alternate tune, heldout, tune, ...
        want = "tune" if per_kind[q["kind"]] % 2 == 0 else "heldout"
    per_kind[q["kind"]] += 1
    if q["split"] != want:
        errors.append("%s: split %s, the rule says %s" % (q["id"], q["split"], want))
    text = normalized(q["query"]) if sealed else q["query"].lower()
    if text in seen_text:
        errors.append("%s: duplicate query text" % q["id"])
    seen_text.add(text)
    if normalized(q["query"]) in tuning_texts:
        errors.append("%s: same text as %s of queries.json" % (q["id"], tuning_texts[normalized(q["query"])]))
    if "source_words" in q and q["source_words"] is not True:
        errors.append("%s: source_words must be true when present" % q["id"])
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
if any("source_words" in q for q in queries):
    print("source_words queries:", sum(1 for q in queries if q.get("source_words")),
          dict(collections.Counter(q["relevant"][0].split("/")[0] for q in queries if q.get("source_words")).most_common()))
for e in errors:
    print("ERROR", e)
sys.exit(1 if errors else 0)
