"""The Python module against numpy: every operator on all eleven dtypes and odd layouts, out=,
DLPack-only inputs, errors and their rule ids, compare and check_scatter."""
import re

import numpy as np
import pytest

import dmlref

DTYPES = [np.float64, np.float32, np.float16, np.int64, np.int32, np.int16, np.int8,
          np.uint64, np.uint32, np.uint16, np.uint8]
INDEX_DTYPES = [np.int64, np.int32, np.uint64, np.uint32]


def distinct(shape, dtype, start=1):
    """Values that do not repeat (8-bit types: not within 120), so a misplaced element shows."""
    values = np.arange(int(np.prod(shape))) + start
    if np.dtype(dtype).itemsize == 1:
        values %= 120
    return values.astype(dtype).reshape(shape)


def layouts(a):
    """`a` in odd layouts: C order, transposed and reversed (negative strides) with the same values,
    and broadcast (zero strides) from its first row."""
    t = np.ascontiguousarray(a.T).T
    r = np.ascontiguousarray(a[::-1, ::-1])[::-1, ::-1]
    b = np.broadcast_to(a[:1], a.shape)
    assert not t.flags.c_contiguous and r.strides[0] < 0 and b.strides[0] == 0
    return {"c": a, "transposed": t, "reversed": r, "broadcast": b}


LAYOUTS = ["c", "transposed", "reversed", "broadcast"]


class DLPackOnly:
    """A CPU array that offers nothing but DLPack."""

    def __init__(self, array):
        self._array = array

    def __dlpack__(self, **kwargs):
        return self._array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()


def same_bits(a, b):
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


# ---- version ----------------------------------------------------------------------------------

def test_version_is_the_headers_version():
    header = open(__file__.rsplit("/python/", 1)[0] + "/include/dmlref/version.hpp").read()
    parts = [re.search(rf"#define DMLREF_VERSION_{p} (\d+)", header).group(1)
             for p in ("MAJOR", "MINOR", "PATCH")]
    assert dmlref.__version__ == ".".join(parts)
    from importlib.metadata import version
    assert version("dmlref") == dmlref.__version__


# ---- join and split ---------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("axis", [0, 1, -1, -2])
def test_join_equals_concatenate(dtype, layout, axis):
    a = layouts(distinct((3, 4), dtype))[layout]
    b = distinct((3, 4), dtype, start=50)
    c = np.broadcast_to(distinct((1, 4), dtype, start=90), (3, 4))  # zero stride
    y = dmlref.join([a, b, c], axis=axis)
    assert same_bits(y, np.concatenate([a, b, c], axis=axis))
    assert y.flags.c_contiguous


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_split_inverts_join(dtype, layout):
    x = layouts(distinct((4, 7), dtype))[layout]
    parts = dmlref.split(x, sizes=[2, 1, 4], axis=1)
    expected = np.split(x, [2, 3], axis=1)
    assert len(parts) == 3
    for got, want in zip(parts, expected):
        assert same_bits(got, np.ascontiguousarray(want))
    assert same_bits(dmlref.join(parts, axis=-1), np.ascontiguousarray(x))


def test_split_into_equal_pieces_and_negative_axis():
    x = distinct((2, 3, 6), np.int32)
    for got, want in zip(dmlref.split(x, 3, axis=-1), np.split(x, 3, axis=-1)):
        assert same_bits(got, np.ascontiguousarray(want))
    with pytest.raises(dmlref.Error) as e:
        dmlref.split(x, 4, axis=-1)
    assert e.value.code == "S6"


