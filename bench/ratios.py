#!/usr/bin/env python3
"""Ratio tables from Google Benchmark JSON files written by dmlref's benchmarks.

    python3 bench/ratios.py bench_join.json [more.json ...]

Uses the median of the repetitions (run with --benchmark_repetitions=3
--benchmark_report_aggregates_only=true). Every result named <case>/.../<bytes> is divided by
memcpy/<bytes> from the same file (bytes per second). Results with a bare-loop baseline in the
same file are also divided by it: elementwise/<type>/<bytes> and scatter/<type>/<bytes> by
indexed/<type>/<bytes>. validate*/... results are shown as a share of the operator's time
(validate_<name> over <name>, or validate/<type>/<bytes> over scatter/<type>/<bytes>).
"""
import json
import sys


def size(b):
    b = int(b)
    return f"{b >> 20} MiB" if b >= 1 << 20 else f"{b >> 10} KiB"


def table(title, rows, columns):
    print(f"\n{title}\n\n| case | " + " | ".join(map(size, columns)) + " |")
    print("|---|" + "---:|" * len(columns))
    for name, cells in rows:
        print(f"| {name} | " + " | ".join(
            f"{cells[c]:.2f}" if c in cells else "–" for c in columns) + " |")


def main(paths):
    for path in paths:
        medians = [b for b in json.load(open(path))["benchmarks"]
                   if b.get("aggregate_name") == "median"]
        by_name = {b["run_name"]: b for b in medians}
        memcpy = {n.split("/")[-1]: b["bytes_per_second"] for n, b in by_name.items()
                  if n.startswith("memcpy/")}
        vs_memcpy, vs_loop, validation = {}, {}, {}
        for name, b in by_name.items():
            parts = name.split("/")
            head, tail = parts[0], parts[-1]
            case = "/".join(parts[:-1])
            if head in ("memcpy", "indexed") or head.startswith("validate"):
                continue
            if tail in memcpy and not (head in ("elementwise", "scatter")):
                vs_memcpy.setdefault(case, {})[tail] = b["bytes_per_second"] / memcpy[tail]
            loop = by_name.get("indexed/" + "/".join(parts[1:]))
            if loop:
                vs_loop.setdefault(case, {})[tail] = b["bytes_per_second"] / loop["bytes_per_second"]
            check = by_name.get("validate_" + name) or (
                by_name.get("validate/" + "/".join(parts[1:])) if head == "scatter" else None)
            if check:
                validation.setdefault(case, {})[tail] = check["cpu_time"] / b["cpu_time"]
        print(f"## {path}")
        for title, data in (("bytes/s ÷ memcpy bytes/s (median)", vs_memcpy),
                            ("bytes/s ÷ bare indexed loop bytes/s (median)", vs_loop),
                            ("validation time ÷ operator time (median)", validation)):
            if data:
                columns = sorted({c for cells in data.values() for c in cells}, key=int)
                table(title, sorted(data.items()), columns)
        print()


if __name__ == "__main__":
    main(sys.argv[1:])
