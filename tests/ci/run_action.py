#!/usr/bin/env python3
"""Run a composite action's shell steps (action.yml) the way a GitHub runner does, locally.

    run_action.py ACTION_DIR [--with NAME=VALUE]... [--uses-output STEP.NAME=VALUE]...
                  [--workspace DIR] [--runner-temp DIR] [--report FILE]

What a runner does and this script copies:
- inputs: each `with:` value, else the input's default; read through `${{ inputs.x }}`.
  A composite action gets no INPUT_* variables of its own (GitHub's metadata syntax
  reference says so), so none are set here either: a step must map them in its `env:`.
- GITHUB_ACTION_PATH, GITHUB_WORKSPACE (the steps' working directory), RUNNER_TEMP, and per
  step fresh GITHUB_OUTPUT, GITHUB_ENV, GITHUB_PATH files, read back after the step
  (`name=value` and `name<<DELIMITER` blocks); outputs become `steps.<id>.outputs.<name>`.
- `if:` conditions and `${{ }}` expressions over inputs, steps, runner, github and env, with
  GitHub's rules: strings compare case-insensitively, mixed types compare as numbers, a
  condition without a status function means `success() && (...)`, a missing property is null.
- `shell: bash` runs as `bash --noprofile --norc -eo pipefail FILE`; `shell: sh` as `sh -e FILE`.
- The first failing step fails the action; later steps run only when their `if:` says so.

What it cannot do: a `uses:` step (actions/cache ...) is not run but reported, with its
evaluated `with:`. `--uses-output cache.cache-hit=true` gives it the outputs a real run would
have (a cache hit), so the steps after it can be driven down either path.

Exit status: 0 when every step that ran succeeded, else the first failing step's exit code;
3 for an action this script cannot run (a syntax it does not know is an error, never a guess).
The step's output goes to stdout; this script's own log goes to stderr.
"""
import argparse
import json
import math
import os
import platform
import re
import subprocess
import sys
import tempfile

UNSUPPORTED = 3


class ActionError(Exception):
    """The action uses something this script does not implement."""


# ---------------------------------------------------------------------------- expressions

_TOKEN = re.compile(r"""\s*(?:
    (?P<string>'(?:[^']|'')*')
  | (?P<number>-?\d+(?:\.\d+)?)
  | (?P<op>==|!=|&&|\|\||<=|>=|[!()<>.\[\],])
  | (?P<name>[A-Za-z_][A-Za-z0-9_-]*)
)""", re.VERBOSE)

STATUS_FUNCTIONS = ("success", "failure", "always", "cancelled")


def tokenize(text):
    tokens, pos = [], 0
    text = text.strip()
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if not match or match.end() == pos:
            raise ActionError(f"cannot read expression {text!r} at {text[pos:]!r}")
        kind = match.lastgroup
        tokens.append((kind, match.group(kind)))
        pos = match.end()
    return tokens