def test_numpy_integers_and_lists_as_arguments():
    x = distinct((2, 6), np.int32)
    parts = dmlref.split(x, np.array([2, 4]), axis=np.int64(-1))
    assert [p.shape for p in parts] == [(2, 2), (2, 4)]
    assert len(dmlref.split(x, np.int32(3), axis=1)) == 3
    assert np.array_equal(dmlref.join([[1, 2], [3]]), [1, 2, 3])  # lists go through numpy
    with pytest.raises(dmlref.Error) as e:
        dmlref.split(x, [7, -1], axis=1)
    assert e.value.code == "T3"
    with pytest.raises(TypeError, match="float"):
        dmlref.split(x, [2.0, 4], axis=1)
    with pytest.raises(dmlref.Error) as e:  # far past 64 bits: still the operator's rule
        dmlref.split(x, 10**30, axis=1)
    assert e.value.code == "S1"


def test_split_of_broadcast_input():
    x = np.broadcast_to(np.arange(5, dtype=np.float32), (3, 5))
    a, b = dmlref.split(x, [1, 2], axis=0)
    assert same_bits(a, np.ascontiguousarray(x[:1])) and same_bits(b, np.ascontiguousarray(x[1:]))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_split_out_writes_the_given_arrays(dtype, layout):
    x = layouts(distinct((4, 7), dtype))[layout]
    expected = np.split(x, [2, 3], axis=1)
    # Outputs C-ordered, strided (every third column of a wider array) and reversed.
    packed = np.zeros((4, 2), dtype)
    strided_base = np.zeros((4, 3), dtype)
    reversed_base = np.zeros((4, 4), dtype)
    outs = (packed, strided_base[:, ::3], reversed_base[::-1, ::-1])
    parts = dmlref.split(x, [2, 1, 4], axis=1, out=outs)
    assert all(p is o for p, o in zip(parts, outs))
    for got, want in zip(outs, expected):
        assert same_bits(np.ascontiguousarray(got), np.ascontiguousarray(want))
    assert not strided_base[:, 1:].any()  # the columns between the strided output's stay 0


def test_split_out_with_a_stride_past_32_bits(tmp_path):
    # DirectML's strides are 32-bit: an output whose stride is not is computed into a packed
    # temporary and copied to the caller's view after success. A sparse file holds the view's
    # 4 GiB span in two touched pages.
    x = distinct((2, 2), np.uint8)
    span = np.memmap(tmp_path / "sparse", dtype=np.uint8, mode="w+", shape=(2**32 + 2,))
    far = np.lib.stride_tricks.as_strided(span, shape=(2, 1), strides=(2**32 + 1, 1))
    near = np.zeros((2, 1), np.uint8)
    parts = dmlref.split(x, [1, 1], axis=1, out=[far, near])
    assert parts[0] is far and parts[1] is near
    assert same_bits(np.ascontiguousarray(far), x[:, :1]) and same_bits(near, x[:, 1:])
    assert span[0] == x[0, 0] and span[2**32 + 1] == x[1, 0] and span[1] == 0


def test_split_out_is_checked_and_left_untouched_on_error():
    x = distinct((2, 7), np.float32)
    a, b = np.full((2, 3), -1, np.float32), np.full((2, 4), -1, np.float32)
    with pytest.raises(ValueError, match=r"out has 1 array but sizes makes 2 pieces"):
        dmlref.split(x, [3, 4], axis=1, out=[a])
    with pytest.raises(ValueError, match=re.escape("out[1].shape is (2, 5) but piece 1 has shape "
                                                   "(2, 4)")):
        dmlref.split(x, [3, 4], axis=1, out=[a, np.zeros((2, 5), np.float32)])
    with pytest.raises(dmlref.Error, match=r"out\[1\]\.dtype is int32 but x\.dtype is float32") as e:
        dmlref.split(x, [3, 4], axis=1, out=[a, np.zeros((2, 4), np.int32)])
    assert e.value.code == "S3"
    with pytest.raises(TypeError, match="out must be a list or tuple of arrays"):
        dmlref.split(x, [3, 4], axis=1, out=a)
    read_only = np.zeros((2, 4), np.float32)
    read_only.flags.writeable = False
    with pytest.raises(ValueError, match=re.escape("out[1] is read-only")):
        dmlref.split(x, [3, 4], axis=1, out=[a, read_only])
    with pytest.raises(dmlref.Error, match=r"out\[0\] .* overlaps x") as e:  # T13
        dmlref.split(x, [3, 4], axis=1, out=[x[:, :3], b])
    assert e.value.code == "T13"
    shared = np.zeros((2, 7), np.float32)
    with pytest.raises(dmlref.Error, match=r"out\[0\] .* overlaps out\[1\]"):
        dmlref.split(x, [3, 4], axis=1, out=[shared[:, :3], shared[:, 2:6]])
    assert (a == -1).all() and (b == -1).all() and not shared.any()


