#!/usr/bin/env python3
"""action.yml run through tests/ci/run_action.py over the bundled examples/.

    action_test.py PREFLIGHT_EXE SOURCE_DIR

Nothing is compiled and nothing installed: stand-ins first on PATH replace `cmake` (on a cache
miss it "builds" by copying the already-built PREFLIGHT_EXE where the build would put it, and
it records every call, so a cache hit can be shown to call it never) and `apt-get` / `sudo`
(a call is a failure: on the machine that built preflight, bootstrap has nothing to install).
A cache hit is what actions/cache reports after restoring the binary: the cached directory
holds it, and the cache step's output cache-hit is 'true'.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PREFLIGHT, SOURCE = None, None

CMAKE_STAND_IN = textwrap.dedent("""\
    #!/usr/bin/env bash
    # Records the call; `--build DIR --target preflight` puts the prebuilt binary in DIR.
    echo "cmake $*" >> "$STAND_IN_LOG"
    if [ "$1" = "--build" ]; then
      mkdir -p "$2/server" && cp "$PREBUILT_PREFLIGHT" "$2/server/preflight"
    fi
    """)
REFUSED_STAND_IN = textwrap.dedent("""\
    #!/usr/bin/env bash
    echo "$(basename "$0") $*" >> "$STAND_IN_LOG"
    echo "$(basename "$0") called by the action under test: $*" >&2
    exit 1
    """)

# Only warnings (TG001): the gate decides the exit code.
WARNING_ONLY = textwrap.dedent("""\
    import torch


    def train(model, loader, optimizer):
        history = []
        for xb, yb in loader:
            optimizer.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(xb), yb)
            loss.backward()
            optimizer.step()
            history.append(loss)
        return history
    """)


class Action(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="action-test-")
        root = self.tmp.name
        self.workspace = os.path.join(root, "workspace")
        self.runner_temp = os.path.join(root, "runner-temp")
        self.stand_ins = os.path.join(root, "stand-ins")
        self.log = os.path.join(root, "stand-in.log")
        shutil.copytree(os.path.join(SOURCE, "examples"), os.path.join(self.workspace, "examples"))
        with open(os.path.join(self.workspace, "warn_only.py"), "w") as f:
            f.write(WARNING_ONLY)
        os.makedirs(self.runner_temp)
        os.makedirs(self.stand_ins)
        for name, text in (("cmake", CMAKE_STAND_IN), ("apt-get", REFUSED_STAND_IN),
                           ("sudo", REFUSED_STAND_IN)):
            self.add_stand_in(name, text)
        open(self.log, "w").close()
        self.cache_dir = os.path.join(self.runner_temp, "preflight-bin")

    def tearDown(self):
        self.tmp.cleanup()

    def add_stand_in(self, name, text):
        if not text.startswith("#!"):
            text = "#!/usr/bin/env bash\n" + text
        path = os.path.join(self.stand_ins, name)
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, 0o755)

    def restore_cache(self):
        """What actions/cache leaves on a hit: the cached directory with the binary."""
        os.makedirs(self.cache_dir)
        os.symlink(PREFLIGHT, os.path.join(self.cache_dir, "preflight"))

    def run_action(self, *inputs, cache_hit="true", action_dir=None):
        """cache_hit: the cache step's output ('true' restores the binary first; None: unset)."""
        if cache_hit == "true":
            self.restore_cache()
        report = os.path.join(self.tmp.name, "report.json")
        command = [sys.executable, os.path.join(HERE, "run_action.py"), action_dir or SOURCE,
                   "--workspace", self.workspace, "--runner-temp", self.runner_temp,
                   "--report", report]
        for item in inputs:
            command += ["--with", item]
        if cache_hit is not None:
            command += ["--uses-output", f"cache.cache-hit={cache_hit}"]
        env = {**os.environ, "PATH": self.stand_ins + os.pathsep + os.environ["PATH"],
               "STAND_IN_LOG": self.log, "PREBUILT_PREFLIGHT": PREFLIGHT}
        result = subprocess.run(command, env=env, capture_output=True, text=True)
        with open(report) as f:
            result.report = json.load(f)
        with open(self.log) as f:
            result.stand_in_calls = f.read().splitlines()
        return result

    def step_statuses(self, result):
        return {step["name"]: step["status"] for step in result.report["steps"]}

    def annotations(self, result):
        return [line for line in result.stdout.splitlines() if line.startswith("::")]

    def test_cache_hit_builds_nothing_and_annotates_the_examples(self):
        result = self.run_action("paths=examples")
        self.assertEqual(result.returncode, 1, result.stderr)  # bad_train.py has errors
        self.assertEqual(result.stand_in_calls, [])            # no cmake, no apt-get
        statuses = self.step_statuses(result)
        self.assertEqual(statuses["Install build dependencies"], "skipped")
        self.assertEqual(statuses["Build preflight"], "skipped")
        self.assertEqual(statuses["Save the binary to the cache"], "skipped")
        self.assertEqual(statuses["Install the shared libraries the cached binary links"],
                         "success")
        self.assertEqual(statuses["Run preflight"], "failure")
        annotations = self.annotations(result)
        self.assertIn("::error file=examples/bad_train.py,line=73,endLine=73,col=13,"
                      "endColumn=28,title=TG003 ", "\n".join(annotations))
        self.assertTrue(all(a.split(" ", 1)[0] in ("::error", "::warning", "::notice")
                            for a in annotations), annotations)
        self.assertFalse(any("good_train.py" in a for a in annotations))
        self.assertEqual(result.report["outputs"], {"sarif-file": "", "cache-hit": "true"})

    def test_a_cache_hit_on_a_runner_without_the_libraries_installs_packages_only(self):
        self.add_stand_in("ldd", 'echo "$*" >> "$STAND_IN_LOG.ldd"\n'
                                 'echo "\tlibspdlog.so.1.10 => not found"\n')
        self.add_stand_in("dpkg-query", 'echo "dpkg-query $*" >> "$STAND_IN_LOG.dpkg"\n'
                                        'exec /usr/bin/dpkg-query "$@"\n')
        result = self.run_action("paths=examples/good_train.py")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("missing shared libraries:\n\tlibspdlog.so.1.10 => not found", result.stdout)
        with open(self.log + ".dpkg") as f:  # bootstrap ran: it asked dpkg what is installed
            self.assertIn("dpkg-query -W -f=${Status} libspdlog-dev", f.read().splitlines())
        self.assertEqual(result.stand_in_calls, [])  # no cmake, no apt-get (all installed here)
        self.assertEqual(self.step_statuses(result)["Build preflight"], "skipped")

    def test_a_clean_file_passes(self):
        result = self.run_action("paths=examples/good_train.py", "fail-on=note")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(self.annotations(result), [])

    def test_fail_on_input_and_the_last_fail_on_in_args_wins(self):
        def exit_code(*inputs):
            self.tearDown()
            self.setUp()
            return self.run_action("paths=warn_only.py", *inputs).returncode
        self.assertEqual(exit_code("fail-on=error"), 0)
        self.assertEqual(exit_code("fail-on=warning"), 1)
        self.assertEqual(exit_code("fail-on=", ), 0)  # empty: the configuration's, else error
        self.assertEqual(exit_code("fail-on=error", "args=--fail-on warning"), 1)
        self.assertEqual(exit_code("fail-on=warning", "args=--fail-on error"), 0)

    def test_the_format_input_decides_the_format_over_args(self):
        result = self.run_action("paths=warn_only.py", "args=--format sarif --select TG001")
        self.assertEqual(result.returncode, 0, result.stderr)
        annotations = self.annotations(result)
        self.assertEqual(len(annotations), 1, result.stdout)
        self.assertTrue(annotations[0].startswith("::warning file=warn_only.py,line=11,"))

    def test_sarif_goes_to_the_runner_temp_file_named_by_the_output(self):
        result = self.run_action("paths=examples", "format=sarif")
        self.assertEqual(result.returncode, 1, result.stderr)
        sarif_path = os.path.join(self.runner_temp, "preflight.sarif")
        self.assertEqual(result.report["outputs"]["sarif-file"], sarif_path)
        self.assertEqual(self.annotations(result), [])  # the report is in the file
        with open(sarif_path) as f:
            sarif = json.load(f)
        self.assertEqual(sarif["version"], "2.1.0")
        results = sarif["runs"][0]["results"]
        self.assertIn("TG003", {r["ruleId"] for r in results})
        self.assertEqual({r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                          for r in results}, {"examples/bad_train.py"})

    def test_a_relative_sarif_file_is_under_the_workspace(self):
        result = self.run_action("paths=examples/good_train.py", "format=sarif",
                                 "sarif-file=reports/preflight.sarif")
        self.assertEqual(result.returncode, 0, result.stderr)
        sarif_path = os.path.join(self.workspace, "reports", "preflight.sarif")
        self.assertEqual(result.report["outputs"]["sarif-file"], sarif_path)
        with open(sarif_path) as f:
            self.assertEqual(json.load(f)["runs"][0]["results"], [])

    def test_an_unknown_format_fails_with_an_annotation(self):
        result = self.run_action("paths=examples", "format=json")
        self.assertEqual(result.returncode, 2)
        self.assertEqual(self.annotations(result),
                         ["::error title=preflight::format must be github or sarif, not 'json'"])

    def test_cache_miss_bootstraps_builds_once_and_fills_the_cached_directory(self):
        for cache_hit_output in (None, "false"):
            with self.subTest(cache_hit=cache_hit_output):
                self.tearDown()
                self.setUp()
                result = self.run_action("paths=examples", cache_hit=cache_hit_output)
                self.assertEqual(result.returncode, 1, result.stderr)
                statuses = self.step_statuses(result)
                self.assertEqual(statuses["Install build dependencies"], "success")
                self.assertEqual(statuses["Build preflight"], "success")
                self.assertEqual(
                    statuses["Install the shared libraries the cached binary links"], "skipped")
                build = os.path.join(self.runner_temp, "preflight-build")
                self.assertEqual(result.stand_in_calls, [
                    f"cmake -S {SOURCE} -B {build} -G Ninja -DCMAKE_BUILD_TYPE=Release "
                    "-DPREFLIGHT_BUILD_TESTS=OFF -DPREFLIGHT_BUILD_BENCH=OFF",
                    f"cmake --build {build} --target preflight"])
                self.assertTrue(os.access(os.path.join(self.cache_dir, "preflight"), os.X_OK))
                restore, save = (step for step in result.report["steps"] if "uses" in step)
                self.assertEqual((restore["uses"], save["uses"]),
                                 ("actions/cache/restore@v4", "actions/cache/save@v4"))
                self.assertEqual(save["with_values"], restore["with_values"])
                self.assertEqual(save["with_values"]["path"], self.cache_dir)
                names = [step["name"] for step in result.report["steps"]]
                self.assertLess(names.index("Build preflight"),
                                names.index("Save the binary to the cache"))
                self.assertLess(names.index("Save the binary to the cache"),
                                names.index("Run preflight"))  # saved even if the check fails
                self.assertIn("::error file=examples/bad_train.py", result.stdout)

    def test_the_cache_key_follows_the_sources_it_is_built_from(self):
        holder = tempfile.TemporaryDirectory(prefix="action-copy-")  # outlives each run's tmp
        self.addCleanup(holder.cleanup)
        action = os.path.join(holder.name, "action")
        for name in ("CMakeLists.txt", "action.yml"):
            os.makedirs(action, exist_ok=True)
            shutil.copy(os.path.join(SOURCE, name), action)
        for name in ("cmake", "analysis", "rules", "estimator", "protocol", "server", "scripts"):
            shutil.copytree(os.path.join(SOURCE, name), os.path.join(action, name),
                            ignore=shutil.ignore_patterns("__pycache__"))

        def key():
            self.tearDown()
            self.setUp()
            result = self.run_action("paths=examples/good_train.py", action_dir=action)
            self.assertEqual(result.returncode, 0, result.stderr)
            return result.report["steps"][1]["with_values"]["key"]

        first = key()
        self.assertRegex(first, r"^preflight-[0-9a-f]{40}$")
        self.assertEqual(key(), first)
        os.makedirs(os.path.join(action, "tests"))
        with open(os.path.join(action, "tests", "new_test.py"), "w") as f:
            f.write("# not part of the binary\n")
        self.assertEqual(key(), first)
        with open(os.path.join(action, "server", "main.cpp"), "a") as f:
            f.write("// changed\n")
        self.assertNotEqual(key(), first)


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    PREFLIGHT = os.path.abspath(sys.argv.pop(1))
    SOURCE = os.path.abspath(sys.argv.pop(1))
    try:
        import yaml  # noqa: F401  (run_action.py reads action.yml with it)
    except ImportError:
        message = "PyYAML is not installed (Debian: python3-yaml; scripts/bootstrap.sh --tests)"
        if os.environ.get("CI"):
            sys.exit("FAIL: " + message)
        print("SKIP: " + message)
        sys.exit(77)
    unittest.main()
