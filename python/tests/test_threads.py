"""dmlref.set_num_threads / get_num_threads: the thread count large calls use, and results that do
not depend on it."""
import numpy as np
import pytest

import dmlref


@pytest.fixture
def default_threads():
    yield
    dmlref.set_num_threads(0)


def test_set_and_get_num_threads(default_threads):
    default = dmlref.get_num_threads()
    assert default >= 1
    dmlref.set_num_threads(3)
    assert dmlref.get_num_threads() == 3
    dmlref.set_num_threads(0)
    assert dmlref.get_num_threads() == default


def test_set_num_threads_rejects_counts_out_of_range(default_threads):
    with pytest.raises(dmlref.Error, match="set_num_threads: n is 257"):
        dmlref.set_num_threads(257)
    with pytest.raises(TypeError):
        dmlref.set_num_threads(-1)


def test_large_calls_equal_on_one_and_three_threads(default_threads):
    # 4 MiB per output: above the size from which calls are split between threads.
    rng = np.random.default_rng(36)
    x = rng.standard_normal((1024, 1024)).astype(np.float32)
    rows = rng.integers(0, 1024, size=(1024, 1)).astype(np.int64)
    results = []
    for threads in (1, 3):
        dmlref.set_num_threads(threads)
        results.append((
            dmlref.join([x, x.T], axis=1),
            dmlref.gather_nd1(x, rows),
            dmlref.reverse_subsequences(x, np.full((1, 1024), 700, np.uint32), axis=0),
        ))
    for one, three in zip(*results):
        assert one.tobytes() == three.tobytes()
    np.testing.assert_array_equal(results[0][0][:, :1024], x)
    np.testing.assert_array_equal(results[0][0][:, 1024:], x.T)
    np.testing.assert_array_equal(results[0][1], x[rows[:, 0]])
    # Equal on both counts is not enough: the reversal must also be the right one.
    np.testing.assert_array_equal(results[0][2], np.concatenate([x[699::-1], x[700:]]))


def test_release_scratch_memory_between_calls(default_threads):
    # 64 Ki indices: SCATTER keeps their places in the scratch memory it keeps between calls.
    rng = np.random.default_rng(7)
    x = rng.standard_normal((64, 1024)).astype(np.float32)
    perm = np.argsort(rng.random(x.shape), axis=1)
    updates = rng.standard_normal(x.shape).astype(np.float32)
    expected = x.copy()
    np.put_along_axis(expected, perm, updates, axis=1)
    for threads in (1, 2):
        dmlref.set_num_threads(threads)
        np.testing.assert_array_equal(dmlref.scatter(x, perm, updates, axis=1), expected)
        dmlref.release_scratch_memory()
        dmlref.release_scratch_memory()  # nothing kept: nothing to do
        np.testing.assert_array_equal(dmlref.scatter(x, perm, updates, axis=1), expected)
