#!/usr/bin/env python3
"""Independent check of `preflight estimate` against published peak-memory figures.

independent_peaks.json (next to this file) holds 40 peak GPU memory figures measured by
others and published with their conditions (Hugging Face docs, LitGPT, torchtune, a blog's
logs, ...). Each row carries `flags`: the `preflight estimate` arguments that express only
what its source states; everything else is left to the estimator's defaults and listed in
`unstated`. Rows that cannot be expressed honestly carry a one-sentence `excluded` reason.
Nothing here is fitted or tuned: the figures were not used to build the estimator, and this
script only compares.

For every row that is not excluded the script runs

    preflight estimate <flags> --format json

and compares the estimate with the measured peak (peak_gib * 2**30 bytes). What is compared
depends on the row's `measured_what`:

    max_memory_allocated     total_bytes - CUDA_context - fragmentation
    max_memory_reserved      total_bytes - CUDA_context
    nvidia-smi, unstated     total_bytes

and the estimate's interval is shifted by the same amount. Per row it reports the measured
and estimated GiB, the signed error (est - measured) / measured, the interval, whether the
measured peak lies inside it, the interval's width as a share of the measured peak, the band,
and a "false fit": the row names a catalogue GPU, the band is FITS, yet the measured peak as
device memory (the nvidia-smi/unstated figure, or the allocated/reserved figure plus the
estimate's CUDA context) exceeds gpu.usable_bytes. The summary gives rows used and excluded
(with reasons), mean and median absolute error, the share of measured peaks inside the
interval, the median interval width and the false fits, overall and split by task
(train / inference+generate) and by measured_what.

Usage (from the repository root):

    python3 bench/estimator/independent.py --preflight build/server/preflight [--json OUT]

--rows FILE reads another row file. Standard library only. It prints a markdown table and
the summary; --json OUT also writes rows and summary as JSON. Exit status 0 unless preflight
fails to run (cannot be started, exits with a status other than 0 or 1 -- 1 only means the
run is projected not to fit -- or prints no estimate as JSON).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
GIB = 2 ** 30


def load_rows(path):
    with open(path, encoding="utf-8") as f:
        rows = json.load(f)
    if not isinstance(rows, list):
        raise SystemExit(f"{path}: expected a JSON list")
    return rows


def run_preflight(binary, flags):
    cmd = [binary, "estimate", *flags, "--format", "json"]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"could not run {' '.join(cmd)}: {exc}"
    # exit status 1 is a verdict (the run is projected not to fit), not a failure
    if proc.returncode not in (0, 1):
        return None, (f"{' '.join(cmd)} exited {proc.returncode}: "
                      f"{(proc.stderr or proc.stdout).strip()[:400]}")
    try:
        est = json.loads(proc.stdout)
    except json.JSONDecodeError as exc:
        return None, f"{' '.join(cmd)} printed no JSON ({exc}): {proc.stdout[:200]!r}"
    if "total_bytes" not in est or "interval_bytes" not in est:
        return None, f"{' '.join(cmd)} (exit {proc.returncode}) printed no estimate"
    return est, None


def task_group(task):
    return "train" if task == "train" else "inference+generate"


def compare(row, est):
    """Per-row comparison of one estimate with the row's measured peak."""
    what = row.get("measured_what") or "unstated"
    bd = est.get("breakdown", {})
    ctx = bd.get("CUDA_context", 0) or 0
    frag = bd.get("fragmentation", 0) or 0
    if what == "max_memory_allocated":
        shift = ctx + frag
    elif what == "max_memory_reserved":
        shift = ctx
    else:  # nvidia-smi, unstated: the device-wide figure
        shift = 0
    total = est["total_bytes"]
    lo, hi = est["interval_bytes"]
    est_b = total - shift
    lo_b, hi_b = lo - shift, hi - shift
    meas_b = row["peak_gib"] * GIB
    # the measured peak as device memory, comparable with gpu.usable_bytes
    device_b = meas_b if shift == 0 else meas_b + ctx
    gpu = est.get("gpu") or {}
    usable = gpu.get("usable_bytes")
    has_gpu = "--gpu" in row["flags"] and usable is not None
    band = est.get("band")
    false_fit = bool(has_gpu and band == "FITS" and device_b > usable)
    model = est.get("model") or {}
    return {
        "id": row["id"],
        "task": row.get("task"),
        "task_group": task_group(row.get("task")),
        "measured_what": what,
        "flags": row["flags"],
        "catalogue_model": model.get("id"),
        "compared": {"max_memory_allocated": "total - CUDA_context - fragmentation",
                     "max_memory_reserved": "total - CUDA_context"}.get(what, "total"),
        "measured_gib": meas_b / GIB,
        "estimated_gib": est_b / GIB,
        "error_pct": 100.0 * (est_b - meas_b) / meas_b,
        "interval_gib": [lo_b / GIB, hi_b / GIB],
        "inside": lo_b <= meas_b <= hi_b,
        "width_pct": 100.0 * (hi_b - lo_b) / meas_b,
        "band": band,
        "gpu": gpu.get("id") if has_gpu else None,
        "usable_gib": usable / GIB if has_gpu else None,
        "measured_device_gib": device_b / GIB,
        "false_fit": false_fit,
        "estimate_total_gib": total / GIB,
        "CUDA_context_gib": ctx / GIB,
        "fragmentation_gib": frag / GIB,
    }


