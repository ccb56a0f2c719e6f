"""Spec rules through the Python module's own conventions (numpy's negative axes, ONNX shapes,
lengths without the axis dimension, integer dtypes converted): each call breaks one rule and the
test asserts the rule id AND the message, where the other Python tests check the id alone or not
at all. Expected values are written out by hand."""
import numpy as np
import pytest

import dmlref

F32 = np.float32


def error_of(call):
    with pytest.raises(dmlref.Error) as e:
        call()
    return e.value


# (call, code, text the message must hold)
RULES = [
    # J1, J4 and S4 with numpy's negative axes: the legal range is numpy's, [-ndim, ndim - 1].
    (lambda: dmlref.join([]), "J1", "dmlref.join: len(arrays) is 0; it must be greater than 0"),
    (lambda: dmlref.join([np.zeros((2, 3), F32)], axis=-3), "J4",
     "dmlref.join: axis is -3 but arrays[0].ndim is 2; axis must be in [-2, 1]"),
    (lambda: dmlref.split(np.zeros((4, 2), F32), []), "S1",
     "dmlref.split: len(sizes) is 0; it must be greater than 0"),
    (lambda: dmlref.split(np.zeros((4, 2), F32), 2, axis=-3), "S4",
     "dmlref.split: axis is -3 but x.ndim is 2; axis must be in [-2, 1]"),
    (lambda: dmlref.split(np.zeros((5, 2), F32), 2), "S6",
     "x.shape[0] is 5, which does not divide evenly into 2 outputs"),
    # SCATTER: SC1, SC4 (negative axis), SC6, SC7 and both SC8 ranges.
    (lambda: dmlref.scatter(np.zeros((2, 3), F32), np.zeros(3, np.int32), np.zeros(3, F32)),
     "SC1", "dmlref.scatter: indices.ndim is 1 but data.ndim is 2"),
    (lambda: dmlref.scatter(np.zeros((2, 3), F32), np.zeros((2, 3), np.int32),
                            np.zeros((2, 3), F32), axis=-3),
     "SC4", "dmlref.scatter: axis is -3 but data.ndim is 2; axis must be in [-2, 1]"),
    (lambda: dmlref.scatter(np.zeros((2, 3), F32), np.zeros((2, 3), np.int32),
                            np.zeros((2, 2), F32)),
     "SC6", "updates.shape[1] is 2 but indices.shape[1] is 3"),
    (lambda: dmlref.scatter(np.zeros((2, 3), F32), np.zeros((2, 2), np.int32),
                            np.zeros((2, 2), F32), axis=0),
     "SC7", "indices.shape[1] is 2 but data.shape[1] is 3; every dimension except axis (0) must "
     "match"),
    # int64 indices by default (signed range); an int8 array becomes int32 (still signed).
    (lambda: dmlref.scatter(np.zeros((2, 3), F32), np.array([[0, -4], [0, 0]]),
                            np.zeros((2, 2), F32), axis=-1),
     "SC8", "indices[0, 1] is -4 but data.shape[1] is 3; indices must lie in [-3, 2]"),
    (lambda: dmlref.scatter(np.zeros((2, 3), F32), np.array([[0, 3], [0, 0]], np.int8),
                            np.zeros((2, 2), F32), axis=1),
     "SC8", "indices[0, 1] is 3 but data.shape[1] is 3; indices must lie in [-3, 2]"),
    (lambda: dmlref.scatter(np.zeros((2, 3), F32), np.array([[0, 3], [0, 0]], np.uint32),
                            np.zeros((2, 2), F32), axis=1),
     "SC8", "indices[0, 1] is 3 but data.shape[1] is 3; indices must lie in [0, 2]"),
    # GATHER_ND1 with ONNX's shapes: G5, G8, and G10 naming the dimension the index addresses.
    (lambda: dmlref.gather_nd1(np.zeros((2, 3), F32), np.zeros((2, 1), np.int32), batch_dims=2),
     "G5", "dmlref.gather_nd1: batch_dims is 2 but x.ndim is 2 and indices.ndim is 2"),
    (lambda: dmlref.gather_nd1(np.zeros((2, 3), F32), np.zeros((3, 1), np.int32), batch_dims=1),
     "G8", "indices.shape[0] is 3 but x.shape[0] is 2; batch dimension 0 of batch_dims (1) must "
     "have the same size in both"),
    (lambda: dmlref.gather_nd1(np.zeros((2, 3), F32), np.array([[0, -4]])),
     "G10", "indices[0, 1] is -4 but x.shape[1] is 3; indices must lie in [-3, 2]"),
    # ONNX's result shape would need 7 + 7 = 14 dimensions; DirectML's output holds at most 8.
    (lambda: dmlref.gather_nd1(np.zeros((2,) * 8, F32), np.zeros((2,) * 7 + (1,), np.int32)),
     "G9", "the output needs (indices.ndim - 1) + (x.ndim - batch_dims - indices.shape[7]) = "
     "7 + 7 = 14 dimensions but ndim is 8"),
    # REVERSE_SUBSEQUENCES: R1, R5 (negative axis), and uint64 lengths (R4) needing 5_0.
    (lambda: dmlref.reverse_subsequences(np.zeros((2, 3), F32), np.zeros((1, 2, 1), np.uint32),
                                         axis=1),
     "R1", "dmlref.reverse_subsequences: lengths.ndim is 3 but x.ndim is 2"),
    (lambda: dmlref.reverse_subsequences(np.zeros((2, 3), F32), np.zeros((2, 3), np.uint32),
                                         axis=-3),
     "R5", "axis is -3 but x.ndim is 2; axis must be in [-2, 1]"),
    (lambda: dmlref.reverse_subsequences(np.zeros((2, 3), F32), np.array([1, 2**40]), axis=1,
                                         feature_level="4_1"),
     "FeatureLevel", "lengths.dtype uint64 needs feature_level '5_0'; the target is "
     "feature_level '4_1'"),
    # T12 and T13 on out=.
    (lambda: dmlref.join([np.zeros((2, 3), F32)] * 2, out=np.lib.stride_tricks.as_strided(
        np.zeros(3, F32), (4, 3), (0, 4))),
     "T12", "dmlref.join: out.strides[0] is 0 with shape[0] 4; an output must not address an "
     "element twice"),
]


