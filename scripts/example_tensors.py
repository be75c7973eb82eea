#!/usr/bin/python3
"""Example tensors for trying convlab on "your own" files (the README's commands use them).

  /usr/bin/python3 scripts/example_tensors.py DIR

writes to DIR (created) x (2, 64, 1024), w (32, 64, 4) and b (32) as float32 .npy, for a causal Conv1d
with dilation 2, and three outputs y (2, 32, 1024) that stand in for kernels of yours:

  mine.npy       float32 sums in NumPy's order (einsum per tap, taps added): rounding, not a bug
  mine_tf32.npy  x and w rounded to TF32 first (10-bit mantissa, as tensor cores do), exact sums
  mine_bug.npy   as mine.npy, but output channel 5 lost its bias: a bug, in one channel

Then `convlab explain --x DIR/x.npy --w DIR/w.npy --b DIR/b.npy --dilation 2 --y DIR/mine.npy ...`.
Needs NumPy (Debian: python3-numpy).
"""
import os
import sys

import numpy as np

N, C, O, L, K, D = 2, 64, 32, 1024, 4, 2


def causal_conv(x, w, b, dtype):
    """y[n,o,t] = b[o] + sum_c sum_k w[o,c,k] x[n,c,t + k*D - (K-1)*D], summed in dtype."""
    pad = (K - 1) * D
    xp = np.concatenate([np.zeros((N, C, pad), dtype), x.astype(dtype)], axis=2)
    y = np.zeros((N, O, L), dtype)
    for k in range(K):
        y += np.einsum("oc,ncl->nol", w[:, :, k].astype(dtype), xp[:, :, k * D:k * D + L])
    return y + b.astype(dtype)[None, :, None]


def tf32(a):
    """float32 rounded to TF32: to nearest, ties away from zero (cvt.rna.tf32.f32)."""
    bits = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32)
    return ((bits + np.uint32(0x1000)) & np.uint32(0xFFFFE000)).view(np.float32)


def main(argv):
    if len(argv) != 2:
        print("usage: example_tensors.py DIR", file=sys.stderr)
        return 2
    out = argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(14)
    bound = 1.0 / np.sqrt(C * K)  # nn.Conv1d's default initialisation
    x = rng.standard_normal((N, C, L)).astype(np.float32)
    w = rng.uniform(-bound, bound, (O, C, K)).astype(np.float32)
    b = rng.uniform(-bound, bound, O).astype(np.float32)
    mine = causal_conv(x, w, b, np.float32)
    mine_tf32 = causal_conv(tf32(x), tf32(w), b, np.float64).astype(np.float32)
    mine_bug = mine.copy()
    mine_bug[:, 5, :] -= b[5]
    for name, a in [("x", x), ("w", w), ("b", b), ("mine", mine), ("mine_tf32", mine_tf32), ("mine_bug", mine_bug)]:
        np.save(os.path.join(out, name + ".npy"), a)
    print(f"wrote x, w, b, mine, mine_tf32, mine_bug (.npy) to {out}: N={N} C={C} O={O} L={L} K={K}, use --dilation {D}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
