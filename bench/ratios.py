#!/usr/bin/env python3
"""Markdown tables from the Google Benchmark JSON that dmlref's benchmarks write.

    python3 bench/ratios.py [--sizes 1MiB,16MiB,256MiB] [--machine TEXT] bench_table.json [...]

Every dmlref benchmark reports memcpy_ratio (its bytes per second over memcpy's for the same byte
count, measured in the same process); the first table is that counter, one row per case, one
column per size. Run with --benchmark_repetitions=N --benchmark_report_aggregates_only=true and the
median of the repetitions is used; without repetitions, the single result. Two more tables appear
where a file has what they need: elementwise/... and scatter/... over their bare indexed loop
(indexed/...), and validate*/... as a share of the operator's time.
"""
import argparse
import json
import re
import sys


def size_name(b):
    b = int(b)
    return f"{b >> 20} MiB" if b >= 1 << 20 else f"{b >> 10} KiB" if b >= 1 << 10 else f"{b} B"


def parse_size(text):
    m = re.fullmatch(r"\s*(\d+)\s*(KiB|MiB|GiB|B)?\s*", text)
    if not m:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size such as 1MiB or 65536")
    return int(m.group(1)) << {"B": 0, None: 0, "KiB": 10, "MiB": 20, "GiB": 30}[m.group(2)]


def table(title, rows, columns):
    print(f"\n{title}\n\n| case | " + " | ".join(map(size_name, columns)) + " |")
    print("|---|" + "---:|" * len(columns))
    for name, cells in rows:
        print(f"| {name} | " + " | ".join(
            f"{cells[c]:.2f}" if c in cells else "–" for c in columns) + " |")


def machine(context):
    caches = [c for c in context.get("caches", []) if c.get("type") in ("Unified", "Data")]
    largest = max(caches, key=lambda c: c.get("size", 0), default=None)
    parts = [f"{context.get('num_cpus', '?')} CPUs at {context.get('mhz_per_cpu', '?')} MHz"]
    if largest:
        parts.append(f"L{largest['level']} {largest['size'] >> 20} MiB")
    if context.get("load_avg"):
        parts.append("load average " + ", ".join(f"{x:.1f}" for x in context["load_avg"]))
    return "; ".join(parts) + f" ({context.get('date', 'date unknown')})"


def results(data):
    """name -> result: the medians when the file has aggregates, else the plain runs."""
    runs = data["benchmarks"]
    medians = [b for b in runs if b.get("aggregate_name") == "median"]
    chosen = medians if medians else [b for b in runs if b.get("run_type", "iteration") == "iteration"]
    return {b.get("run_name", b["name"]): b for b in chosen}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+", help="JSON from --benchmark_out=FILE --benchmark_out_format=json")
    parser.add_argument("--sizes", type=lambda t: [parse_size(s) for s in t.split(",")],
                        help="only these byte counts, e.g. 1MiB,16MiB,256MiB")
    parser.add_argument("--machine", help="what to call the machine (default: from the file)")
    args = parser.parse_args()
    for path in args.files:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        by_name = results(data)
        if not by_name:
            sys.exit(f"ratios.py: {path} holds no benchmark results")
        ratio, vs_loop, validation = {}, {}, {}
        for name, b in by_name.items():
            parts = name.split("/")
            head, tail, case = parts[0], parts[-1], "/".join(parts[:-1])
            if not tail.isdigit() or (args.sizes and int(tail) not in args.sizes):
                continue
            if "memcpy_ratio" in b and head != "memcpy" and not head.startswith("validate"):
                ratio.setdefault(case, {})[int(tail)] = b["memcpy_ratio"]
            loop = by_name.get("indexed/" + "/".join(parts[1:]))
            if loop and head != "indexed":
                vs_loop.setdefault(case, {})[int(tail)] = b["bytes_per_second"] / loop["bytes_per_second"]
            check = by_name.get("validate_" + name) or (
                by_name.get("validate/" + "/".join(parts[1:])) if head == "scatter" else None)
            if check:
                validation.setdefault(case, {})[int(tail)] = check["cpu_time"] / b["cpu_time"]
        print(f"## {path}\n\nMeasured on {args.machine or machine(data.get('context', {}))}.")
        for title, cells in (("memcpy_ratio: bytes/s over memcpy's bytes/s (1.00 = as fast as memcpy)", ratio),
                             ("bytes/s over the bare indexed loop's bytes/s", vs_loop),
                             ("validation time over the operator's time", validation)):
            if cells:
                columns = sorted({c for row in cells.values() for c in row})
                # Each bare_<case> (the same bytes by a plain loop) right below its <case>.
                rows = sorted(cells.items(), key=lambda r: (r[0].removeprefix("bare_"), r[0].startswith("bare_")))
                table(title, rows, columns)
        print()


if __name__ == "__main__":
    main()
