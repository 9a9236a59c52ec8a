#!/usr/bin/env python3
"""The runner stand-in's own pieces: expressions, `if:` conditions, file commands, and a toy
composite action run end to end (outputs, GITHUB_ENV, GITHUB_PATH, failure handling)."""
import json
import os
import sys
import tempfile
import textwrap
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_action as ra  # noqa: E402

CONTEXTS = {
    "inputs": {"fail-on": "error", "format": "sarif", "empty": ""},
    "steps": {"cache": {"outputs": {"cache-hit": "true"}}, "miss": {"outputs": {}}},
    "runner": {"os": "Linux"},
    "github": {},
    "env": {},
}


def evaluate(text):
    return ra.Evaluator(CONTEXTS).evaluate(text)


class Expressions(unittest.TestCase):
    def test_properties_with_dashes_and_missing_ones(self):
        self.assertEqual(evaluate("inputs.fail-on"), "error")
        self.assertEqual(evaluate("steps.cache.outputs.cache-hit"), "true")
        self.assertIsNone(evaluate("steps.miss.outputs.cache-hit"))
        self.assertIsNone(evaluate("steps.nothing.outputs.x"))
        self.assertEqual(evaluate("inputs['format']"), "sarif")

    def test_comparisons_follow_github_rules(self):
        self.assertTrue(evaluate("steps.cache.outputs.cache-hit == 'TRUE'"))  # case-insensitive
        self.assertTrue(evaluate("steps.miss.outputs.cache-hit != 'true'"))   # null vs string
        self.assertTrue(evaluate("inputs.empty == 0"))                        # '' coerces to 0
        self.assertFalse(evaluate("inputs.format == 0"))                      # NaN equals nothing
        self.assertTrue(evaluate("'it''s' == 'IT''S'"))

    def test_logic_returns_operands_and_negates(self):
        self.assertEqual(evaluate("inputs.empty || 'fallback'"), "fallback")
        self.assertEqual(evaluate("inputs.format && inputs.fail-on"), "error")
        self.assertTrue(evaluate("!inputs.empty"))
        self.assertFalse(evaluate("!(inputs.format == 'sarif')"))

    def test_unknown_syntax_is_an_error_not_a_guess(self):
        for text in ("inputs.format < 'x'", "contains(inputs.format, 's')", "vars.x",
                     "inputs.format ==", "inputs.format ~ 1"):
            with self.subTest(text=text), self.assertRaises(ra.ActionError):
                evaluate(text)

    def test_interpolation(self):
        self.assertEqual(ra.interpolate("--fail-on ${{ inputs.fail-on }}/${{inputs.empty}}.",
                                         CONTEXTS), "--fail-on error/.")
        self.assertEqual(ra.interpolate("${{ steps.miss.outputs.x }}", CONTEXTS), "")
        self.assertEqual(ra.interpolate("${{ inputs.format == 'sarif' }}", CONTEXTS), "true")

    def test_conditions_imply_success_unless_a_status_function_is_named(self):
        hit = "steps.cache.outputs.cache-hit == 'true'"
        self.assertTrue(ra.condition_holds(hit, CONTEXTS, "success"))
        self.assertFalse(ra.condition_holds(hit, CONTEXTS, "failure"))
        self.assertTrue(ra.condition_holds("${{ always() }}", CONTEXTS, "failure"))
        self.assertTrue(ra.condition_holds("failure() && " + hit, CONTEXTS, "failure"))
        self.assertTrue(ra.condition_holds(None, CONTEXTS, "success"))
        self.assertFalse(ra.condition_holds(None, CONTEXTS, "failure"))


class FileCommands(unittest.TestCase):
    def test_lines_and_delimited_blocks(self):
        with tempfile.NamedTemporaryFile("w", delete=False) as f:
            f.write("key=a=b\nempty=\nbody<<EOF\nline 1\nx=y\nEOF\nlast=z\n")
        try:
            self.assertEqual(ra.read_file_command(f.name),
                             {"key": "a=b", "empty": "", "body": "line 1\nx=y", "last": "z"})
        finally:
            os.unlink(f.name)

    def test_unclosed_block_is_an_error(self):
        with tempfile.NamedTemporaryFile("w", delete=False) as f:
            f.write("body<<EOF\nline\n")
        try:
            with self.assertRaises(ra.ActionError):
                ra.read_file_command(f.name)
        finally:
            os.unlink(f.name)


