"""Golden model of DirectML's data-movement operators (JOIN, SPLIT, SCATTER, GATHER_ND1,
REVERSE_SUBSEQUENCES) over numpy arrays, computed and validated by the C++ library.

Inputs: numpy arrays of the eleven DirectML types (float64/32/16, int64/32/16/8, uint64/32/16/8)
with any strides, or CPU objects exporting __dlpack__. A rule violation raises dmlref.Error (a
ValueError) whose .code is the rule id, e.g. 'J5'; its message names the Python argument, numpy
shapes and dtypes, and ends with the rule id and its page, e.g. [J5] docs/join.md#J5.
Checking results: dmlref.compare(actual, expected) and dmlref.testing.assert_equal.
"""
from ._dmlref import (  # noqa: F401  (the package's API is the extension's)
    CompareResult,
    Error,
    ScatterCheckResult,
    __version__,
    check_scatter,
    compare,
    gather_nd1,
    get_num_threads,
    join,
    release_scratch_memory,
    reverse_subsequences,
    scatter,
    set_num_threads,
    split,
)
from . import testing  # noqa: F401  (dmlref.testing.assert_equal)

__all__ = [
    "CompareResult",
    "Error",
    "ScatterCheckResult",
    "check_scatter",
    "compare",
    "gather_nd1",
    "get_num_threads",
    "join",
    "release_scratch_memory",
    "reverse_subsequences",
    "scatter",
    "set_num_threads",
    "split",
    "testing",
]