def test_join_64_mib():
    a = np.arange(8 << 20, dtype=np.uint32).reshape(2048, 4096)  # 32 MiB each
    b = a[::-1] + np.uint32(1)
    y = dmlref.join([a, b], axis=1)
    assert y.nbytes == 64 << 20
    assert np.array_equal(y[:, :4096], a) and np.array_equal(y[:, 4096:], b)


def test_join_errors_carry_rule_and_message():
    a = np.zeros((2, 3), np.float32)
    b = np.zeros((2, 4), np.float32)
    with pytest.raises(dmlref.Error) as e:
        dmlref.join([a, b], axis=0)
    assert isinstance(e.value, ValueError)
    assert e.value.code == "J5"
    assert str(e.value) == ("dmlref.join: arrays[1].shape[1] is 4 but arrays[0].shape[1] is 3; "
                            "every dimension except axis (0) must match [J5] docs/join.md#J5")
    with pytest.raises(dmlref.Error) as e:
        dmlref.join([a, a.astype(np.float64)])
    assert e.value.code == "J3"
    with pytest.raises(dmlref.Error) as e:
        dmlref.join([a, a[None]])
    assert e.value.code == "J2"
    with pytest.raises(dmlref.Error) as e:
        dmlref.join([])
    assert e.value.code == "J1"
    for axis in (2, -3):
        with pytest.raises(dmlref.Error) as e:
            dmlref.join([a, a], axis=axis)
        assert e.value.code == "J4"
    with pytest.raises(dmlref.Error) as e:
        dmlref.join([np.zeros((0, 3), np.float32)])
    assert e.value.code == "T3"
    with pytest.raises(dmlref.Error) as e:
        dmlref.join([np.zeros((1,) * 9, np.float32)])
    assert e.value.code == "T2"


def test_feature_level():
    a = np.zeros((2, 3), np.float64)
    assert dmlref.join([a, a], feature_level="4_1").shape == (4, 3)
    with pytest.raises(dmlref.Error) as e:
        dmlref.join([a, a], feature_level="3_0")
    assert e.value.code == "FeatureLevel"
    assert "float64 needs feature_level '4_1'; the target is feature_level '3_0'" in str(e.value)
    with pytest.raises(dmlref.Error) as e:
        dmlref.join([a, a], feature_level="9_9")
    assert e.value.code == "InvalidOption"
    assert "feature_level '9_9' is not a DirectML feature level (1_0, 2_0, 2_1, 3_0" in str(e.value)
    for spelling in ("4.1", "DML_FEATURE_LEVEL_4_1"):
        assert dmlref.join([a, a], feature_level=spelling).shape == (4, 3)
        with pytest.raises(dmlref.Error, match="the target is feature_level '3_1'"):
            dmlref.join([a, a], feature_level=spelling.replace("4", "3"))
    for bad in ("4", "4_1_0", "DML_FEATURE_LEVEL_", "4_16", ""):
        with pytest.raises(dmlref.Error) as e:
            dmlref.join([a, a], feature_level=bad)
        assert e.value.code == "InvalidOption", bad


@pytest.mark.parametrize("bad", [np.zeros(3, bool), np.zeros(3, np.complex64),
                                 np.array([1, "a"], dtype=object), np.zeros(3, ">f4")])
def test_unsupported_dtype_is_type_error_naming_it(bad):
    with pytest.raises(TypeError, match=re.escape(str(bad.dtype))):
        dmlref.join([bad])
    with pytest.raises(TypeError, match=re.escape(str(bad.dtype))):
        dmlref.reverse_subsequences(bad, np.zeros(1, np.uint32), axis=0)


