"""What a numpy/pytest user meets: messages in numpy's words, dmlref.testing.assert_equal and
compare's fields, integer dtypes of numpy's defaults for indices and lengths, DLPack failures, and
reversed or broadcast views that cost what they hold."""
import re

import numpy as np
import pytest

import dmlref
from dmlref.testing import assert_equal

F16 = np.float16


# ---- messages in the caller's words ----------------------------------------------------------

def error_of(call):
    with pytest.raises(dmlref.Error) as e:
        call()
    return e.value


# (call, code, text the message must hold)
BAD_CALLS = [
    (lambda: dmlref.join([np.zeros((5, 3), F16), np.zeros((5, 4), F16)], axis=0), "J5",
     "dmlref.join: arrays[1].shape[1] is 4 but arrays[0].shape[1] is 3; every dimension except "
     "axis (0) must match"),
    (lambda: dmlref.join([np.zeros((2, 3)), np.zeros((2, 3), np.float32)]), "J3",
     "arrays[1].dtype is float32 but arrays[0].dtype is float64"),
    (lambda: dmlref.join([np.zeros((2, 3)), np.zeros((1, 2, 3))]), "J2",
     "arrays[1].ndim is 3 but arrays[0].ndim is 2"),
    (lambda: dmlref.join([np.zeros((2, 3), F16)] * 2, out=np.zeros((5, 3), F16)), "J6",
     "but out.shape[0] is 5"),
    (lambda: dmlref.join([np.zeros((2, 3), F16)], out=np.zeros((2, 4), F16)), "J5",
     "out.shape[1] is 4"),
    (lambda: dmlref.join([np.zeros((2, 3), F16)], out=np.zeros((2, 3), np.float32)), "J3",
     "float32"),
    (lambda: dmlref.join([np.zeros((2, 3)), np.zeros((1,) * 9)]), "T2",
     "dmlref.join: arrays[1].ndim is 9; it must be between 1 and 8"),
    (lambda: dmlref.join([np.zeros((2, 3))], axis=5), "J4", "axis is 5"),
    (lambda: dmlref.split(np.zeros((5, 2)), [1, 2]), "S6",
     "dmlref.split: sizes add up to 3 but x.shape[0] is 5"),
    (lambda: dmlref.scatter(np.zeros((3, 4), F16), np.zeros((3, 4), np.int32),
                            np.zeros((3, 4), np.float32)), "SC2",
     "updates.dtype is float32 but data.dtype is float16"),
    (lambda: dmlref.scatter(np.zeros((3, 4)), np.zeros((3, 4), np.int32), np.zeros((3, 4)),
                            out=np.zeros((4, 4))), "SC5",
     "out.shape[0] is 4 but data.shape[0] is 3; out.shape (4, 4) must equal data.shape (3, 4)"),
    (lambda: dmlref.scatter(np.zeros(3), np.array([0, 0]), np.array([1.0, 2.0]),
                            duplicates="reject"), "ScatterDuplicate", "dmlref.scatter: "),
    (lambda: dmlref.gather_nd1(np.zeros((3, 4)), np.array([[5]])), "G10",
     "dmlref.gather_nd1: indices[0, 0] is 5 but x.shape[0] is 3"),
    (lambda: dmlref.gather_nd1(np.zeros((3, 4)), np.array([[0]]), out=np.zeros((2, 4))), "G9",
     "out.shape is (2, 4)"),
    (lambda: dmlref.reverse_subsequences(np.zeros((2, 3), np.int8), np.zeros((2, 3), np.uint32),
                                         axis=1), "R3", "lengths.shape[1] is 3"),
    (lambda: dmlref.reverse_subsequences(np.zeros((2, 3)), np.zeros(2, np.uint32), axis=1,
                                         out=np.zeros((3, 3))), "R2",
     "out.shape[0] is 3 but x.shape[0] is 2; the output must have the input's shape (2, 3)"),
    (lambda: dmlref.gather_nd1(np.zeros(3), np.array([[1.0]])), "G3",
     "indices.dtype is float64; indices must have an integer dtype"),
    (lambda: dmlref.scatter(np.zeros(3), np.array([1.0]), np.zeros(1)), "SC3",
     "indices.dtype is float64; indices must have an integer dtype"),
    (lambda: dmlref.reverse_subsequences(np.zeros((2, 3)), np.ones(2, np.float16), axis=1), "R4",
     "lengths.dtype is float16; lengths must have an integer dtype"),
    (lambda: dmlref.join([np.zeros((2, 3))], feature_level="3_0"), "FeatureLevel",
     "arrays[0].dtype float64 needs feature_level '4_1'; the target is feature_level '3_0'"),
]


