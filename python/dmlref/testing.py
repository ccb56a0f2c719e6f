"""Assertions for tests of device results against dmlref's golden outputs, shaped like
numpy.testing's and torch.testing's: ``assert_equal(actual, expected)`` raises ``AssertionError``
(which pytest reports) with the mismatch count, the largest differences and the first mismatches.
"""
from ._dmlref import Error as _Error
from ._dmlref import compare as _compare

__all__ = ["assert_equal"]


def assert_equal(actual, expected, *, ulp=0, equal_nan=True, untouched=None, max_report=10):
    """Raises AssertionError unless ``actual`` equals ``expected`` element by element.

    Both are arrays of one dtype (numpy arrays or CPU objects with ``__dlpack__``, any strides)
    whose shapes are equal up to leading 1s. ``ulp=0`` compares bits exactly (``-0.0`` differs
    from ``0.0``); ``ulp=N`` lets float elements differ by up to N units in the last place (and
    ``-0.0 == 0.0``). ``equal_nan=True`` makes every NaN equal to every NaN; with ``False`` NaNs
    match only with the same bits. ``untouched``: the output buffer's contents from before the
    run, so that a skipped dispatch is named in the message. ``max_report``: how many mismatches
    the message lists.

    The message is ``str(dmlref.compare(actual, expected, ...))``: the number of mismatches out of
    the total, the largest absolute and ULP difference, and the first mismatches as numpy indices
    with both values, their bits shown so NaN payloads and signed zeros are exact. A shape or
    dtype that differs is an AssertionError too.
    """
    __tracebackhide__ = True  # pytest shows the caller's line
    try:
        result = _compare(actual, expected, ulp=ulp, equal_nan=equal_nan, untouched=untouched,
                          max_report=max_report)
    except _Error as e:
        if getattr(e, "code", None) != "ShapeMismatch":
            raise
        raise AssertionError(str(e)) from None
    except TypeError as e:
        if "has dtype" not in str(e) or "must be the same" not in str(e):
            raise
        raise AssertionError(str(e)) from None
    if not result:
        raise AssertionError(str(result))