# ---- out= -------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_out_into_strided_views(dtype):
    a, b = distinct((3, 2), dtype), distinct((3, 5), dtype, start=40)
    expected = np.concatenate([a, b], axis=1)
    for view in (lambda buf: buf[::2, 1::2],      # positive strides with gaps
                 lambda buf: buf[::-2, ::-2],     # negative strides
                 lambda buf: buf[:3, :7]):        # padded rows
        buf = np.zeros((6, 14), dtype)
        out = view(buf)
        before = buf.copy()
        y = dmlref.join([a, b], axis=1, out=out)
        assert y is out
        assert same_bits(np.ascontiguousarray(out), expected)
        touched = np.zeros(buf.shape, bool)
        view(touched)[...] = True
        assert np.array_equal(buf[~touched], before[~touched])  # nothing outside the view


def test_out_transposed():
    x = distinct((4, 3), np.int16)
    out = np.empty((3, 4), np.int16).T
    assert dmlref.reverse_subsequences(x, np.full(3, 4, np.uint32), axis=0, out=out) is out
    assert same_bits(np.ascontiguousarray(out), x[::-1])


def test_failing_call_writes_nothing_to_out():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    for out in (np.full((2, 7), 5, np.float32), np.full((4, 14), 5, np.float32)[::-2, ::2]):
        with pytest.raises(dmlref.Error):
            dmlref.join([a, np.zeros((2, 5), np.float32)[:1]], axis=1, out=out)
        assert np.all(out == 5)
    data = np.zeros((2, 3), np.float32)
    out = np.full((2, 3), 7, np.float32)[::-1]
    with pytest.raises(dmlref.Error) as e:  # an index out of range, found before any write
        dmlref.scatter(data, np.array([[0, 1, 9]], np.int64), np.ones((1, 3), np.float32), out=out)
    assert e.value.code == "SC8" and np.all(out == 7)


def test_out_errors():
    a = np.zeros((2, 3), np.float32)
    with pytest.raises(dmlref.Error) as e:
        dmlref.join([a, a], out=np.zeros((4, 3), np.float64))
    assert e.value.code == "J3"
    with pytest.raises(dmlref.Error) as e:  # a broadcast output addresses an element twice
        broadcast = np.lib.stride_tricks.as_strided(np.zeros(3, np.float32), (4, 3), (0, 4))
        dmlref.join([a, a], out=broadcast)
    assert e.value.code == "T12"
    with pytest.raises(dmlref.Error) as e:  # in place: the output overlaps an input
        dmlref.reverse_subsequences(a, np.ones(3, np.uint32), axis=0, out=a)
    assert e.value.code == "T13"
    with pytest.raises(dmlref.Error) as e:  # reversed views overlapping: still T13
        dmlref.reverse_subsequences(a[::-1], np.ones(3, np.uint32), axis=0, out=a[:, ::-1])
    assert e.value.code == "T13"
    ro = np.zeros((4, 3), np.float32)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        dmlref.join([a, a], out=ro)


# ---- scatter ----------------------------------------------------------------------------------

def scatter_numpy(data, indices, updates, axis):
    out = np.array(data, copy=True)
    idx = indices.astype(np.int64)
    idx = np.where(idx < 0, idx + data.shape[axis], idx)
    np.put_along_axis(out, idx, updates, axis=axis)  # ScatterElements, unique indices
    return out


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_scatter_equals_scatter_elements(dtype, index_dtype, axis, layout):
    rng = np.random.default_rng(7)
    data = layouts(distinct((4, 5), dtype))[layout]
    n = data.shape[axis]
    # Along the axis, the indices are the first 3 of a permutation: no duplicates.
    shape = list(data.shape)
    shape[axis] = 3
    keys = rng.random(tuple(data.shape))
    idx = np.argsort(keys, axis=axis).take(range(3), axis=axis)
    if np.dtype(index_dtype).kind == "i":
        idx = np.where(rng.random(idx.shape) < 0.5, idx - n, idx)  # negative indices
    indices = idx.astype(index_dtype)
    updates = layouts(distinct(tuple(shape), dtype, start=200))["reversed"]
    y = dmlref.scatter(data, indices, updates, axis=axis)
    assert same_bits(y, scatter_numpy(data, indices, updates, axis % 2))


