"""The README's second tour: a bf16 depthwise causal conv1d (Mamba's kind: SiLU, initial states) whose
kernel rounds each product to bf16 before its fp32 sum (the bug of vLLM issue 52887), checked first as
its tests do (allclose at rtol 1e-2, atol 5e-2 against a PyTorch reference), then explained by convlab.

    PYTHONPATH=python /usr/bin/python3 python/examples/tour_bf16_products.py [DIR]

With DIR it also writes DIR/case.safetensors (x, w, b, initial_states and the kernel's y), the file
convlab explain --case reads.
"""
import os
import sys

import torch
import torch.nn.functional as F

import convlab
from convlab import _safetensors

N, C, L, K = 4, 256, 2048, 4
g = torch.Generator().manual_seed(0)
x = torch.randn(N, C, L, generator=g).to(torch.bfloat16)
w = ((torch.rand(C, 1, K, generator=g) * 2 - 1) / K ** 0.5).to(torch.bfloat16)
b = ((torch.rand(C, generator=g) * 2 - 1) / K ** 0.5).to(torch.bfloat16)
s = torch.randn(N, C, K - 1, generator=g).to(torch.bfloat16)  # the chunk before this one
xs = torch.cat([s, x], dim=2)


def kernel(xs, w, b):
    """The buggy kernel: bf16 * bf16 products rounded to bf16, then summed in fp32, SiLU, bf16 out."""
    acc = b.float().view(1, -1, 1)
    for k in range(K):
        acc = acc + (xs[:, :, k:k + L] * w[:, 0, k].view(1, -1, 1)).float()
    return F.silu(acc).to(torch.bfloat16)


y = kernel(xs, w, b)
ref = F.silu(F.conv1d(xs.float(), w.float(), b.float(), groups=C)).to(torch.bfloat16)
print("allclose(rtol=1e-2, atol=5e-2):", torch.allclose(y.float(), ref.float(), rtol=1e-2, atol=5e-2))
print("outputs that differ from the reference: %.1f%%" % (100 * (y != ref).float().mean().item()))

r = convlab.explain(x, w, y, b, groups=C, activation="silu", initial_states=s)
print(r["verdict"], r["where"])
print(r["reason"])
print("the reference itself:", convlab.explain(x, w, ref, b, groups=C, activation="silu", initial_states=s)["verdict"])
if len(sys.argv) > 1:
    os.makedirs(sys.argv[1], exist_ok=True)
    _safetensors.write(os.path.join(sys.argv[1], "case.safetensors"),
                       {"x": x, "w": w, "b": b, "initial_states": s, "y": y})
