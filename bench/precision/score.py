#!/usr/bin/env python3
"""Score a preflight JSON report against the verdicts of a measurement round.

    score.py ROUND.json REPORT.json --root DIR

ROUND.json holds one round's blind reading (repository, commit, path, line, rule, verdict);
REPORT.json is `preflight check --format json` over DIR, where DIR/<owner>+<name>/ holds each
repository's files at the recorded commit. Prints errors + warnings true-or-defensible,
errors alone, per-rule tallies, the safe fixes and their recorded verdicts, and every error
or warning no reader has classified (read those before quoting a figure). A round whose set
has been tuned on says nothing about precision any more: it is a regression check.
"""
import argparse
import collections
import json
import os
import sys


def key_of(root, diag):
    rel = os.path.relpath(diag["path"], root)
    owner, path = rel.split(os.sep, 1)
    return owner.replace("+", "/", 1), path, diag["line"], diag["code"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("round")
    ap.add_argument("report")
    ap.add_argument("--root", required=True)
    args = ap.parse_args()
    verdicts = {(f["repo"], f["path"], f["line"], f["code"]): f for f in json.load(open(args.round))["findings"]}
    report = json.load(open(args.report))
    tally = collections.defaultdict(collections.Counter)
    unread, safe = [], collections.Counter()
    for d in report["diagnostics"]:
        if d["severity"] == "note":
            continue
        k = key_of(os.path.abspath(args.root), d)
        f = verdicts.get(k)
        if not f:
            unread.append((k, d["severity"]))
            continue
        tally[(d["code"], d["severity"])][f["verdict"]] += 1
        for fix in d.get("fixes", []):
            if fix["safety"] == "safe":
                known = [v["verdict"] for v in f["safe_fixes"]]
                safe[known[-1] if known else "unread"] += 1
    good = lambda c: c["true"] + c["defensible"]
    every = sum((c for c in tally.values()), collections.Counter())
    errors = sum((c for (_, sev), c in tally.items() if sev == "error"), collections.Counter())
    n, ne = sum(every.values()), sum(errors.values())
    print(f"errors + warnings true or defensible: {good(every)}/{n}" + (f" ({good(every) / n:.2f})" if n else ""))
    print(f"errors true or defensible: {good(errors)}/{ne}")
    for (code, sev), c in sorted(tally.items()):
        print(f"  {code} {sev}: true {c['true']}, defensible {c['defensible']}, wrong {c['wrong']}")
    print(f"safe fixes: {dict(safe) or 'none'}")
    for k, sev in unread:
        print(f"UNREAD {sev} {k[3]} {k[0]}/{k[1]}:{k[2]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