def test_scatter_broadcast_updates_and_indices():
    data = distinct((3, 4), np.float32)
    indices = np.broadcast_to(np.array([[2, 0, 1, 2]], np.int32), (1, 4))
    updates = np.broadcast_to(np.float32(-1), (1, 4))
    y = dmlref.scatter(data, indices, updates, axis=0)
    assert same_bits(y, scatter_numpy(data, indices, updates, 0))


def test_scatter_updates_broadcast_along_axis_cost_their_stored_values():
    # 2 x (2^31 - 1) logical updates from two stored ones: the binding keeps numpy's zero strides
    # (a packed copy would need 16 GiB) and the operator stores each row's update once.
    data = np.arange(8, dtype=np.float32).reshape(2, 4)
    indices = np.broadcast_to(np.array([[2], [-1]], np.int32), (2, 2**31 - 1))
    updates = np.broadcast_to(np.array([[9], [8]], np.float32), (2, 2**31 - 1))
    y = dmlref.scatter(data, indices, updates, axis=1)
    assert np.array_equal(y, [[0, 1, 9, 3], [4, 5, 6, 8]])


def test_scatter_duplicates_and_clamping():
    data = np.arange(5, dtype=np.float32)
    indices = np.array([3, 1, 3, 0], np.uint32)
    updates = np.array([5, 6, 7, 8], np.float32)
    assert np.array_equal(dmlref.scatter(data, indices, updates), [8, 6, 2, 7, 4])  # last wins
    with pytest.raises(dmlref.Error) as e:
        dmlref.scatter(data, indices, updates, duplicates="reject")
    assert e.value.code == "ScatterDuplicate"
    with pytest.raises(dmlref.Error) as e:
        dmlref.scatter(data, np.array([9], np.int64), updates[:1])
    assert e.value.code == "SC8"
    y = dmlref.scatter(data, np.array([9, -9], np.int64), np.array([1, 2], np.float32),
                       clamp_indices=True)
    assert np.array_equal(y, [2, 1, 2, 3, 1])
    with pytest.raises(dmlref.Error) as e:
        dmlref.scatter(data, indices, updates, duplicates="first")
    assert e.value.code == "InvalidOption"


def test_scatter_rules():
    data = np.zeros((3, 3), np.float32)
    with pytest.raises(dmlref.Error) as e:  # DirectML's SC7: other dimensions must match
        dmlref.scatter(data, np.zeros((3, 2), np.int32), np.zeros((3, 2), np.float32), axis=0)
    assert e.value.code == "SC7"
    with pytest.raises(dmlref.Error) as e:
        dmlref.scatter(data, np.zeros((3, 3), np.float32), data)
    assert e.value.code == "SC3"
    with pytest.raises(dmlref.Error) as e:
        dmlref.scatter(data, np.zeros((3, 3), np.int32), data.astype(np.float64))
    assert e.value.code == "SC2"


def test_check_scatter_accepts_any_colliding_update():
    data = np.zeros(4, np.int32)
    indices = np.array([1, 1, 2], np.int64)
    updates = np.array([10, 20, 30], np.int32)
    for winner in (10, 20):
        r = dmlref.check_scatter(data, indices, updates, np.array([0, winner, 30, 0], np.int32))
        assert r and r.colliding_element_count == 1
    reversed_actual = np.array([1, 30, 30, 0], np.int32)[::-1]  # [0, 30, 30, 1], negative stride
    r = dmlref.check_scatter(data, indices, updates, reversed_actual)
    assert not r and r.mismatch_count == 2
    assert str(r).startswith("dmlref.check_scatter: 2 of 4 elements mismatch")
    assert "\n  actual[1]: expected one of the colliding updates {indices[0] -> 10, indices[1] -> 20}" \
        in str(r)
    assert "\n  actual[3]: expected 0" in str(r) and "Tensor" not in str(r)
    # An actual with a leading 1 is read with data's shape, as compare reads it.
    assert dmlref.check_scatter(data, indices, updates, np.array([[0, 10, 30, 0]], np.int32))