@pytest.mark.parametrize("call,code,text", BAD_CALLS)
def test_messages_speak_numpy(call, code, text):
    e = error_of(call)
    message = str(e)
    assert e.code == code
    assert text in message
    func = re.match(r"dmlref\.(\w+): ", message)
    assert func, message
    page = {"J": "join", "S": "split", "SC": "scatter", "G": "gather_nd1",
            "R": "reverse_subsequences", "T": "tensors"}.get(re.sub(r"\d+$", "", code), "errors")
    assert message.endswith(f" [{code}] docs/{page}.md#{code}"), message
    # None of DirectML's words: tensor names, fields, brace lists, upper-case dtypes.
    for word in ("Tensor", "Sizes", "DimensionCount", "DataType", "Axis", "{", "FLOAT", "INT",
                 "DML_"):
        assert word not in message, (word, message)


def test_anchor_of_every_rule_link_exists():
    import pathlib
    docs = pathlib.Path(__file__).resolve().parents[2] / "docs"
    for call, code, _ in BAD_CALLS:
        link = str(error_of(call)).rsplit(" ", 1)[1]
        page, anchor = link.split("#")
        assert f'id="{anchor}"' in (docs / page.split("/", 1)[1]).read_text(), link


def test_out_of_an_unsupported_dtype_names_it():
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(TypeError, match=r"dmlref\.join: out has dtype >f4"):
        dmlref.join([x], out=np.zeros((2, 3), ">f4"))
    with pytest.raises(TypeError, match=r"dmlref\.join: arrays\[0\] has dtype >f4"):
        dmlref.join([x.astype(">f4")])
    with pytest.raises(TypeError, match=r"dmlref\.reverse_subsequences: out has dtype complex64"):
        dmlref.reverse_subsequences(x, np.zeros(2, np.uint32), axis=1,
                                    out=np.zeros((2, 3), np.complex64))


class BadDevice:
    def __init__(self, device=None, error=None):
        self.device, self.error = device, error

    def __dlpack__(self, **kwargs):
        raise BufferError("cannot export")

    def __dlpack_device__(self):
        if self.error:
            raise self.error
        return self.device


@pytest.mark.parametrize("obj,text", [
    (BadDevice(device=None), "__dlpack_device__() returned None"),
    (BadDevice(device=("cpu",)), "__dlpack_device__() returned ('cpu',)"),
    (BadDevice(error=KeyError("k")), "__dlpack_device__() raised KeyError: 'k'"),
    (BadDevice(device=(1, 0)), "__dlpack__() raised BufferError: cannot export"),
    (BadDevice(device=(2, 0)), "is on DLPack device type 2"),
])
def test_dlpack_failures_are_type_errors_naming_the_object(obj, text):
    with pytest.raises(TypeError) as e:
        dmlref.gather_nd1(np.zeros(3), obj)
    assert str(e.value).startswith("dmlref.gather_nd1: indices (a BadDevice)")
    assert text in str(e.value)


# ---- compare and assert_equal ----------------------------------------------------------------

def test_compare_fields():
    expected = np.arange(12, dtype=np.float32).reshape(3, 4)
    actual = expected.copy()
    actual[0, 1] = 1.5      # 0.5 apart
    actual[2, 3] = -11.0    # 22 apart
    r = dmlref.compare(actual, expected)
    assert not r and r.mismatch_count == 2 and r.element_count == 12
    assert r.indices.dtype == np.int64 and r.indices.tolist() == [[0, 1], [2, 3]]
    assert np.array_equal(actual[tuple(r.indices.T)], [1.5, -11.0])
    assert r.max_abs_diff == 22.0
    assert r.max_ulp_diff == int(abs(np.int64(np.float32(-11).view(np.int32) & 0x7FFFFFFF)
                                     + np.float32(11).view(np.int32)))
    assert r.mismatches[0] == ((0, 1), np.float32(1.5), np.float32(1.0))
    assert not r.truncated
    ok = dmlref.compare(expected, expected.copy())
    assert ok and ok.max_abs_diff == 0 and ok.max_ulp_diff == 0 and ok.indices.shape == (0, 2)


def test_compare_caps_indices_and_says_so():
    expected = np.zeros((4, 5), np.int16)
    actual = np.ones((4, 5), np.int16)
    r = dmlref.compare(actual, expected, max_report=3)
    assert r.mismatch_count == 20 and r.indices.shape == (3, 2) and r.truncated
    assert "... and 17 more not shown (max_report=3)" in str(r)
    assert dmlref.compare(actual, expected, max_report=100).indices.shape == (20, 2)