class Evaluator:
    """GitHub's expression language, as far as action files of this size use it."""

    def __init__(self, contexts, job_status="success"):
        self.contexts = contexts
        self.job_status = job_status

    def evaluate(self, text):
        self.tokens, self.pos = tokenize(text), 0
        value = self._or()
        if self.pos != len(self.tokens):
            raise ActionError(f"unexpected {self.tokens[self.pos][1]!r} in {text!r}")
        return value

    def _peek(self):
        return self.tokens[self.pos][1] if self.pos < len(self.tokens) else None

    def _take(self, expected=None):
        if self.pos >= len(self.tokens):
            raise ActionError("expression ends too early")
        kind, text = self.tokens[self.pos]
        if expected is not None and text != expected:
            raise ActionError(f"expected {expected!r}, got {text!r}")
        self.pos += 1
        return kind, text

    def _or(self):
        value = self._and()
        while self._peek() == "||":
            self._take()
            right = self._and()
            value = value if truthy(value) else right
        return value

    def _and(self):
        value = self._not()
        while self._peek() == "&&":
            self._take()
            right = self._not()
            value = right if truthy(value) else value
        return value

    def _not(self):
        if self._peek() == "!":
            self._take()
            return not truthy(self._not())
        return self._comparison()

    def _comparison(self):
        left = self._primary()
        if self._peek() in ("==", "!="):
            _, op = self._take()
            equal = loosely_equal(left, self._primary())
            return equal if op == "==" else not equal
        if self._peek() in ("<", ">", "<=", ">="):
            raise ActionError("ordering comparisons are not implemented")
        return left

    def _primary(self):
        kind, text = self._take()
        if text == "(":
            value = self._or()
            self._take(")")
            return value
        if kind == "string":
            return text[1:-1].replace("''", "'")
        if kind == "number":
            return float(text)
        if kind != "name":
            raise ActionError(f"unexpected {text!r}")
        if text in ("true", "false"):
            return text == "true"
        if text == "null":
            return None
        if self._peek() == "(":
            return self._call(text)
        return self._property_path(text)

    def _call(self, name):
        self._take("(")
        self._take(")")
        if name == "success":
            return self.job_status == "success"
        if name == "failure":
            return self.job_status == "failure"
        if name == "always":
            return True
        if name == "cancelled":
            return False
        raise ActionError(f"function {name}() is not implemented")

    def _property_path(self, name):
        if name not in self.contexts:
            raise ActionError(f"unknown context {name!r}")
        value = self.contexts[name]
        while self._peek() in (".", "["):
            if self._take()[1] == ".":
                key = self._take()[1]
            else:
                kind, key = self._take()
                if kind != "string":
                    raise ActionError("only string indexes are implemented")
                key = key[1:-1].replace("''", "'")
                self._take("]")
            value = lookup(value, key)
        return value


def lookup(value, key):
    """Property access: case-insensitive, like GitHub's; missing is null."""
    if not isinstance(value, dict):
        return None
    for candidate, item in value.items():
        if candidate.lower() == key.lower():
            return item
    return None


def truthy(value):
    if value is None or value is False or value == "":
        return False
    if isinstance(value, float) and (value == 0 or math.isnan(value)):
        return False
    return True


def to_number(value):
    if value is None:
        return 0.0
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, float):
        return value
    if isinstance(value, str):
        text = value.strip()
        if text == "":
            return 0.0
        try:
            return float(text)
        except ValueError:
            return math.nan
    return math.nan  # objects and arrays


def loosely_equal(left, right):
    if type(left) is type(right):
        if isinstance(left, str):
            return left.casefold() == right.casefold()
        return left == right
    return to_number(left) == to_number(right)  # NaN equals nothing


def as_text(value):
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else repr(value)
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    return str(value)


_INTERPOLATION = re.compile(r"\$\{\{(.*?)\}\}", re.DOTALL)


def interpolate(text, contexts):
    """Replace every `${{ expr }}` in a string value."""
    if not isinstance(text, str):
        return as_text(text)
    return _INTERPOLATION.sub(lambda m: as_text(Evaluator(contexts).evaluate(m.group(1))), text)


def condition_holds(condition, contexts, job_status):
    """A step's `if:`; without one, success(). A status function anywhere opts out of the
    implicit success() && (...)."""
    if condition is None:
        condition = "success()"
    if isinstance(condition, bool):
        condition = "true" if condition else "false"
    condition = str(condition).strip()
    whole = _INTERPOLATION.fullmatch(condition)
    if whole:
        condition = whole.group(1)
    names = {text for kind, text in tokenize(condition) if kind == "name"}
    if not names & set(STATUS_FUNCTIONS):
        condition = f"success() && ({condition})"
    return truthy(Evaluator(contexts, job_status).evaluate(condition))


# ----------------------------------------------------------------------- file commands

