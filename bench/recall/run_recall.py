#!/usr/bin/env python3
"""Recall benchmark by seeded bugs.

Each case in seeded.json names a file of a real repository at a recorded commit and ONE
textual edit (find -> replace). A "bug" case introduces one defect and passes when preflight
reports the expected rule on the expected line of the edited file, and that finding was not
already there before the edit. A "quiet" case is a bug-free rewrite and passes when the edit
adds no error or warning of any rule (notes are allowed but listed).

Usage:
    run_recall.py --preflight BIN --snapshots DIR [--json OUT] [--cases FILE] [--only ID ...]

DIR/<owner>+<name>/<path> holds the repository's files at the recorded commit (see README.md).
Standard library only. Exit status 0 unless the harness itself fails (bad case data, a
missing snapshot file, preflight crashing or printing something that is not JSON).
"""

import argparse
import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
RULES_ORDER = ["TG001", "TG002", "TG003", "TG004", "TG005", "TG006", "TG007", "TG008",
               "TG010", "TG011", "TG012", "TG013", "TG014"]


class HarnessError(Exception):
    pass


def load_cases(path):
    with open(path, encoding="utf-8") as f:
        cases = json.load(f)
    if not isinstance(cases, list):
        raise HarnessError(f"{path}: expected a JSON list of cases")
    seen = set()
    for c in cases:
        for key in ("id", "repo", "commit", "path", "find", "replace", "kind", "why"):
            if key not in c:
                raise HarnessError(f"case {c.get('id', '?')}: missing key {key!r}")
        if c["id"] in seen:
            raise HarnessError(f"duplicate case id {c['id']}")
        seen.add(c["id"])
        if c["kind"] not in ("bug", "quiet"):
            raise HarnessError(f"case {c['id']}: kind must be 'bug' or 'quiet'")
        exp = c.get("expect")
        if c["kind"] == "bug":
            if not (isinstance(exp, dict) and isinstance(exp.get("rule"), str)
                    and isinstance(exp.get("line"), int)):
                raise HarnessError(f"case {c['id']}: a bug case needs expect {{rule, line}}")
        elif exp is not None:
            raise HarnessError(f"case {c['id']}: a quiet case has expect null")
        if c["find"] == c["replace"]:
            raise HarnessError(f"case {c['id']}: find and replace are identical")
    return cases


def run_preflight(binary, workdir, filename, config):
    cmd = [binary, "check", "--format", "json", "--config", config, filename]
    proc = subprocess.run(cmd, cwd=workdir, capture_output=True, text=True)
    if proc.returncode not in (0, 1):
        raise HarnessError(f"{' '.join(cmd)} (in {workdir}) exited {proc.returncode}: "
                           f"{proc.stderr.strip()[:500]}")
    try:
        doc = json.loads(proc.stdout)
    except json.JSONDecodeError as e:
        raise HarnessError(f"preflight printed something that is not JSON ({e}): "
                           f"{proc.stdout[:300]!r}")
    if doc.get("failures"):
        raise HarnessError(f"preflight could not analyse {filename}: {doc['failures']}")
    return doc.get("diagnostics", [])


def line_of(text, offset):
    return text.count("\n", 0, offset) + 1


class Edit:
    """Where the single find -> replace edit sits, to map original lines to edited lines."""

    def __init__(self, original, find, replace):
        offset = original.find(find)
        self.start = line_of(original, offset)                 # first line touched
        self.find_end = self.start + find.count("\n")          # last original line touched
        self.replace_end = self.start + replace.count("\n")    # last edited line touched
        self.delta = replace.count("\n") - find.count("\n")

    def map_line(self, line):
        """Line in the edited file that an original finding at `line` corresponds to."""
        if line < self.start:
            return line
        if line > self.find_end:
            return line + self.delta
        # Inside the replaced text: keep the offset, clamped to the replacement.
        return min(line, self.replace_end)


def summarise(diags):
    return [f"{d['code']}:{d['line']}:{d['severity']}" for d in diags]


