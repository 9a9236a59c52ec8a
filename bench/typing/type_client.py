#!/usr/bin/env python3
"""Types into a file through `preflight lsp` over stdio, one edit at a time, and reports what
each keystroke cost. A report, not a test: nothing here asserts a time.

  python3 bench/typing/type_client.py PREFLIGHT FILE.py [--edits 200] [--debounce-ms 0]
                                      [--scratch-runs 5] [--json OUT.json]

The client opens FILE, finds the line holding the marker comment `# <typing here>` (written by
generate.py inside a training loop; without one, the last `.backward()` line) and types a few
statements after it: a line break with the block's indentation is one edit, every other
character one edit. After each edit it waits for the publishDiagnostics of that version.

Per edit it records
  - wall: didChange written -> publishDiagnostics of that version read;
  - server CPU: the server's on-CPU time over the same interval, summed over its threads from
    /proc/PID/task/*/schedstat (nanoseconds; /proc/PID/stat's utime + stime tick at 10 ms,
    too coarse for one edit, and is printed as a cross-check of the total);
  - the path the server took, from its debug log (`--log-level debug` on stderr):
    "v7: 0 findings in 812 us (3 of 214 units re-analysed; whole file: <reason>)", or
    "...; syntax errors: the last good findings kept)" for a text that does not parse.
It also times `preflight check FILE` from scratch (wall and CPU of the child, median of
--scratch-runs runs) and the server's didOpen of the file. Python standard library only.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import threading
import time

MARK = "# <typing here>"

# What is typed, one line at a time, each with its indentation relative to the marker's line.
TYPED = [
    (0, "grad_norm = sum(p.grad.norm().item() for p in model.parameters() if p.grad is not None)"),
    (0, "if step % 100 == 0:"),
    (1, 'print(f"epoch {epoch} step {step} grad norm {grad_norm:.3f}")'),
    (1, "last_loss = loss.item()"),
    (0, "seen_batches = seen + 1"),
    (0, "if not math.isfinite(grad_norm):"),
    (1, "raise RuntimeError(f\"gradient norm {grad_norm} at step {step}\")"),
]

LOG_LINE = re.compile(r" v(\d+): (\d+) findings in (\d+) us \((\d+) of (\d+) units re-analysed"
                      r"(?:; whole file: (.*?))?(; syntax errors: the last good findings kept)?\)\s*$")


def percentile(values, q):
    """Nearest-rank percentile of `values` (q in [0, 1])."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    rank = max(1, min(len(ordered), int(round(q * len(ordered) + 0.5))))
    return ordered[rank - 1]