def read_file_command(path):
    """GITHUB_OUTPUT / GITHUB_ENV syntax: `name=value` lines and `name<<DELIM` blocks."""
    values = {}
    if not os.path.exists(path):
        return values
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if line == "":
            continue
        heredoc = re.fullmatch(r"([^=<]+)<<(.+)", line)
        if heredoc and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = heredoc.groups()
            body = []
            while i < len(lines) and lines[i] != delimiter:
                body.append(lines[i])
                i += 1
            if i >= len(lines):
                raise ActionError(f"{path}: no closing {delimiter!r} for {name!r}")
            i += 1
            values[name] = "\n".join(body)
        elif "=" in line:
            name, value = line.split("=", 1)
            values[name] = value
        else:
            raise ActionError(f"{path}: cannot read line {line!r}")
    return values


# ------------------------------------------------------------------------------ runner

SHELLS = {
    "bash": ["bash", "--noprofile", "--norc", "-eo", "pipefail"],
    "sh": ["sh", "-e"],
}


def runner_arch():
    machine = platform.machine().lower()
    return {"x86_64": "X64", "amd64": "X64", "aarch64": "ARM64", "arm64": "ARM64"}.get(
        machine, machine.upper())


def log(message):
    print(f"run_action: {message}", file=sys.stderr, flush=True)


class ActionRun:
    def __init__(self, action_dir, inputs, uses_outputs, workspace, runner_temp):
        self.action_dir = os.path.abspath(action_dir)
        self.definition = load_action(self.action_dir)
        self.inputs = resolve_inputs(self.definition, inputs)
        self.uses_outputs = uses_outputs
        self.workspace = os.path.abspath(workspace)
        self.runner_temp = os.path.abspath(runner_temp)
        self.exported_env = {}
        self.added_path = []
        self.steps = {}
        self.report = []

    def contexts(self):
        return {
            "inputs": self.inputs,
            "steps": self.steps,
            "runner": {"os": "Linux", "arch": runner_arch(), "temp": self.runner_temp},
            "github": {"action_path": self.action_dir, "workspace": self.workspace},
            "env": dict(self.exported_env),  # what GITHUB_ENV set, not the whole process env
        }

    def run(self):
        job_status, first_failure = "success", 0
        for index, step in enumerate(self.definition["runs"]["steps"]):
            name = step.get("name") or step.get("id") or step.get("run", step.get("uses", ""))
            entry = {"index": index, "name": name, "id": step.get("id")}
            self.report.append(entry)
            if not condition_holds(step.get("if"), self.contexts(), job_status):
                entry["status"] = "skipped"
                log(f"skip  {name} (if: {step.get('if')})")
                self._record(step, {}, "skipped")
                continue
            if "uses" in step:
                self._fake_uses(step, entry)
                continue
            code = self._run_shell(step, entry)
            if code != 0 and job_status == "success":
                job_status, first_failure = "failure", code
        outputs = {name: interpolate(spec.get("value", ""), self.contexts())
                   for name, spec in (self.definition.get("outputs") or {}).items()}
        for name, value in outputs.items():
            log(f"output {name}={value}")
        return first_failure, outputs

    def _record(self, step, outputs, outcome):
        if step.get("id"):
            self.steps[step["id"]] = {"outputs": outputs, "outcome": outcome,
                                      "conclusion": outcome}

    def _fake_uses(self, step, entry):
        with_values = {k: interpolate(v, self.contexts()) for k, v in (step.get("with") or {}).items()}
        outputs = dict(self.uses_outputs.get(step.get("id"), {}))
        entry.update(status="not run (uses)", uses=step["uses"], with_values=with_values,
                     outputs=outputs)
        log(f"uses  {entry['name']}: {step['uses']} is not run here; with {with_values}; "
            f"outputs given {outputs}")
        self._record(step, outputs, "success")

    def _run_shell(self, step, entry):
        shell = step.get("shell")
        if shell not in SHELLS:
            raise ActionError(f"step {entry['name']!r}: shell {shell!r} (a composite action's "
                              f"run step must name one; implemented: {', '.join(SHELLS)})")
        contexts = self.contexts()
        script = interpolate(step["run"], contexts)
        step_env = {k: interpolate(v, contexts) for k, v in (step.get("env") or {}).items()}
        with tempfile.TemporaryDirectory(dir=self.runner_temp) as files:
            paths = {name: os.path.join(files, name.lower())
                     for name in ("GITHUB_OUTPUT", "GITHUB_ENV", "GITHUB_PATH")}
            for path in paths.values():
                open(path, "w").close()
            script_path = os.path.join(files, "step.sh")
            with open(script_path, "w", encoding="utf-8") as f:
                f.write(script)
            env = {**os.environ, **self.exported_env, **step_env, **paths,
                   "GITHUB_ACTION_PATH": self.action_dir, "GITHUB_WORKSPACE": self.workspace,
                   "RUNNER_TEMP": self.runner_temp, "GITHUB_ACTIONS": "true", "CI": "true"}
            if self.added_path:
                env["PATH"] = os.pathsep.join(self.added_path + [env.get("PATH", "")])
            log(f"run   {entry['name']}")
            code = subprocess.call(SHELLS[shell] + [script_path], cwd=self.workspace, env=env)
            outputs = read_file_command(paths["GITHUB_OUTPUT"])
            self.exported_env.update(read_file_command(paths["GITHUB_ENV"]))
            with open(paths["GITHUB_PATH"], encoding="utf-8") as f:
                self.added_path = [p for p in f.read().split("\n") if p] + self.added_path
        outcome = "success" if code == 0 else "failure"
        entry.update(status=outcome, exit_code=code, outputs=outputs)
        log(f"      {entry['name']}: exit {code}")
        self._record(step, outputs, outcome)
        return code