def check_case(case, binary, snapshots, config, warnings):
    repo_dir = os.path.join(snapshots, case["repo"].replace("/", "+"))
    src = os.path.join(repo_dir, case["path"])
    if not os.path.isfile(src):
        raise HarnessError(f"case {case['id']}: no snapshot file {src}")
    commit_file = os.path.join(repo_dir, ".commit")
    if os.path.isfile(commit_file):
        with open(commit_file, encoding="utf-8") as f:
            recorded = f.read().strip()
        if recorded != case["commit"]:
            warnings.append(f"case {case['id']}: snapshot {repo_dir} is at {recorded}, "
                            f"the case was written against {case['commit']}")
    else:
        warnings.append(f"case {case['id']}: {commit_file} is missing, commit not verified")

    with open(src, encoding="utf-8", newline="") as f:
        original = f.read()
    n = original.count(case["find"])
    if n != 1:
        raise HarnessError(f"case {case['id']}: find occurs {n} times in {case['path']} "
                           f"(must be exactly once)")
    edited = original.replace(case["find"], case["replace"], 1)
    edit = Edit(original, case["find"], case["replace"])

    name = os.path.basename(case["path"])
    with tempfile.TemporaryDirectory(prefix="recall-") as tmp:
        target = os.path.join(tmp, name)
        with open(target, "w", encoding="utf-8", newline="") as f:
            f.write(original)
        before = run_preflight(binary, tmp, name, config)
        with open(target, "w", encoding="utf-8", newline="") as f:
            f.write(edited)
        after = run_preflight(binary, tmp, name, config)

    # Findings of the original, moved to edited-file lines, as a multiset of (rule, line).
    old = collections.Counter((d["code"], edit.map_line(d["line"])) for d in before)
    new = []
    for d in after:
        key = (d["code"], d["line"])
        if old[key] > 0:
            old[key] -= 1
        else:
            new.append(d)

    result = {"id": case["id"], "kind": case["kind"], "repo": case["repo"],
              "path": case["path"], "new": summarise(new),
              "before": summarise(before), "after": summarise(after)}
    if case["kind"] == "bug":
        rule, line = case["expect"]["rule"], case["expect"]["line"]
        result["rule"] = rule
        result["line"] = line
        result["found"] = any(d["code"] == rule and d["line"] == line for d in new)
        # Context for misses: where the expected rule fired at all in the edited file.
        result["rule_lines_after"] = sorted(d["line"] for d in after if d["code"] == rule)
    else:
        noisy = [d for d in new if d["severity"] in ("error", "warning")]
        result["quiet"] = not noisy
        result["noisy"] = summarise(noisy)
        result["new_notes"] = summarise([d for d in new if d["severity"] == "note"])
    return result


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preflight", required=True, help="preflight executable")
    ap.add_argument("--snapshots", required=True,
                    help="directory holding <owner>+<name>/ exports at the recorded commits")
    ap.add_argument("--json", help="write per-case results and the summary here")
    ap.add_argument("--cases", default=os.path.join(HERE, "seeded.json"))
    ap.add_argument("--only", nargs="*", help="run only these case ids")
    args = ap.parse_args(argv)

    try:
        cases = load_cases(args.cases)
        if args.only:
            cases = [c for c in cases if c["id"] in set(args.only)]
        binary = os.path.abspath(args.preflight)
        if not os.access(binary, os.X_OK):
            raise HarnessError(f"{binary} is not an executable")
        warnings = []
        results = []
        with tempfile.TemporaryDirectory(prefix="recall-cfg-") as cfgdir:
            # An empty configuration: every rule at its default level, and nothing is
            # discovered from the temporary directory's parents.
            config = os.path.join(cfgdir, "preflight.toml")
            with open(config, "w", encoding="utf-8") as f:
                f.write("")
            for case in cases:
                results.append(check_case(case, binary, args.snapshots, config, warnings))
    except HarnessError as e:
        print(f"run_recall: {e}", file=sys.stderr)
        return 2

    for w in warnings:
        print(f"warning: {w}", file=sys.stderr)

    bugs = [r for r in results if r["kind"] == "bug"]
    quiet = [r for r in results if r["kind"] == "quiet"]
    per_rule = collections.OrderedDict()
    for rule in RULES_ORDER + sorted({r["rule"] for r in bugs} - set(RULES_ORDER)):
        rs = [r for r in bugs if r["rule"] == rule]
        if rs:
            per_rule[rule] = {"seeded": len(rs), "found": sum(r["found"] for r in rs)}

    print(f"{'rule':<8}{'seeded':>8}{'found':>8}{'recall':>9}")
    for rule, v in per_rule.items():
        print(f"{rule:<8}{v['seeded']:>8}{v['found']:>8}{v['found'] / v['seeded']:>9.0%}")
    total_found = sum(r["found"] for r in bugs)
    if bugs:
        print(f"{'all':<8}{len(bugs):>8}{total_found:>8}{total_found / len(bugs):>9.0%}")
    kept = sum(r["quiet"] for r in quiet)
    print(f"quiet cases kept quiet: {kept}/{len(quiet)}")

    misses = [r for r in bugs if not r["found"]]
    if misses:
        print("\nmisses:")
        for r in misses:
            where = (f"; {r['rule']} fired on lines {r['rule_lines_after']}"
                     if r["rule_lines_after"] else "")
            print(f"  {r['id']}: {r['rule']} expected on line {r['line']} of "
                  f"{r['repo']}/{r['path']}{where}")
    noisy = [r for r in quiet if not r["quiet"]]
    if noisy:
        print("\nnoisy quiet cases:")
        for r in noisy:
            print(f"  {r['id']}: {r['repo']}/{r['path']} new {', '.join(r['noisy'])}")
    noted = [r for r in quiet if r["new_notes"]]
    if noted:
        print("\nquiet cases with new notes (allowed):")
        for r in noted:
            print(f"  {r['id']}: {', '.join(r['new_notes'])}")

    if args.json:
        summary = {"bug_cases": len(bugs), "found": total_found,
                   "quiet_cases": len(quiet), "kept_quiet": kept, "per_rule": per_rule,
                   "warnings": warnings}
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"summary": summary, "cases": results}, f, indent=2)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