# ---- gather_nd1 -------------------------------------------------------------------------------

def gather_nd_numpy(x, indices, batch_dims):
    """ONNX GatherND, negative indices wrapped."""
    m = indices.shape[-1]
    out_shape = indices.shape[:-1] + x.shape[batch_dims + m:]
    idx = indices.astype(np.int64).reshape((-1,) + indices.shape[batch_dims:])
    xs = x.reshape((-1,) + x.shape[batch_dims:])
    result = []
    for b in range(xs.shape[0]):
        tuples = idx[b].reshape(-1, m)
        for t in tuples:
            t = tuple(int(v) + (xs.shape[1 + j] if v < 0 else 0) for j, v in enumerate(t))
            result.append(xs[b][t])
    return np.array(result, dtype=x.dtype).reshape(out_shape)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_gather_nd1_equals_gather_nd(dtype, index_dtype, layout):
    rng = np.random.default_rng(3)
    x = layouts(distinct((4, 5, 3), dtype))[layout]
    signed = np.dtype(index_dtype).kind == "i"
    for m in (1, 2, 3):
        raw = np.stack([rng.integers(0, n, size=(2, 3)) for n in x.shape[:m]], axis=-1)
        if signed:
            raw = raw - np.array(x.shape[:m]) * (rng.random(raw.shape) < 0.5)
        indices = layouts(raw.astype(index_dtype))[layout]
        y = dmlref.gather_nd1(x, indices)
        assert y.shape == (2, 3) + x.shape[m:]
        assert same_bits(y, gather_nd_numpy(x, indices, 0))


def test_gather_nd1_batch_dims_and_shapes():
    x = distinct((3, 2, 2), np.float16)  # spec example 2, without DirectML's padding
    indices = np.array([[[0, 0], [1, 1]], [[1, 1], [0, 0]], [[0, 1], [1, 0]]], np.uint32)
    y = dmlref.gather_nd1(x, indices, batch_dims=1)
    assert y.shape == (3, 2)
    assert same_bits(y, gather_nd_numpy(x, indices, 1))
    x = distinct((2, 3, 4), np.int64)
    # [[[2], [0]], [[1], [1]]] as a transposed (non-contiguous) view
    indices = np.array([[[2], [1]], [[0], [1]]], np.int32).transpose(1, 0, 2)
    assert not indices.flags.c_contiguous and indices[0, 1, 0] == 0
    y = dmlref.gather_nd1(x, indices, batch_dims=1)
    assert y.shape == (2, 2, 4)
    assert same_bits(y, gather_nd_numpy(x, indices, 1))
    assert dmlref.gather_nd1(np.arange(5.0), np.array([-1])).shape == ()  # a scalar, as ONNX says
    assert dmlref.gather_nd1(np.arange(5.0), np.array([-1])) == 4.0
    # Output rank above both input ranks: indices (2,2,1) into (3,4) -> (2,2,4).
    x, indices = distinct((3, 4), np.uint8), np.array([[[0], [2]], [[1], [-3]]])
    y = dmlref.gather_nd1(x, indices)
    assert y.shape == (2, 2, 4)
    assert same_bits(y, gather_nd_numpy(x, indices, 0))