def test_compare_integer_differences_are_exact():
    lo, hi = np.iinfo(np.int64).min, np.iinfo(np.int64).max
    r = dmlref.compare(np.array([hi], np.int64), np.array([lo], np.int64))
    assert r.max_abs_diff == 2**64 - 1 and isinstance(r.max_abs_diff, int)
    r = dmlref.compare(np.array([0, 250], np.uint8), np.array([3, 5], np.uint8))
    assert r.max_abs_diff == 245 and r.max_ulp_diff == 245


def test_compare_leading_ones_untouched_and_nans():
    expected = np.array([1.0, np.nan], np.float16)
    assert dmlref.compare(expected[None, None], expected)  # actual with leading 1s
    assert dmlref.compare(expected, expected[None])         # expected with leading 1s
    with pytest.raises(dmlref.Error) as e:
        dmlref.compare(np.zeros((2, 1), np.float16), expected)
    assert e.value.code == "ShapeMismatch"
    assert "actual has shape (2, 1) but expected has shape (2,)" in str(e.value)
    payload = np.array([0x7E01], np.uint16).view(np.float16)  # a NaN with another payload
    other = np.array([1.0, payload[0]], np.float16)
    assert dmlref.compare(other, expected)                        # equal_nan=True by default
    r = dmlref.compare(other, expected, equal_nan=False)
    assert not r and r.max_ulp_diff is None and np.isnan(r.max_abs_diff)
    assert "[1]: nan (0x7e01), nan (0x7e00)" in str(r)
    before = np.full(2, 7.0, np.float16)
    r = dmlref.compare(before.copy(), expected, untouched=before)
    assert not r and r.actual_untouched and "dispatch skipped" in str(r)


def test_assert_equal_raises_assertion_error_with_the_report():
    expected = np.array([[0.0, 1.0], [2.0, 3.0]])
    actual = expected.copy()
    actual[1, 0] = -0.0
    actual[0, 0] = -0.0
    with pytest.raises(AssertionError) as e:
        assert_equal(actual, expected)
    text = str(e.value)
    assert "Mismatched elements: 2 / 4 (50%)" in text
    assert "Largest absolute difference: 2.0" in text
    assert "Largest ULP difference:" in text
    assert " [0, 0]: -0 (0x8000000000000000), 0 (0x0000000000000000)" in text
    assert " [1, 0]: -0 (0x8000000000000000), 2 (0x4000000000000000)" in text
    assert text == str(dmlref.compare(actual, expected))
    actual[1, 0] = 2.0
    assert_equal(actual, expected, ulp=1)  # -0 == +0 within a tolerance
    with pytest.raises(AssertionError, match=r"actual has shape \(3,\) but expected"):
        assert_equal(np.zeros(3), expected)
    with pytest.raises(AssertionError, match="actual has dtype float32 but expected has dtype"):
        assert_equal(expected.astype(np.float32), expected)
    nan = np.array([np.nan])
    assert_equal(nan, -nan)
    with pytest.raises(AssertionError):
        assert_equal(nan, -nan, equal_nan=False)
    with pytest.raises(AssertionError, match="dispatch skipped"):
        assert_equal(np.zeros(2), np.ones(2), untouched=np.zeros(2))
    assert_equal(dmlref.join([expected, expected]), np.concatenate([expected, expected]))


# ---- integer arguments of numpy's default types -----------------------------------------------

