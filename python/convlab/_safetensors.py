"""The safetensors format, written without the safetensors package.

A file is an 8-byte little-endian header length, a JSON header naming each tensor's dtype, shape and
byte range (data_offsets, relative to the data), padded with spaces to a multiple of 8, then the data of
every tensor, little-endian, in header order. convlab's reader (harness/safetensors.c) refuses any
other arrangement.
"""

import json
import struct

# numpy dtype name -> safetensors dtype; bf16 arrives as the raw 16-bit patterns (see _as_bytes).
_DTYPES = {"float32": "F32", "float16": "F16", "bfloat16": "BF16"}


def _as_bytes(name, tensor):
    """(safetensors dtype, shape, little-endian bytes) of a torch tensor or a NumPy array."""
    module = type(tensor).__module__.split(".")[0]
    if module == "torch":
        import torch

        t = tensor.detach().cpu().contiguous()
        if t.dtype == torch.bfloat16:
            # NumPy has no bf16: the same 16 bits, as int16.
            return "BF16", list(t.shape), t.view(torch.int16).numpy().astype("<i2").tobytes()
        kinds = {torch.float32: ("F32", "<f4"), torch.float16: ("F16", "<f2")}
        if t.dtype not in kinds:
            raise TypeError(f"{name} is a torch tensor of {t.dtype}; convlab reads float32, bfloat16 and "
                            f"float16 tensors (the values it judges are those bits)")
        dtype, fmt = kinds[t.dtype]
        return dtype, list(t.shape), t.numpy().astype(fmt).tobytes()
    import numpy as np

    if not isinstance(tensor, np.ndarray):
        raise TypeError(f"{name} is a {type(tensor).__name__}; pass a torch tensor or a NumPy array")
    dtype = _DTYPES.get(tensor.dtype.name)
    if dtype is None:
        raise TypeError(f"{name} is a NumPy array of {tensor.dtype}; convlab reads float32, float16 and "
                        f"bfloat16 (ml_dtypes) arrays, or torch tensors of those types")
    a = np.ascontiguousarray(tensor)
    if dtype == "BF16":  # ml_dtypes' bfloat16: its 16-bit patterns
        return dtype, list(a.shape), a.view(np.uint16).astype("<u2").tobytes()
    return dtype, list(a.shape), a.astype("<f4" if dtype == "F32" else "<f2").tobytes()


def write(path, tensors):
    """Writes the dict name -> tensor (torch or NumPy; None entries are left out) to path."""
    header, blobs, at = {}, [], 0
    for name, tensor in tensors.items():
        if tensor is None:
            continue
        dtype, shape, data = _as_bytes(name, tensor)
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [at, at + len(data)]}
        blobs.append(data)
        at += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for data in blobs:
            f.write(data)
