#!/usr/bin/env python3
"""Reading batches for one measurement round (step 3 of the protocol in README.md).

The union of both builds' errors and warnings, keyed by (path, line, code), plus a seeded
sample of the build under test's notes, each with both builds' severities, every fix (with
the build that offered it), the message, the evidence and the hint. Items are split into
batches by repository (a reader sees one repository whole), the largest repositories first
into the smallest batch.

  make_batches.py --root DIR --before before.json --after after.json --out OUT \
      --seed N --notes 12 --batches 3

writes OUT/batch-a.json, OUT/batch-b.json, ... Readers write OUT/verdicts-<letter>.json.
"""
import argparse
import json
import random


def load(path):
    return {(d["path"], d["line"], d["code"]): d for d in json.load(open(path))["diagnostics"]}


def item(key, root, before, after, sampled_note):
    b, a = before.get(key), after.get(key)
    shown = a or b
    fixes = [{"build": build, "safety": fx["safety"], "description": fx["description"], "edits": fx["edits"]}
             for build, d in (("old", b), ("new", a)) if d for fx in d.get("fixes") or []]
    return {"path": f"{root}/{key[0]}", "line": key[1], "column": shown["column"], "code": key[2],
            "severity": {"old": b["severity"] if b else None, "new": a["severity"] if a else None},
            "fixes": fixes, "message": shown["message"],
            "evidence": [f"{r['message']} @{r['line']}" for r in shown.get("related") or []],
            "hint": shown.get("hint"), "sampled_note": sampled_note}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--root", required=True, help="the exported set (paths in the reports are relative to it)")
    p.add_argument("--before", required=True, help="JSON report of the build before")
    p.add_argument("--after", required=True, help="JSON report of the build under test")
    p.add_argument("--out", required=True)
    p.add_argument("--seed", type=int, required=True, help="seeds the note sample (the round number)")
    p.add_argument("--notes", type=int, default=12)
    p.add_argument("--batches", type=int, default=3)
    args = p.parse_args()
    before, after = load(args.before), load(args.after)

    def loud(d):
        return (d or {}).get("severity") in ("error", "warning")

    keys = sorted(k for k in set(before) | set(after) if loud(before.get(k)) or loud(after.get(k)))
    notes = sorted(k for k in after if after[k]["severity"] == "note" and k not in keys)
    random.seed(args.seed)
    sample = random.sample(notes, min(args.notes, len(notes)))
    items = [item(k, args.root, before, after, False) for k in keys]
    items += [item(k, args.root, before, after, True) for k in sorted(sample)]
    items.sort(key=lambda i: (i["path"], i["line"]))
    for n, it in enumerate(items, 1):
        it["id"] = n
    by_repo = {}
    for it in items:
        by_repo.setdefault(it["path"][len(args.root) + 1:].split("/")[0], []).append(it)
    batches = [[] for _ in range(args.batches)]
    for _, its in sorted(by_repo.items(), key=lambda r: (-len(r[1]), r[0])):
        min(batches, key=len).extend(its)
    for letter, its in zip("abcdefgh", batches):
        json.dump(its, open(f"{args.out}/batch-{letter}.json", "w"), indent=1)
        print(letter, len(its), sorted({i["path"][len(args.root) + 1:].split("/")[0] for i in its}))
    print("total", len(items), "errors+warnings", len(keys), "notes sampled", len(sample), "of", len(notes))


if __name__ == "__main__":
    main()