def test_numpy_default_int64_lengths():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    lengths = np.array([4, 0, 2])  # int64, numpy's default
    assert lengths.dtype == np.int64
    expected = dmlref.reverse_subsequences(x, lengths.astype(np.uint32), axis=1)
    assert np.array_equal(dmlref.reverse_subsequences(x, lengths, axis=1), expected)
    assert np.array_equal(dmlref.reverse_subsequences(x, lengths[:, None], axis=1), expected)
    assert np.array_equal(dmlref.reverse_subsequences(x, [4, 0, 2], axis=-1), expected)
    for dtype in (np.int8, np.int16, np.int32, np.uint8, np.uint16):
        assert np.array_equal(dmlref.reverse_subsequences(x, lengths.astype(dtype), axis=1),
                              expected)
    # Past 32 bits a length is handed on as uint64 (all of the axis), which 4_1 lacks.
    big = np.array([4, 2**40, 2])
    assert np.array_equal(dmlref.reverse_subsequences(x, big, axis=1)[1], x[1, ::-1])
    assert error_of(lambda: dmlref.reverse_subsequences(
        x, big, axis=1, feature_level="4_1")).code == "FeatureLevel"
    assert dmlref.reverse_subsequences(x, lengths, axis=1, feature_level="4_1").shape == (3, 4)
    e = error_of(lambda: dmlref.reverse_subsequences(x, np.array([[4], [-1], [2]]), axis=1))
    assert e.code == "R4"
    assert "lengths[1, 0] is -1" in str(e) and str(e).startswith("dmlref.reverse_subsequences: ")


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.uint8, np.uint16, np.int64])
def test_indices_of_any_integer_dtype(dtype):
    x = np.arange(20, dtype=np.float64).reshape(4, 5)
    idx = np.array([[3], [1], [0]]).astype(dtype)
    assert np.array_equal(dmlref.gather_nd1(x, idx), x[[3, 1, 0]])
    if np.dtype(dtype).kind == "i":
        assert np.array_equal(dmlref.gather_nd1(x, -idx - 1), x[[-4, -2, -1]])
    data = np.zeros(6, np.int32)
    y = dmlref.scatter(data, np.array([5, 0]).astype(dtype), np.array([7, 8], np.int32))
    assert y.tolist() == [8, 0, 0, 0, 0, 7]
    r = dmlref.check_scatter(data, np.array([5, 0]).astype(dtype), np.array([7, 8], np.int32), y)
    assert r
    # The converted indices are the ones checked against: the wrong result is caught.
    r = dmlref.check_scatter(data, np.array([5, 0]).astype(dtype), np.array([7, 8], np.int32),
                             y[::-1])
    assert not r and r.mismatch_count == 2


# ---- reversed and broadcast inputs cost what they hold ----------------------------------------

def test_reversed_broadcast_input_costs_its_two_elements():
    x = np.broadcast_to(np.arange(2, dtype="f4")[::-1], (2**31 - 1, 2))
    assert dmlref.gather_nd1(x, [[3]]).tolist() == [[1.0, 0.0]]
    assert dmlref.gather_nd1(x, [[2**31 - 2, 0]]).tolist() == [1.0]


def test_reversed_sliding_window_is_not_copied():
    # 34 GB as a packed copy (more memory than the test machines have); 8 MiB held.
    from numpy.lib.stride_tricks import sliding_window_view
    base = np.arange(2**20, dtype=np.float64)
    windows = sliding_window_view(base, 2**12)[::-1]
    assert windows.size * 8 > 31 * 2**30 and windows.strides[0] < 0
    rows = np.array([[0], [7], [windows.shape[0] - 1]])
    y = dmlref.gather_nd1(windows, rows)
    assert np.array_equal(y, windows[[0, 7, -1]])
    view = windows[:, :3][::-1, ::-1]
    back = dmlref.reverse_subsequences(view, np.full(view.shape[0], 2), axis=1)
    assert np.array_equal(back, view[:, [1, 0, 2]])


@pytest.mark.parametrize("dtype", [np.float64, np.float16, np.int8, np.uint32])
def test_reversed_operands_in_every_operator(dtype):
    a = (np.arange(24) % 100).astype(dtype).reshape(4, 6)
    r = a[::-1, ::-2]                       # both dimensions reversed
    # Rows and columns reversed through as_strided, from the last element.
    m = np.lib.stride_tricks.as_strided(a[3:, 5:], shape=(3, 4),
                                        strides=(-a.strides[0], -a.strides[1]))
    for v in (r, m):
        assert np.array_equal(dmlref.join([v, v], axis=1), np.concatenate([v, v], axis=1))
        parts = dmlref.split(v, [1, v.shape[0] - 1], axis=0)
        assert np.array_equal(parts[0], v[:1])
        assert np.array_equal(parts[1], v[1:])
        idx = np.zeros(v.shape, np.int64)
        assert np.array_equal(dmlref.scatter(v, idx[:1], v[:1] * 0), np.vstack([v[:1] * 0, v[1:]]))
        assert np.array_equal(dmlref.gather_nd1(v, [[1], [0]]), v[[1, 0]])
        lengths = np.array([0, 2, 9][: v.shape[0]] + [1] * max(0, v.shape[0] - 3))
        y = dmlref.reverse_subsequences(v, lengths, axis=1)
        for row, n in enumerate(lengths):
            n = min(n, v.shape[1])
            assert np.array_equal(y[row], np.concatenate([v[row, :n][::-1], v[row, n:]]))
        out = np.zeros((2 * v.shape[0], v.shape[1]), dtype)[::-1]
        dmlref.join([v, v], axis=0, out=out)
        assert np.array_equal(out, np.concatenate([v, v]))