@pytest.mark.parametrize("call,code,text", RULES)
def test_rule_code_and_message(call, code, text):
    e = error_of(call)
    assert e.code == code, str(e)
    assert text in str(e), str(e)


def test_t13_in_place_names_both_byte_ranges():
    a = np.zeros((2, 3), F32)
    e = error_of(lambda: dmlref.reverse_subsequences(a, np.zeros(2, np.uint32), axis=1, out=a))
    assert e.code == "T13"
    assert "out (bytes [0, 24)) overlaps x (bytes [0, 24))" in str(e), str(e)


def test_negative_axis_is_the_spec_axis_plus_ndim():
    # Spec examples driven with numpy's negative axes: JOIN example 2 along -1 (Axis 3), SPLIT
    # example 2 along -1, REVERSE example 2 along -2 (Axis 2) with lengths without the axis.
    ins = [np.array([[[[1, 2], [3, 4]]]], F32), np.array([[[[5, 6], [7, 8]]]], F32),
           np.array([[[[9, 10], [11, 12]]]], F32)]
    y = dmlref.join(ins, axis=-1)
    assert y.shape == (1, 1, 2, 6)
    assert y.ravel().tolist() == [1, 2, 5, 6, 9, 10, 3, 4, 7, 8, 11, 12]
    x = np.arange(1, 13, dtype=F32).reshape(1, 1, 6, 2)
    a, b = dmlref.split(x, 2, axis=-1)
    assert a.shape == b.shape == (1, 1, 6, 1)
    assert a.ravel().tolist() == [1, 3, 5, 7, 9, 11] and b.ravel().tolist() == [2, 4, 6, 8, 10, 12]
    x = np.arange(1, 13, dtype=F32).reshape(1, 1, 3, 4)
    r = dmlref.reverse_subsequences(x, np.array([[[2, 3, 1, 0]]]), axis=-2)
    assert r.ravel().tolist() == [5, 10, 3, 4, 1, 6, 7, 8, 9, 2, 11, 12]


def test_scatter_example_2_and_its_printed_sizes():
    # SCATTER example 2 (3x3 input) with numpy's default int64 indices, then as printed ({2,3}):
    # index 2 is out of range for a size of 2 (SC8).
    idx = np.array([[1, 0, 2], [0, 2, 1]])
    upd = np.array([[10, 11, 12], [20, 21, 22]], F32)
    y = dmlref.scatter(np.zeros((3, 3), F32), idx, upd, axis=0)
    assert y.tolist() == [[20, 11, 0], [10, 0, 22], [0, 21, 12]]
    e = error_of(lambda: dmlref.scatter(np.zeros((2, 3), F32), idx, upd, axis=0))
    assert e.code == "SC8"
    assert "indices[0, 2] is 2 but data.shape[0] is 2; indices must lie in [-2, 1]" in str(e)


def test_gather_nd1_example_3_with_onnx_shapes():
    # Example 3's sizes: Input {3,4,5,6,7} (r = 5), Indices {1,1,1,2,3} (q = 3). In ONNX's shapes
    # the indices are (1, 2, 3) and the result (1, 2, 6, 7): Output {1,1,2,6,7} without its
    # leading 1, not {1,2,5,6,7} (the page's formula line).
    x = np.arange(3 * 4 * 5 * 6 * 7, dtype=F32).reshape(3, 4, 5, 6, 7)
    idx = np.array([[[2, 3, 4], [0, 1, -3]]])
    y = dmlref.gather_nd1(x, idx)
    assert y.shape == (1, 2, 6, 7)
    assert np.array_equal(y[0, 0], x[2, 3, 4]) and np.array_equal(y[0, 1], x[0, 1, 2])
