#!/usr/bin/python3
"""Writes the .npy files tests/test_npy.cpp reads, with numpy itself, so the reader is tested
against files numpy made and not only against its own writer.

Run from anywhere with Debian's numpy (python3-numpy):  /usr/bin/python3 tests/data/npy/make_npy.py
The files are committed; rerun only to change them. test_npy.cpp recomputes every value below
with the same formulas, so keep the two in step.
"""
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def path(name):
    return os.path.join(HERE, name)


def save(name, array, version=None):
    # np.save picks version 1.0 for small headers; write_array lets us force 2.0 and 3.0.
    with open(path(name), "wb") as f:
        np.lib.format.write_array(f, array, version=version, allow_pickle=False)


i = np.arange(24)

# Every type, shape (2, 3, 4), C order, version 1.0. Values reach the high bytes of each type.
signed = {"i1": 10, "i2": 2500, "i4": 150000000, "i8": 700000000000000000}
unsigned = {"u1": 11, "u2": 2800, "u4": 180000000, "u8": 800000000000000000}
for code, scale in signed.items():
    save(f"{code}_2x3x4.npy", ((i - 12) * scale).astype("<" + code).reshape(2, 3, 4))
for code, scale in unsigned.items():
    save(f"{code}_2x3x4.npy", (i.astype(np.uint64) * np.uint64(scale) + np.uint64(1)).astype("<" + code).reshape(2, 3, 4))
for code in ("f2", "f4", "f8"):
    save(f"{code}_2x3x4.npy", ((i - 12) * 0.375).astype("<" + code).reshape(2, 3, 4))

# Values that only survive bit-exact handling: -0, NaN payloads, infinities, subnormals, extremes.
special = {
    "f2": ("<u2", [0x0000, 0x8000, 0x7E01, 0xFE3F, 0x7C00, 0xFC00, 0x0001, 0x7BFF]),
    "f4": ("<u4", [0x00000000, 0x80000000, 0x7FC00001, 0xFFA00000, 0x7F800000, 0xFF800000,
                   0x00000001, 0x7F7FFFFF]),
    "f8": ("<u8", [0x0000000000000000, 0x8000000000000000, 0x7FF8000000000001,
                   0xFFF4000000000000, 0x7FF0000000000000, 0xFFF0000000000000,
                   0x0000000000000001, 0x7FEFFFFFFFFFFFFF]),
}
for code, (bits_type, bits) in special.items():
    save(f"{code}_special.npy", np.array(bits, dtype=bits_type).view("<" + code))

# One dimension, eight dimensions.
save("u2_1d.npy", (np.arange(7) * 3).astype("<u2"))
save("u1_8d.npy", np.arange(16).astype("|u1").reshape(1, 2, 1, 2, 1, 2, 1, 2))

# Fortran order: value at C coordinate (r, c) is r * 4 + c (and its 3-d analogue).
save("f8_fortran_3x4.npy", np.asfortranarray(np.arange(12, dtype="<f8").reshape(3, 4)))
save("i2_fortran_2x3x4.npy", np.asfortranarray((i - 12).astype("<i2").reshape(2, 3, 4)))

# Format versions 2.0 and 3.0 (version 1.0 is every file above).
save("i4_v2.npy", (np.arange(6) - 3).astype("<i4").reshape(2, 3), version=(2, 0))
save("f2_v3.npy", (np.arange(6) * 0.5).astype("<f2").reshape(3, 2), version=(3, 0))

# Files the reader must reject, each for a reason its message names.
save("bad_big_endian.npy", np.arange(4, dtype=">f4"))
save("bad_structured.npy", np.zeros(3, dtype=[("a", "<i4"), ("b", "<f4")]))
save("bad_bool.npy", np.array([True, False]))
save("bad_scalar.npy", np.float32(1.5).reshape(()))
with open(path("bad_object.npy"), "wb") as f:
    np.lib.format.write_array(f, np.array([1, "x"], dtype=object), allow_pickle=True)
# Truncated: the last element's bytes are missing.
with open(path("f4_2x3x4.npy"), "rb") as f:
    whole = f.read()
with open(path("bad_truncated.npy"), "wb") as f:
    f.write(whole[:-3])
