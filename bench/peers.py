#!/usr/bin/env python3
"""The speed table side by side: dmlref (the Python module), numpy and PyTorch on the same
shapes, each as a ratio to its own library's copy of the output bytes (numpy.copyto,
torch.Tensor.copy_) timed in the same process, in alternating rounds (the fastest round of each).
dmlref is compared with numpy.copyto. Every library writes into preallocated outputs.

    python3 bench/peers.py [--mib 16 256] [--threads 1 all] [--rounds 5] [--dtype float32]

Run it pinned to one core for one-thread figures (`taskset -c 0 python3 bench/peers.py --threads
1`). `--threads 1` sets DMLREF_NUM_THREADS, torch.set_num_threads and the BLAS thread variables
to 1; `all` leaves every library its default. `--dtype` picks the element type (float32 by default;
rows "of 64 B" stay 64 bytes). Needs numpy and torch beside dmlref.
"""
import argparse
import os
import sys
import time


def parse():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--mib", type=int, nargs="+", default=[16, 256])
    p.add_argument("--threads", choices=["1", "all"], default="all")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--only", default="", help="run the cases whose name contains this")
    p.add_argument("--dtype", default="float32", help="the elements' numpy dtype")
    return p.parse_args()


ARGS = parse()
if ARGS.threads == "1":
    for v in ("DMLREF_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[v] = "1"

import numpy as np  # noqa: E402  (after the thread variables)
import torch  # noqa: E402

import dmlref  # noqa: E402

if ARGS.threads == "1":
    torch.set_num_threads(1)


DTYPE = np.dtype(ARGS.dtype)
ROW64 = 64 // DTYPE.itemsize  # elements in a row of 64 bytes (16 float32)


def data(rng, shape):
    """Random elements of DTYPE."""
    if DTYPE.kind == "f":
        return rng.standard_normal(shape).astype(DTYPE)
    return rng.integers(0, 100, shape).astype(DTYPE)


def best(f, calls):
    start = time.perf_counter()
    for _ in range(calls):
        f()
    return (time.perf_counter() - start) / calls


def ratio(op, copy, rounds):
    """copy's fastest time over op's, in alternating rounds."""
    op()
    copy()
    t_op = time.perf_counter()
    op()
    t_op = time.perf_counter() - t_op
    calls = max(1, min(20, int(0.05 / max(t_op, 1e-6))))
    o = c = float("inf")
    for _ in range(rounds):
        o = min(o, best(op, calls))
        c = min(c, best(copy, calls))
    return c / o


def np_copy(dst):
    src = np.empty_like(dst)
    src.fill(1)
    return lambda: np.copyto(dst, src)


def torch_copy(dst):
    src = torch.ones_like(dst)
    return lambda: dst.copy_(src)


def entry(dml, numpy_op, torch_op, np_out, torch_out):
    return {"dmlref": (dml, np_copy(np_out)), "numpy": (numpy_op, np_copy(np_out)),
            "torch": (torch_op, torch_copy(torch_out))}


def join_axis0(n, rng):
    a = data(rng, (n // 2048, 1024))
    o = np.empty((a.shape[0] * 2, 1024), DTYPE)
    ta, to = torch.from_numpy(a), torch.from_numpy(np.empty_like(o))
    return entry(lambda: dmlref.join([a, a], axis=0, out=o),
                 lambda: np.concatenate([a, a], axis=0, out=o),
                 lambda: torch.cat([ta, ta], dim=0, out=to), o, to)


def join_rows64(n, rng):
    pieces = [data(rng, (n // (4 * ROW64), ROW64)) for _ in range(4)]
    w = np.empty((n // (4 * ROW64), 4 * ROW64), DTYPE)
    tp, tw = [torch.from_numpy(p) for p in pieces], torch.from_numpy(np.empty_like(w))
    return entry(lambda: dmlref.join(pieces, axis=1, out=w),
                 lambda: np.concatenate(pieces, axis=1, out=w),
                 lambda: torch.cat(tp, dim=1, out=tw), w, tw)


def split_rows64(n, rng):
    rows, k = n // (4 * ROW64), ROW64
    whole = data(rng, (rows, 4 * k))
    outs = [np.empty((rows, k), DTYPE) for _ in range(4)]
    tw = torch.from_numpy(whole)
    touts = [torch.from_numpy(np.empty((rows, k), DTYPE)) for _ in range(4)]

    def np_split():
        for i, p in enumerate(outs):
            np.copyto(p, whole[:, k * i:k * i + k])

    def torch_split():
        for i, p in enumerate(touts):
            p.copy_(tw[:, k * i:k * i + k])

    pieces = [np.empty((rows, k), DTYPE) for _ in range(4)]
    return {"dmlref": (lambda: dmlref.split(whole, 4, axis=1, out=pieces), np_copy(whole)),
            "numpy": (np_split, np_copy(whole)),
            "torch": (torch_split, torch_copy(torch.from_numpy(np.empty_like(whole))))}


def transposed(n, rng):
    tr = 4096 if n <= (4 << 20) else 16384
    stored = data(rng, (n // tr, tr))  # the copy's source, stored
    out = np.empty((tr, n // tr), DTYPE)
    ts, tt = torch.from_numpy(stored), torch.from_numpy(np.empty_like(out))
    return entry(lambda: dmlref.join([stored.T], axis=1, out=out),
                 lambda: np.copyto(out, stored.T), lambda: tt.copy_(ts.t()), out, tt)


def rows_1024(n, rng):
    """A random (n // 1024, 1024) input, a numpy output like it, and both for torch (the torch
    output an array of its own)."""
    x = data(rng, (n // 1024, 1024))
    return x, np.empty_like(x), torch.from_numpy(x), torch.from_numpy(np.empty_like(x))


def reverse_full(n, rng):
    x, xo, tx, txo = rows_1024(n, rng)
    lengths = np.full((1, 1024), x.shape[0], np.uint32)
    return entry(lambda: dmlref.reverse_subsequences(x, lengths, axis=0, out=xo),
                 lambda: np.copyto(xo, x[::-1]),
                 lambda: txo.copy_(torch.flip(tx, (0,))), xo, txo)


def reverse_random(n, rng, axis):
    """A random length per column (axis 0) or per row (axis 1); numpy and torch read each element
    from where the reversal takes it."""
    x, xo, tx, txo = rows_1024(n, rng)
    rows = x.shape[0]
    lengths = rng.integers(0, x.shape[axis] + 1, (1, 1024) if axis == 0 else (rows, 1),
                           dtype=np.uint32)
    row, col = np.arange(rows)[:, None], np.arange(1024)[None, :]
    at = row if axis == 0 else col
    src = np.where(at < lengths, lengths.astype(np.int64) - 1 - at, at)  # (rows, 1024)
    flat = (src * 1024 + col if axis == 0 else row * 1024 + src).ravel()
    idx = torch.from_numpy(src)
    return entry(lambda: dmlref.reverse_subsequences(x, lengths, axis=axis, out=xo),
                 lambda: np.take(x.ravel(), flat, out=xo.ravel()),
                 lambda: torch.gather(tx, axis, idx, out=txo), xo, txo)


def gather(n, rng, row_bytes):
    width = row_bytes // DTYPE.itemsize
    count = n // width
    table = data(rng, (count, width))
    picks = rng.integers(0, count, (count, 1), dtype=np.int64)
    g = np.empty_like(table)
    tt, tg = torch.from_numpy(table), torch.from_numpy(np.empty_like(table))
    tpk = torch.from_numpy(picks[:, 0].copy())
    return entry(lambda: dmlref.gather_nd1(table, picks, out=g),
                 lambda: np.take(table, picks[:, 0], axis=0, out=g),
                 lambda: torch.index_select(tt, 0, tpk, out=tg), g, tg)


def scatter(n, rng):
    x, xo, tx, txo = rows_1024(n, rng)
    perm = np.argsort(rng.random(x.shape), axis=1).astype(np.int64)
    upd = data(rng, x.shape)
    tperm, tupd = torch.from_numpy(perm), torch.from_numpy(upd)

    def np_scatter():
        np.copyto(xo, x)
        np.put_along_axis(xo, perm, upd, axis=1)

    def torch_scatter():
        txo.copy_(tx)
        txo.scatter_(1, tperm, tupd)

    return entry(lambda: dmlref.scatter(x, perm, upd, axis=1, out=xo), np_scatter,
                 torch_scatter, xo, txo)


# The table's rows: name -> its builder (n elements of output, a numpy Generator), each
# built only when it runs, so one case's arrays are in memory at a time.
CASES = [
    ("JOIN axis 0", join_axis0),
    ("JOIN of rows of 64 B", join_rows64),
    ("SPLIT into rows of 64 B", split_rows64),
    ("transposed copy (4096 or 16384 rows, power-of-two strides)", transposed),
    ("REVERSE_SUBSEQUENCES axis 0, one length per column, all full", reverse_full),
    ("REVERSE_SUBSEQUENCES axis 0, one random length per column",
     lambda n, rng: reverse_random(n, rng, 0)),
    ("REVERSE_SUBSEQUENCES along the inner axis", lambda n, rng: reverse_random(n, rng, 1)),
    ("GATHER_ND1 rows of 256 B, random rows", lambda n, rng: gather(n, rng, 256)),
    ("GATHER_ND1 rows of 64 B, random rows", lambda n, rng: gather(n, rng, 64)),
    ("SCATTER, a permutation per row along axis 1", scatter),
]


def main():
    rng = np.random.default_rng(36)
    print(f"{DTYPE}, threads: {ARGS.threads} (dmlref {dmlref.get_num_threads()}, torch "
          f"{torch.get_num_threads()}); numpy {np.__version__}, torch {torch.__version__}")
    for mib in ARGS.mib:
        print(f"\n{mib} MiB, ratio to the library's own copy of the output bytes:")
        for name, build in CASES:
            if ARGS.only and ARGS.only not in name:
                continue
            libs = build((mib << 20) // DTYPE.itemsize, rng)
            got = {lib: ratio(op, copy, ARGS.rounds) for lib, (op, copy) in libs.items()}
            del libs
            peer = max(("numpy", "torch"), key=lambda k: got[k])
            print(f"  {name:62s} dmlref {got['dmlref']:.2f} | numpy {got['numpy']:.2f} | "
                  f"torch {got['torch']:.2f} | dmlref / best peer ({peer}) "
                  f"{got['dmlref'] / got[peer]:.2f}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
