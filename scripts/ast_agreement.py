#!/usr/bin/env python3
"""Lists the .py files under CORPUS where CPython's ast.parse and preflight disagree on
whether the file parses.

  scripts/ast_agreement.py PREFLIGHT CORPUS...

"valid, preflight fails": ast.parse accepts the file and preflight reports a syntax error
(the defect of issue 26: valid Python must never be a failure). "invalid, preflight
accepts": ast.parse rejects it and preflight reports none (tree-sitter-python is more
permissive than CPython, and this interpreter may be older than the code). Exit status 1
when any file of the first kind is found.
"""
import ast
import json
import os
import subprocess
import sys
import warnings


def python_files(root):
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            if name.endswith(".py"):
                yield os.path.join(dirpath, name)


def cpython_accepts(path):
    with open(path, "rb") as f:
        source = f.read()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(source, filename=path)
        return True, ""
    except (SyntaxError, ValueError) as e:
        return False, f"{type(e).__name__}: {e}"


def preflight_syntax_failures(preflight, paths):
    """path -> the failure preflight reports for it (only files whose failure is a parse).
    Files are named one by one, so no exclude or .gitignore leaves one out."""
    failures = {}
    for i in range(0, len(paths), 500):
        run = subprocess.run([preflight, "check", "--format", "json", *paths[i:i + 500]],
                             capture_output=True, text=True)
        if run.returncode not in (0, 1):
            sys.exit(f"preflight exited {run.returncode}: {run.stderr}")
        for f in json.loads(run.stdout).get("failures", []):
            if "syntax error" in f["error"] or "too deeply nested" in f["error"]:
                failures[os.path.normpath(f["path"])] = f["error"]
    return failures


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    preflight, corpora = sys.argv[1], sys.argv[2:]
    valid_failing, invalid_accepted, files = [], [], 0
    for root in corpora:
        paths = list(python_files(root))
        failures = preflight_syntax_failures(preflight, paths)
        for path in paths:
            files += 1
            ok, why = cpython_accepts(path)
            failure = failures.get(os.path.normpath(path))
            if ok and failure:
                valid_failing.append((path, failure))
            elif not ok and not failure:
                invalid_accepted.append((path, why))
    print(f"{files} files, Python {sys.version.split()[0]}")
    print(f"{len(valid_failing)} valid (ast.parse) but a preflight syntax error:")
    for path, failure in valid_failing:
        print(f"  {path}: {failure}")
    print(f"{len(invalid_accepted)} rejected by ast.parse but no preflight syntax error:")
    for path, why in invalid_accepted:
        print(f"  {path}: {why}")
    return 1 if valid_failing else 0


if __name__ == "__main__":
    sys.exit(main())