def summarise(results):
    if not results:
        return {"rows": 0}
    abs_err = [abs(r["error_pct"]) for r in results]
    return {
        "rows": len(results),
        "mean_abs_error_pct": statistics.mean(abs_err),
        "median_abs_error_pct": statistics.median(abs_err),
        "inside_interval": sum(r["inside"] for r in results),
        "inside_interval_share": sum(r["inside"] for r in results) / len(results),
        "median_width_pct": statistics.median(r["width_pct"] for r in results),
        "underestimates": sum(r["error_pct"] < 0 for r in results),
        "false_fits": [r["id"] for r in results if r["false_fit"]],
    }


def fmt_summary(name, s):
    if not s.get("rows"):
        return f"- {name}: no rows"
    ff = s["false_fits"]
    return (f"- {name}: {s['rows']} rows; mean |error| {s['mean_abs_error_pct']:.1f}%, "
            f"median |error| {s['median_abs_error_pct']:.1f}%; inside interval "
            f"{s['inside_interval']}/{s['rows']} ({100 * s['inside_interval_share']:.0f}%); "
            f"median interval width {s['median_width_pct']:.1f}%; underestimates "
            f"{s['underestimates']}; false fits {len(ff)}" + (f" ({', '.join(ff)})" if ff else ""))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--preflight", default="build/server/preflight", help="preflight binary")
    ap.add_argument("--rows", default=os.path.join(HERE, "independent_peaks.json"),
                    help="row file (default: independent_peaks.json next to this script)")
    ap.add_argument("--json", metavar="OUT", help="write rows and summary as JSON")
    args = ap.parse_args()

    rows = load_rows(args.rows)
    results, excluded, failures = [], [], []
    for row in rows:
        if row.get("excluded"):
            excluded.append({"id": row["id"], "reason": row["excluded"]})
            continue
        est, err = run_preflight(args.preflight, row["flags"])
        if err:
            failures.append({"id": row["id"], "error": err})
            continue
        res = compare(row, est)
        res["unstated"] = row.get("unstated") or []
        results.append(res)

    print("| id | measured | compared | measured GiB | estimated GiB | error % | interval GiB "
          "| inside | width % | band | false fit |")
    print("|---|---|---|---:|---:|---:|---|---|---:|---|---|")
    for r in results:
        lo, hi = r["interval_gib"]
        print(f"| {r['id']} | {r['measured_what']} | {r['compared']} | {r['measured_gib']:.2f} "
              f"| {r['estimated_gib']:.2f} | {r['error_pct']:+.1f} | [{lo:.2f}, {hi:.2f}] "
              f"| {'yes' if r['inside'] else 'no'} | {r['width_pct']:.1f} | {r['band']} "
              f"| {'FALSE FIT' if r['false_fit'] else ''} |")

    summary = {"rows_total": len(rows), "rows_used": len(results), "rows_excluded": len(excluded),
               "preflight_failures": len(failures), "excluded": excluded,
               "all": summarise(results), "by_task": {}, "by_measured_what": {}}
    for g in ("train", "inference+generate"):
        summary["by_task"][g] = summarise([r for r in results if r["task_group"] == g])
    for w in sorted({r["measured_what"] for r in results}):
        summary["by_measured_what"][w] = summarise([r for r in results if r["measured_what"] == w])

    print()
    print(f"## Summary ({args.preflight})")
    print()
    print(f"- rows: {len(rows)}; used {len(results)}; excluded {len(excluded)}"
          + (f"; preflight failed on {len(failures)}" if failures else ""))
    print(fmt_summary("all", summary["all"]))
    print()
    print("By task:")
    for g, s in summary["by_task"].items():
        print(fmt_summary(g, s))
    print()
    print("By measured_what:")
    for w, s in summary["by_measured_what"].items():
        print(fmt_summary(w, s))
    print()
    print("Excluded:")
    for e in excluded:
        print(f"- {e['id']}: {e['reason']}")
    if failures:
        print()
        print("preflight failures:")
        for f in failures:
            print(f"- {f['id']}: {f['error']}")

    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"preflight": args.preflight, "rows_file": args.rows, "summary": summary,
                       "rows": results, "failures": failures}, f, indent=2)
            f.write("\n")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
