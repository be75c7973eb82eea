#!/usr/bin/python3
"""NumPy's side of the .npy interoperability test (tests/test_npy.c runs it with /usr/bin/python3).

  npy_interop.py write DIR   NumPy writes files for convlab to read (versions 1.0, 2.0, 3.0; f4, f8, f2).
  npy_interop.py check DIR   NumPy reads the files convlab wrote and compares them bit for bit.
  npy_interop.py conv DIR    NumPy writes x, w (float64 holding float32 values), b and its own causal
                             Conv1d output y (float64 sums rounded once to float32), D = 2, for
                             `convlab run --x --w --b --y` to score (tests/test_cli.c).

Values follow one formula on both sides, so neither needs the other's output:
  f8: i*0.37 - 3.0 (double arithmetic);  f4: that double rounded to float32;  f2: the f4 value rounded
  to float16.
Exit status 0 on success; a mismatch prints one line and exits 1.
"""
import os
import sys

import numpy as np


def values(shape, dtype):
    count = int(np.prod(shape)) if len(shape) else 1
    v = np.arange(count, dtype=np.float64) * 0.37 - 3.0
    return v.astype(dtype).reshape(shape)


SPECIALS = np.array([-0.0, 1e-45, np.inf, -np.inf, np.nan, 3.4028235e38, 1.0], dtype=np.float32)
# float16: -0, the smallest subnormal 2^-24, the largest normal, Inf, NaN
SPECIALS_F2 = np.array([-0.0, 2.0 ** -24, 65504.0, np.inf, np.nan], dtype=np.float16)


def values_f2(shape):
    return values(shape, np.float32).astype(np.float16)


def write(d):
    np.save(os.path.join(d, "np_f4_v1.npy"), values((2, 3, 5), np.float32))
    np.save(os.path.join(d, "np_f8_v1.npy"), values((4, 3, 2), np.float64))
    for version in ((2, 0), (3, 0)):
        with open(os.path.join(d, "np_f4_v%d.npy" % version[0]), "wb") as f:
            np.lib.format.write_array(f, values((3, 7), np.float32), version=version)
    np.save(os.path.join(d, "np_scalar.npy"), np.float32(2.5))
    np.save(os.path.join(d, "np_vec.npy"), values((11,), np.float32))
    np.save(os.path.join(d, "np_specials.npy"), SPECIALS)
    np.save(os.path.join(d, "np_fortran.npy"), np.asfortranarray(values((3, 4), np.float32)))
    np.save(os.path.join(d, "np_int.npy"), np.arange(6, dtype=np.int32))
    np.save(os.path.join(d, "np_big_endian.npy"), values((5,), np.dtype(">f4")))
    np.save(os.path.join(d, "np_f2_v1.npy"), values_f2((2, 3, 5)))
    np.save(os.path.join(d, "np_f2_specials.npy"), SPECIALS_F2)


def expect(name, got, want):
    if got.dtype != want.dtype or got.shape != want.shape:
        print("%s: got %s %s, want %s %s" % (name, got.dtype, got.shape, want.dtype, want.shape))
        sys.exit(1)
    bits = {np.dtype(np.float16): np.uint16, np.dtype(np.float32): np.uint32}.get(want.dtype, np.uint64)
    if not np.array_equal(got.view(bits), want.view(bits)):
        print("%s: values differ" % name)
        sys.exit(1)


def check(d):
    expect("c_f4.npy", np.load(os.path.join(d, "c_f4.npy")), values((2, 3, 5), np.float32))
    expect("c_f8.npy", np.load(os.path.join(d, "c_f8.npy")), values((4, 3, 2), np.float64))
    expect("c_vec.npy", np.load(os.path.join(d, "c_vec.npy")), values((11,), np.float32))
    expect("c_scalar.npy", np.load(os.path.join(d, "c_scalar.npy")), np.array(2.5, dtype=np.float32))
    expect("c_specials.npy", np.load(os.path.join(d, "c_specials.npy")), SPECIALS)
    expect("c_f2.npy", np.load(os.path.join(d, "c_f2.npy")), values_f2((2, 3, 5)))


def conv(d):
    rng = np.random.default_rng(7)
    N, C, O, L, K, D = 2, 4, 3, 32, 3, 2
    x = rng.standard_normal((N, C, L)).astype(np.float32)
    w = rng.standard_normal((O, C, K)).astype(np.float32)
    b = rng.standard_normal(O).astype(np.float32)
    pad = (K - 1) * D
    xp = np.concatenate([np.zeros((N, C, pad)), x.astype(np.float64)], axis=2)
    y = np.zeros((N, O, L)) + b.astype(np.float64)[None, :, None]
    for k in range(K):
        y += np.einsum("oc,ncl->nol", w[:, :, k].astype(np.float64), xp[:, :, k * D:k * D + L])
    np.save(os.path.join(d, "conv_x.npy"), x)
    np.save(os.path.join(d, "conv_w.npy"), w.astype(np.float64))
    np.save(os.path.join(d, "conv_b.npy"), b)
    np.save(os.path.join(d, "conv_y.npy"), y.astype(np.float32))


if __name__ == "__main__":
    modes = {"write": write, "check": check, "conv": conv}
    if len(sys.argv) != 3 or sys.argv[1] not in modes:
        print(__doc__)
        sys.exit(2)
    modes[sys.argv[1]](sys.argv[2])
