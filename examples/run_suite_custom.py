#!/usr/bin/env python3
"""Runs dmlref's conformance suite through your own runtime, then lets dmlref-check grade it.

Here "your runtime" is numpy for JOIN and SPLIT; the other operators go through dmlref's own
reference (case.run_reference()), or are left out with --only-mine. Replace the two functions below
with calls into your CUDA, HIP, Vulkan or simulator implementation: each gets the case (its desc,
its input tensors as numpy views of their buffers) and the output buffers, already filled with the
sentinel, and writes the output tensors through their strides.

    dmlref-check generate --out suite --ops join,split
    python3 examples/run_suite_custom.py suite results
    dmlref-check verify suite --results results

Invalid cases: a runtime built on DirectML refuses them in CreateOperator or when binding; it then
reports the refusal as DxDispatch does (exit code and marker line of that stage). This example has
no validation of its own, so it reports the refusal the suite expects, at the stage the case names.
"""
import argparse
import sys

import numpy as np

import dmlref.suite


def numpy_join(case, buffers):
    """JOIN: the inputs concatenated along Axis, written through the output's strides."""
    inputs = [t.view() for t in case.desc["InputTensors"]]
    out = case.outputs[0].view(buffers[0])
    out[...] = np.concatenate(inputs, axis=case.desc["Axis"])


def numpy_split(case, buffers):
    """SPLIT: the input cut along Axis into the outputs' sizes."""
    axis = case.desc["Axis"]
    x = case.desc["InputTensor"].view()
    cuts = np.cumsum([o.tensor.sizes[axis] for o in case.outputs])[:-1]
    for output, buffer, piece in zip(case.outputs, buffers, np.split(x, cuts, axis=axis)):
        output.view(buffer)[...] = piece


IMPLEMENTATIONS = {"join": numpy_join, "split": numpy_split}


def run_case(case, results, implementations):
    """Runs one case the way a runtime does and writes what dmlref-check verify reads."""
    if not case.valid:
        exit_code = dmlref.suite.EXIT_CREATE if case.stage == "create" else dmlref.suite.EXIT_BIND
        case.write_result(results, outputs=None, exit_code=exit_code, stage=case.stage)
        return
    implementation = implementations.get(case.op)
    if implementation is None:
        buffers = case.run_reference()  # dmlref's golden model stands in for this operator
    else:
        buffers = [o.new_buffer() for o in case.outputs]
        try:
            implementation(case, buffers)
        except Exception as e:  # a runtime that crashes on a valid case fails it, with its log
            case.write_result(results, outputs=None, exit_code=1, log=f"{type(e).__name__}: {e}\n")
            return
    case.write_result(results, outputs=buffers, exit_code=0)


def run_suite(suite_dir, results, implementations=IMPLEMENTATIONS, only_mine=False, filter=None):
    suite = dmlref.suite.load(suite_dir)  # refuses a suite that is not as generated
    suite.check_results_dir(results)      # results never go into the suite
    ops = sorted(implementations) if only_mine else None
    count = 0
    for case in suite.cases(ops=ops, filter=filter):
        run_case(case, results, implementations)
        count += 1
    return count


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("suite")
    parser.add_argument("results")
    parser.add_argument("--only-mine", action="store_true",
                        help="run only the operators implemented here (JOIN, SPLIT)")
    parser.add_argument("--filter", help="only cases whose <op>/<case> this regex matches")
    args = parser.parse_args()
    try:
        count = run_suite(args.suite, args.results, only_mine=args.only_mine, filter=args.filter)
    except dmlref.suite.SuiteError as e:
        print(f"run_suite_custom.py: {e}", file=sys.stderr)
        return 2
    print(f"ran {count} cases; now: dmlref-check verify {args.suite} --results {args.results}"
          + (" --filter '^(join|split)/'" if args.only_mine else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