def load_average():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def cpu_ns(pid):
    """On-CPU nanoseconds of every thread of `pid` (schedstat's first field)."""
    total = 0
    task_dir = f"/proc/{pid}/task"
    for tid in os.listdir(task_dir):
        try:
            with open(f"{task_dir}/{tid}/schedstat") as f:
                total += int(f.read().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            pass  # a thread that ended between listdir and open
    return total


def stat_ticks(pid):
    """utime + stime of `pid` in clock ticks (/proc/PID/stat fields 14 and 15)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


class Server:
    """`preflight lsp` over pipes: framed JSON out, framed JSON in, the debug log parsed."""

    def __init__(self, exe, debounce_ms, log_path=None):
        self.proc = subprocess.Popen([exe, "lsp", "--debounce-ms", str(debounce_ms), "--log-level", "debug"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.next_id = 0
        # version -> (findings, micros, reanalysed, units, whole-file reason or "", last good findings kept)
        self.analyses = {}
        self.log_tail = []
        self.log_file = open(log_path, "w") if log_path else None
        self.reader = threading.Thread(target=self._read_log, daemon=True)
        self.reader.start()

    def _read_log(self):
        for raw in self.proc.stderr:
            line = raw.decode("utf-8", "replace")
            if self.log_file:
                self.log_file.write(line)
            m = LOG_LINE.search(line)
            if m:
                version = int(m.group(1))
                self.analyses[version] = (int(m.group(2)), int(m.group(3)), int(m.group(4)), int(m.group(5)),
                                          m.group(6) or "", bool(m.group(7)))
            else:
                self.log_tail = (self.log_tail + [line.rstrip()])[-20:]

    def send(self, message):
        body = json.dumps(message).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def receive(self):
        length = None
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("the server closed its output; its log ends:\n" + "\n".join(self.log_tail))
            line = line.strip()
            if not line:
                break
            name, _, value = line.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        return json.loads(self.proc.stdout.read(length))

    def request(self, method, params):
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            message = self._answer_server_requests(self.receive())
            if message.get("id") == self.next_id and "method" not in message:
                return message.get("result")

    def notify(self, method, params):
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def wait_diagnostics(self, uri, version):
        while True:
            message = self._answer_server_requests(self.receive())
            if message.get("method") != "textDocument/publishDiagnostics":
                continue
            params = message["params"]
            if params["uri"] == uri and params.get("version") == version:
                return params["diagnostics"]

    def _answer_server_requests(self, message):
        if "method" in message and "id" in message:  # a request from the server: answer it empty
            self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
        return message

    def close(self):
        try:
            self.request("shutdown", None)
            self.notify("exit", None)
            self.proc.stdin.close()
            self.proc.wait(timeout=10)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
        self.reader.join(timeout=5)


def typing_script(text, indent_by_spaces=False):
    """The edits: (line, character, inserted text), each applied to the text before it.
    With indent_by_spaces, Enter is an edit of its own and so is every space of the new line's
    indentation (an editor that does not indent by itself)."""
    lines = text.split("\n")
    at = next((i for i, line in enumerate(lines) if line.strip() == MARK), None)
    if at is None:
        at = max((i for i, line in enumerate(lines) if ".backward()" in line), default=None)
    if at is None:
        raise SystemExit("the file has neither the marker comment nor a .backward() line to type after")
    indent = lines[at][: len(lines[at]) - len(lines[at].lstrip())]
    edits = []
    line, column = at, len(lines[at])
    for depth, statement in TYPED:
        if indent_by_spaces:
            edits.append((line, column, "\n"))
            line, column = line + 1, 0
            for ch in indent + "    " * depth:
                edits.append((line, column, ch))
                column += 1
        else:
            edits.append((line, column, "\n" + indent + "    " * depth))  # Enter, with the editor's indent
            line, column = line + 1, len(indent) + 4 * depth
        for ch in statement:
            edits.append((line, column, ch))
            column += 1
    return at + 1, edits


def change_params(uri, version, line, character, inserted):
    position = {"line": line, "character": character}
    return {"textDocument": {"uri": uri, "version": version},
            "contentChanges": [{"range": {"start": position, "end": position}, "text": inserted}]}


def scratch_check(exe, path, runs):
    """Wall and CPU (user + system of the child) of `preflight check PATH`, each a median."""
    walls, cpus = [], []
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.Popen([exe, "check", "--no-color", "-q", path], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        walls.append((time.perf_counter() - start) * 1000)
        cpus.append((usage.ru_utime + usage.ru_stime) * 1000)
        code = os.waitstatus_to_exitcode(status)
        if code not in (0, 1):
            raise SystemExit(f"preflight check {path} exited {code}")
    return statistics.median(walls), statistics.median(cpus)


def run(args):
    with open(args.file, encoding="utf-8") as f:
        text = f.read()
    marker_line, edits = typing_script(text, args.indent_by_spaces)
    edits = edits[: args.edits]
    load_start = load_average()
    server = Server(args.preflight, args.debounce_ms, args.server_log)
    pid = server.proc.pid
    server.request("initialize", {"processId": os.getpid(), "rootUri": None, "capabilities": {
        "textDocument": {"publishDiagnostics": {"relatedInformation": True}}}})
    server.notify("initialized", {})
    uri = "file://" + os.path.abspath(args.file)
    cpu0, t0 = cpu_ns(pid), time.perf_counter()
    server.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                            "text": text}})
    first = server.wait_diagnostics(uri, 1)
    open_wall, open_cpu = (time.perf_counter() - t0) * 1000, (cpu_ns(pid) - cpu0) / 1e6
    walls, cpus = [], []
    ticks0 = stat_ticks(pid)
    cpu_total0 = cpu_ns(pid)
    for i, (line, character, inserted) in enumerate(edits):
        version = i + 2
        cpu_before, start = cpu_ns(pid), time.perf_counter()
        server.notify("textDocument/didChange", change_params(uri, version, line, character, inserted))
        server.wait_diagnostics(uri, version)
        walls.append((time.perf_counter() - start) * 1000)
        cpus.append((cpu_ns(pid) - cpu_before) / 1e6)
    ticks = stat_ticks(pid) - ticks0
    cpu_total = (cpu_ns(pid) - cpu_total0) / 1e6
    server.close()
    load_end = load_average()

    versions = range(2, len(edits) + 2)
    missing = [v for v in versions if v not in server.analyses]
    reasons = {}
    for v in versions:
        if v in server.analyses and server.analyses[v][4]:
            reasons[server.analyses[v][4]] = reasons.get(server.analyses[v][4], 0) + 1
    whole = sum(reasons.values())
    kept = sum(1 for v in versions if v in server.analyses and server.analyses[v][5])
    analysis_us = [server.analyses[v][1] / 1000 for v in versions if v in server.analyses]
    reanalysed = [server.analyses[v][2] for v in versions if v in server.analyses]
    units = [server.analyses[v][3] for v in versions if v in server.analyses]
    scratch_wall, scratch_cpu = scratch_check(args.preflight, args.file, args.scratch_runs)

    figures = {
        "file": args.file, "lines": text.count("\n"), "bytes": len(text.encode()), "typed_after_line": marker_line,
        "indent_by_spaces": args.indent_by_spaces,
        "edits": len(edits), "debounce_ms": args.debounce_ms, "findings_on_open": len(first),
        "load_average_start": load_start, "load_average_end": load_end,
        "wall_ms": {"p50": percentile(walls, .5), "p90": percentile(walls, .9), "p99": percentile(walls, .99),
                    "max": max(walls)},
        "server_cpu_ms": {"p50": percentile(cpus, .5), "p90": percentile(cpus, .9), "p99": percentile(cpus, .99),
                          "max": max(cpus), "mean": cpu_total / len(edits),
                          "mean_from_stat_ticks": ticks * 1000 / os.sysconf("SC_CLK_TCK") / len(edits)},
        "server_analysis_ms": {"p50": percentile(analysis_us, .5), "p99": percentile(analysis_us, .99)},
        "units_reanalysed_mean": statistics.mean(reanalysed) if reanalysed else None,
        "units_mean": statistics.mean(units) if units else None,
        "whole_file": {"count": whole, "share": whole / len(edits), "reasons": reasons},
        "kept_while_broken": kept,
        "log_lines_missing": len(missing),
        "open": {"wall_ms": open_wall, "server_cpu_ms": open_cpu},
        "check_from_scratch": {"runs": args.scratch_runs, "wall_ms": scratch_wall, "cpu_ms": scratch_cpu},
    }
    print_report(figures)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(figures, f, indent=2)
    return 0


def print_report(f):
    print(f"{f['file']}: {f['lines']} lines, {f['bytes']} bytes, {f['findings_on_open']} diagnostics on open")
    spaces = ", indentation a space at a time" if f.get("indent_by_spaces") else ""
    print(f"  {f['edits']} edits typed after line {f['typed_after_line']} (debounce {f['debounce_ms']} ms{spaces}); "
          f"load average {f['load_average_start']} at the start, {f['load_average_end']} at the end")
    w, c, a = f["wall_ms"], f["server_cpu_ms"], f["server_analysis_ms"]
    print(f"  wall per edit        p50 {w['p50']:7.2f}  p90 {w['p90']:7.2f}  p99 {w['p99']:7.2f}  max {w['max']:7.2f} ms")
    print(f"  server CPU per edit  p50 {c['p50']:7.2f}  p90 {c['p90']:7.2f}  p99 {c['p99']:7.2f}  max {c['max']:7.2f} ms"
          f"  (mean {c['mean']:.2f}; from /proc/PID/stat ticks {c['mean_from_stat_ticks']:.2f})")
    print(f"  server analysis      p50 {a['p50']:7.2f}  p99 {a['p99']:7.2f} ms (its debug log);"
          f" units re-analysed {f['units_reanalysed_mean']:.1f} of {f['units_mean']:.1f} on average")
    wf = f["whole_file"]
    print(f"  whole-file checks    {wf['count']} of {f['edits']} edits ({100 * wf['share']:.1f} %)")
    for reason, n in sorted(wf["reasons"].items(), key=lambda kv: -kv[1]):
        print(f"    {n:4d}  {reason}")
    if f["kept_while_broken"]:
        print(f"  text with syntax errors, the last good findings kept (no analysis): {f['kept_while_broken']} edits")
    if f["log_lines_missing"]:
        print(f"  ({f['log_lines_missing']} edits had no analysis line in the server's log)")
    s = f["check_from_scratch"]
    print(f"  from scratch: preflight check wall {s['wall_ms']:.1f} ms, CPU {s['cpu_ms']:.1f} ms (median of {s['runs']});"
          f" server didOpen wall {f['open']['wall_ms']:.1f} ms, CPU {f['open']['server_cpu_ms']:.1f} ms")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("preflight", help="the preflight executable")
    parser.add_argument("file", help="the Python file to type into")
    parser.add_argument("--edits", type=int, default=200)
    parser.add_argument("--debounce-ms", type=int, default=0)
    parser.add_argument("--scratch-runs", type=int, default=5)
    parser.add_argument("--json", help="also write the figures to this file")
    parser.add_argument("--server-log", help="write the server's whole debug log (stderr) to this file")
    parser.add_argument("--indent-by-spaces", action="store_true",
                        help="type Enter alone, then each space of the indentation as an edit of its own")
    return run(parser.parse_args())


if __name__ == "__main__":
    sys.exit(main())
