"""PyTorch's CPU conv1d for the power benchmark (bench/power_torch.c).

For every problem listed in DIR/manifest.txt ("index N C O L K D bias G states silu bf16" a line), reads
x_<index>.npy, w_<index>.npy (O, C/G, K), with bias b_<index>.npy and with initial states s_<index>.npy
(N, C, (K-1)*D), computes y = conv1d(history + x, w, b, dilation=D, groups=G) in float32 on the CPU, where
the history is the states (concatenated before x) or the causal zeros (F.pad), then F.silu when asked,
and writes y_<index>.npy. With bf16 = 1 (every tensor bf16: the float32 arrays hold bf16 values) it
computes the same on bf16 tensors too, F.silu on the bf16 conv, and writes yb_<index>.npy (float32), and
with SiLU the bf16 conv before it, ybc_<index>.npy (which arithmetic PyTorch did: power_orders.c). One
process serves a whole campaign (torch's import is the slow part); one thread, so that the outputs do
not depend on the machine's core count.
Usage: /usr/bin/python3 power_torch.py DIR
"""
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F


def conv(x, w, b, s, k, dil, groups):
    history = torch.cat([s, x], dim=2) if s is not None else F.pad(x, ((k - 1) * dil, 0))
    with torch.no_grad():
        return F.conv1d(history, w, b, dilation=dil, groups=groups)


def silu(y):
    with torch.no_grad():
        return F.silu(y)


def save(d, name, idx, y):
    tmp = os.path.join(d, f"{name}_{idx}.tmp.npy")
    np.save(tmp, y.float().numpy())
    os.replace(tmp, os.path.join(d, f"{name}_{idx}.npy"))


def main(d):
    torch.set_num_threads(1)
    count = 0
    with open(os.path.join(d, "manifest.txt")) as f:
        for line in f:
            idx, n, c, o, l, k, dil, bias, groups, states, act, bf16 = (int(v) for v in line.split())
            load = lambda name: torch.from_numpy(np.load(os.path.join(d, f"{name}_{idx}.npy")))
            x, w = load("x"), load("w")
            b = load("b") if bias else None
            s = load("s") if states else None
            if (x.dtype != torch.float32 or tuple(x.shape) != (n, c, l) or tuple(w.shape) != (o, c // groups, k)
                    or (s is not None and tuple(s.shape) != (n, c, (k - 1) * dil))):
                raise SystemExit(f"problem {idx}: inputs of the wrong shape or type")
            y = conv(x, w, b, s, k, dil, groups)
            y = silu(y) if act else y
            if y.dtype != torch.float32 or tuple(y.shape) != (n, o, l):
                raise SystemExit(f"problem {idx}: conv1d gave {y.dtype} {tuple(y.shape)}")
            save(d, "y", idx, y)
            count += 1
            if bf16:
                as_bf16 = lambda t: t.bfloat16() if t is not None else None
                ybc = conv(x.bfloat16(), w.bfloat16(), as_bf16(b), as_bf16(s), k, dil, groups)
                if ybc.dtype != torch.bfloat16 or tuple(ybc.shape) != (n, o, l):
                    raise SystemExit(f"problem {idx}: bf16 conv1d gave {ybc.dtype} {tuple(ybc.shape)}")
                if act:
                    save(d, "ybc", idx, ybc)
                save(d, "yb", idx, silu(ybc) if act else ybc)
                count += 1
    print(f"torch {torch.__version__}: {count} conv1d outputs")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: power_torch.py DIR")
    main(sys.argv[1])