TOY_ACTION = textwrap.dedent("""\
    name: toy
    description: exercises the runner
    inputs:
      greeting:
        default: hello
      fail:
        default: "no"
    outputs:
      said:
        value: ${{ steps.say.outputs.said }}
      restored:
        value: ${{ steps.restore.outputs.cache-hit }}
    runs:
      using: composite
      steps:
        - id: restore
          uses: actions/cache@v4
          with:
            key: k-${{ inputs.greeting }}
        - id: export
          shell: bash
          run: |
            echo "FROM_ENV=exported" >> "$GITHUB_ENV"
            mkdir -p "$RUNNER_TEMP/tools" && printf '#!/bin/sh\\necho tool-ran\\n' > "$RUNNER_TEMP/tools/toy-tool"
            chmod +x "$RUNNER_TEMP/tools/toy-tool" && echo "$RUNNER_TEMP/tools" >> "$GITHUB_PATH"
            test -z "${INPUT_GREETING:-}"  # composite actions get no INPUT_* variables
        - id: say
          shell: bash
          env:
            GREETING: ${{ inputs.greeting }}
            FROM_CONTEXT: ${{ env.FROM_ENV }}
          run: |
            echo "said<<END" >> "$GITHUB_OUTPUT"
            printf '%s\\n%s\\n' "$GREETING $FROM_ENV/$FROM_CONTEXT" "$(toy-tool)" >> "$GITHUB_OUTPUT"
            echo "END" >> "$GITHUB_OUTPUT"
            test "$PWD" = "$GITHUB_WORKSPACE" && test -f "$GITHUB_ACTION_PATH/action.yml"
        - name: only on a hit
          if: steps.restore.outputs.cache-hit == 'true'
          shell: bash
          run: echo hit-step-ran
        - name: maybe fail
          shell: bash
          run: |
            false | true   # pipefail makes this pipeline fail
            echo unreachable
          if: inputs.fail == 'yes'
        - name: after a failure
          shell: bash
          run: echo after-step-ran
        - name: cleanup
          if: always()
          shell: bash
          run: echo cleanup-ran
    """)


class ToyAction(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.action = os.path.join(self.dir.name, "action")
        self.workspace = os.path.join(self.dir.name, "workspace")
        os.makedirs(self.action)
        os.makedirs(self.workspace)
        with open(os.path.join(self.action, "action.yml"), "w") as f:
            f.write(TOY_ACTION)
        self.report = os.path.join(self.dir.name, "report.json")

    def tearDown(self):
        self.dir.cleanup()

    def run_toy(self, *extra):
        code = ra.main([self.action, "--workspace", self.workspace, "--report", self.report,
                        *extra])
        with open(self.report) as f:
            return code, json.load(f)

    def statuses(self, report):
        return [step["status"] for step in report["steps"]]

    def test_outputs_env_path_and_a_skipped_hit_step(self):
        code, report = self.run_toy("--with", "greeting=hi")
        self.assertEqual(code, 0)
        self.assertEqual(report["outputs"], {"said": "hi exported/exported\ntool-ran",
                                             "restored": ""})
        self.assertEqual(report["steps"][0]["with_values"], {"key": "k-hi"})
        self.assertEqual(self.statuses(report), ["not run (uses)", "success", "success",
                                                 "skipped", "skipped", "success", "success"])

    def test_a_given_uses_output_drives_the_later_steps(self):
        code, report = self.run_toy("--uses-output", "restore.cache-hit=true")
        self.assertEqual(code, 0)
        self.assertEqual(report["outputs"]["restored"], "true")
        self.assertEqual(report["steps"][3]["status"], "success")

    def test_a_failing_step_stops_the_rest_but_always_steps(self):
        code, report = self.run_toy("--with", "fail=yes")
        self.assertEqual(code, 1)
        self.assertEqual(self.statuses(report)[4:], ["failure", "skipped", "success"])

    def test_an_action_it_cannot_run_is_exit_3(self):
        with open(os.path.join(self.action, "action.yml"), "w") as f:
            f.write("name: x\nruns:\n  using: composite\n  steps:\n    - run: echo no shell\n")
        self.assertEqual(ra.main([self.action, "--workspace", self.workspace]), ra.UNSUPPORTED)


if __name__ == "__main__":
    try:
        import yaml  # noqa: F401  (run_action.py reads action.yml with it)
    except ImportError:
        message = "PyYAML is not installed (Debian: python3-yaml; scripts/bootstrap.sh --tests)"
        if os.environ.get("CI"):
            sys.exit("FAIL: " + message)
        print("SKIP: " + message)
        sys.exit(77)
    unittest.main()
