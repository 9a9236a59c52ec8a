#!/usr/bin/env python3
"""Join the readers' verdicts with their batches into bench/precision/roundN.json.

  collect_round.py --name round13 --root DIR --reading OUT --note "Builds: ..." > roundN.json

OUT holds batch-<x>.json (make_batches.py) and verdicts-<x>.json (the readers' lists of
{id, verdict, why, fix_verdicts}); DIR/<owner>+<name>/.commit gives each repository's commit.
Fails when an item has no verdict or a safe fix has none: every one is read before a figure
is quoted.
"""
import argparse
import glob
import json
import os
import sys


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--name", required=True)
    p.add_argument("--root", required=True)
    p.add_argument("--reading", required=True)
    p.add_argument("--note", required=True)
    args = p.parse_args()
    repos = {}
    for d in sorted(glob.glob(os.path.join(args.root, "*+*"))):
        commit = open(os.path.join(d, ".commit")).read().strip()
        repos[os.path.basename(d).replace("+", "/", 1)] = commit
    findings, missing = [], []
    for batch in sorted(glob.glob(os.path.join(args.reading, "batch-*.json"))):
        verdict_file = batch.replace("batch-", "verdicts-")
        verdicts = {v["id"]: v for v in json.load(open(verdict_file))} if os.path.exists(verdict_file) else {}
        for it in json.load(open(batch)):
            v = verdicts.get(it["id"])
            if not v:
                missing.append(f"{os.path.basename(batch)} id {it['id']}")
                continue
            rel = it["path"][len(args.root.rstrip("/")) + 1:]
            owner, path = rel.split("/", 1)
            safe = [fx for fx in it["fixes"] if fx["safety"] == "safe"]
            fix_verdicts = v.get("fix_verdicts") or []
            safe_fixes = []
            for fx in safe:
                fv = next((f for f in fix_verdicts if f.get("build") == fx["build"]), None)
                if not fv:
                    missing.append(f"{os.path.basename(batch)} id {it['id']} safe fix of {fx['build']}")
                    continue
                safe_fixes.append({"build": "before" if fx["build"] == "old" else "after",
                                   "verdict": fv["verdict"], "why": fv["why"]})
            findings.append({"repo": owner.replace("+", "/", 1), "path": path, "line": it["line"], "code": it["code"],
                             "severity_before": it["severity"]["old"], "severity_after": it["severity"]["new"],
                             "sampled_note": it.get("sampled_note", False), "bulk_sample": False,
                             "verdict": v["verdict"], "why": v["why"], "safe_fixes": safe_fixes})
    if missing:
        sys.exit("no verdict for: " + ", ".join(missing))
    json.dump({"round": args.name, "repositories": repos, "note": args.note, "findings": findings},
              sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