def test_gather_nd1_clamping_and_errors():
    x = np.arange(5, dtype=np.int32)
    with pytest.raises(dmlref.Error) as e:
        dmlref.gather_nd1(x, np.array([[5]], np.int64))
    assert e.value.code == "G10"
    assert np.array_equal(dmlref.gather_nd1(x, np.array([[5], [-6], [-1]]), clamp_indices=True),
                          [4, 0, 4])
    with pytest.raises(dmlref.Error) as e:
        dmlref.gather_nd1(x, np.array([[0, 0]]))
    assert e.value.code == "G6"
    with pytest.raises(dmlref.Error) as e:
        dmlref.gather_nd1(x, np.array([[0.0]]))
    assert e.value.code == "G3"
    out = np.zeros((2,), np.int32)
    assert dmlref.gather_nd1(x, np.array([[4], [1]]), out=out[::-1]) is not None
    assert np.array_equal(out, [1, 4])


# ---- reverse_subsequences ---------------------------------------------------------------------

def reverse_numpy(x, lengths, axis):
    out = np.array(x, copy=True)
    moved = np.moveaxis(out, axis, -1)
    src = np.moveaxis(x, axis, -1)
    lens = np.broadcast_to(np.moveaxis(lengths, axis, -1)[..., 0] if lengths.ndim == x.ndim
                           else lengths, moved.shape[:-1])
    for pos in np.ndindex(*moved.shape[:-1]):
        n = min(int(lens[pos]), moved.shape[-1])
        moved[pos][:n] = src[pos][:n][::-1]
    return out


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("lengths_dtype", [np.uint32, np.uint64])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_reverse_subsequences(dtype, lengths_dtype, layout):
    x = layouts(distinct((4, 6), dtype))[layout]
    lengths = np.array([6, 0, 2, 9], lengths_dtype)  # 9 > 6 clamps; 0 copies
    y = dmlref.reverse_subsequences(x, lengths, axis=1)
    assert same_bits(y, reverse_numpy(x, lengths, 1))
    y = dmlref.reverse_subsequences(x, lengths[:, None], axis=-1)  # axis kept as size 1
    assert same_bits(y, reverse_numpy(x, lengths, 1))
    by_row = np.broadcast_to(np.array([3], lengths_dtype), (6,))  # one length, broadcast
    assert same_bits(dmlref.reverse_subsequences(x, by_row, axis=0),
                     reverse_numpy(x, np.full(6, 3), 0))


def test_reverse_subsequences_errors():
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(dmlref.Error) as e:  # UINT64 lengths need 5_0
        dmlref.reverse_subsequences(x, np.zeros(2, np.uint64), axis=1, feature_level="4_1")
    assert e.value.code == "FeatureLevel"
    y = dmlref.reverse_subsequences(x, np.zeros(2, np.uint32), axis=1, feature_level="4_1")
    assert y.shape == (2, 3)
    for axis in (2, -3):
        with pytest.raises(dmlref.Error) as e:
            dmlref.reverse_subsequences(x, np.zeros((2, 3), np.uint32), axis=axis)
        assert e.value.code == "R5"
    with pytest.raises(dmlref.Error) as e:
        dmlref.reverse_subsequences(x, np.zeros(2, np.float32), axis=1)
    assert e.value.code == "R4"
    with pytest.raises(dmlref.Error) as e:
        dmlref.reverse_subsequences(x, np.zeros((2, 2), np.uint32), axis=1)
    assert e.value.code == "R3"


# ---- DLPack -----------------------------------------------------------------------------------

def test_dlpack_only_inputs():
    a = layouts(distinct((3, 4), np.float16))["reversed"]
    b = distinct((3, 4), np.float16, start=30)
    assert same_bits(dmlref.join([DLPackOnly(a), DLPackOnly(b)], axis=0), np.concatenate([a, b]))
    parts = dmlref.split(DLPackOnly(b), [1, 3], axis=1)
    assert same_bits(parts[1], np.ascontiguousarray(b[:, 1:]))
    data, indices = distinct((3,), np.int8), np.array([2, 0], np.int64)
    updates = np.array([-1, -2], np.int8)
    y = dmlref.scatter(DLPackOnly(data), DLPackOnly(indices), DLPackOnly(updates))
    assert np.array_equal(y, [-2, 2, -1])
    assert np.array_equal(dmlref.gather_nd1(DLPackOnly(data), DLPackOnly(indices[:, None])), [3, 1])
    lengths = DLPackOnly(np.full(3, 2, np.uint32))
    y = dmlref.reverse_subsequences(DLPackOnly(b), lengths, axis=1)
    assert same_bits(y, reverse_numpy(b, np.full(3, 2), 1))
    assert dmlref.compare(DLPackOnly(b), DLPackOnly(b.copy()))
    with pytest.raises(TypeError, match="bool"):
        dmlref.join([DLPackOnly(np.zeros(3, bool))])


