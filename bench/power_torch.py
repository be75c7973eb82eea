"""PyTorch's CPU conv1d for the power benchmark (bench/power_torch.c).

For every problem listed in DIR/manifest.txt ("index N C O L K D bias" a line), reads x_<index>.npy,
w_<index>.npy and (with bias) b_<index>.npy, computes y = conv1d(F.pad(x, ((K-1)*D, 0)), w, b,
dilation=D) in float32 on the CPU, and writes y_<index>.npy. One process serves a whole campaign (torch's
import is the slow part); one thread, so that the outputs do not depend on the machine's core count.
Usage: /usr/bin/python3 power_torch.py DIR
"""
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F


def main(d):
    torch.set_num_threads(1)
    count = 0
    with open(os.path.join(d, "manifest.txt")) as f:
        for line in f:
            idx, n, c, o, l, k, dil, bias = (int(v) for v in line.split())
            x = torch.from_numpy(np.load(os.path.join(d, f"x_{idx}.npy")))
            w = torch.from_numpy(np.load(os.path.join(d, f"w_{idx}.npy")))
            b = torch.from_numpy(np.load(os.path.join(d, f"b_{idx}.npy"))) if bias else None
            if x.dtype != torch.float32 or tuple(x.shape) != (n, c, l) or tuple(w.shape) != (o, c, k):
                raise SystemExit(f"problem {idx}: inputs of the wrong shape or type")
            with torch.no_grad():
                y = F.conv1d(F.pad(x, ((k - 1) * dil, 0)), w, b, dilation=dil)
            if y.dtype != torch.float32 or tuple(y.shape) != (n, o, l):
                raise SystemExit(f"problem {idx}: conv1d gave {y.dtype} {tuple(y.shape)}")
            tmp = os.path.join(d, f"y_{idx}.tmp.npy")
            np.save(tmp, y.numpy())
            os.replace(tmp, os.path.join(d, f"y_{idx}.npy"))
            count += 1
    print(f"torch {torch.__version__}: {count} conv1d outputs")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: power_torch.py DIR")
    main(sys.argv[1])