def load_action(action_dir):
    try:
        import yaml
    except ImportError:
        raise ActionError("PyYAML is not installed (Debian: python3-yaml)")
    for name in ("action.yml", "action.yaml"):
        path = os.path.join(action_dir, name)
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                definition = yaml.safe_load(f)
            break
    else:
        raise ActionError(f"no action.yml in {action_dir}")
    if (definition.get("runs") or {}).get("using") != "composite":
        raise ActionError("only composite actions are implemented")
    return definition


def resolve_inputs(definition, given):
    declared = definition.get("inputs") or {}
    unknown = sorted(set(given) - set(declared))
    if unknown:  # the runner warns and goes on
        log(f"warning: unexpected input(s) {unknown}, valid inputs are {sorted(declared)}")
    return {name: as_text(given[name]) if name in given else as_text((spec or {}).get("default"))
            for name, spec in declared.items()}


def key_value(text, option):
    if "=" not in text:
        raise SystemExit(f"{option} wants NAME=VALUE, got {text!r}")
    return text.split("=", 1)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("action_dir")
    parser.add_argument("--with", dest="with_values", action="append", default=[],
                        metavar="NAME=VALUE", help="an input, as in the workflow's `with:`")
    parser.add_argument("--uses-output", action="append", default=[], metavar="STEP.NAME=VALUE",
                        help="an output of a `uses:` step that is not run (e.g. cache.cache-hit=true)")
    parser.add_argument("--workspace", default=os.getcwd())
    parser.add_argument("--runner-temp")
    parser.add_argument("--report", help="write the steps, their status and outputs as JSON")
    args = parser.parse_args(argv)

    inputs = dict(key_value(v, "--with") for v in args.with_values)
    uses_outputs = {}
    for item in args.uses_output:
        target, value = key_value(item, "--uses-output")
        step, _, name = target.partition(".")
        uses_outputs.setdefault(step, {})[name] = value
    temp_holder = None
    if args.runner_temp is None:
        temp_holder = tempfile.TemporaryDirectory(prefix="runner-temp-")
        args.runner_temp = temp_holder.name
    try:
        run = ActionRun(args.action_dir, inputs, uses_outputs, args.workspace, args.runner_temp)
        code, outputs = run.run()
    except ActionError as error:
        log(f"error: {error}")
        return UNSUPPORTED
    finally:
        if temp_holder:
            temp_holder.cleanup()
    if args.report:
        with open(args.report, "w", encoding="utf-8") as f:
            json.dump({"exit_code": code, "steps": run.report, "outputs": outputs}, f, indent=2)
    return code


if __name__ == "__main__":
    sys.exit(main())