def test_non_arrays_and_device_arrays_are_type_errors():
    class OnDevice:  # what a GPU tensor's DLPack interface says
        def __dlpack__(self, **kwargs):
            raise BufferError("not on the CPU")

        def __dlpack_device__(self):
            return (2, 0)  # kDLCUDA

    with pytest.raises(TypeError, match="CPU"):
        dmlref.join([OnDevice()])
    with pytest.raises(TypeError, match="not an array"):
        dmlref.join([np.zeros(2)], out=[0.0, 0.0])


# ---- compare ----------------------------------------------------------------------------------

def test_compare():
    expected = np.array([[1.0, 2.0, -0.0], [np.nan, 5.0, 6.0]], np.float32)
    r = dmlref.compare(expected, expected.T.copy().T)
    assert r and r.mismatch_count == 0
    actual = expected.copy()
    actual[1, 2] = 7.0
    r = dmlref.compare(actual, expected)
    assert not r and r.mismatch_count == 1
    assert " [1, 2]: 7 (0x40e00000), 6 (0x40c00000)" in str(r)
    assert r.mismatches == [((1, 2), np.float32(7), np.float32(6))]
    zero = expected.copy()
    zero[0, 2] = 0.0
    assert not dmlref.compare(expected, zero)          # bit-exact: -0 != +0
    assert dmlref.compare(expected, zero, ulp=1)       # numeric: -0 == +0
    near = expected.copy()
    near[0, 0] = np.nextafter(np.float32(1), np.float32(2))
    assert not dmlref.compare(expected, near) and dmlref.compare(expected, near, ulp=1)
    other_nan = expected.copy()
    other_nan[1, 0] = np.float32(-np.nan)
    assert not dmlref.compare(other_nan, expected, equal_nan=False)
    assert dmlref.compare(other_nan, expected, equal_nan=True)
    assert dmlref.compare(other_nan, expected)                 # numpy's default: NaN == NaN
    assert not dmlref.compare(other_nan, expected, nan_equal=False)  # the old keyword
    with pytest.raises(dmlref.Error) as e:
        dmlref.compare(expected, expected[:, :2])
    assert e.value.code == "ShapeMismatch"
    with pytest.raises(TypeError):
        dmlref.compare(expected, expected.astype(np.float64))


@pytest.mark.parametrize("dtype", DTYPES)
def test_compare_all_dtypes_reversed(dtype):
    e = distinct((2, 3), dtype)
    a = layouts(e)["reversed"]
    assert dmlref.compare(e, a)
    b = e.copy()
    b[0, 1] += 1
    r = dmlref.compare(e, b)
    assert not r and r.mismatches[0][0] == (0, 1)


# ---- threads ------------------------------------------------------------------------------------

def test_concurrent_calls_from_threads():  # the GIL is released while computing
    import threading
    inputs = [(np.arange(1024 * 4096) % (251 - k)).astype(np.uint8).reshape(1024, 4096)
              for k in range(4)]
    results = [None] * 4

    def run(k):
        results[k] = dmlref.join([inputs[k], inputs[(k + 1) % 4]], axis=1)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in range(4):  # each thread's own result, not a neighbour's
        np.testing.assert_array_equal(results[k],
                                      np.concatenate([inputs[k], inputs[(k + 1) % 4]], axis=1))
