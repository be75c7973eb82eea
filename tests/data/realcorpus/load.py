"""Loads a case of this folder: load(name) -> (meta, x, w, b, y), each a float32 numpy array (b may be None);
with meta["declared"] set, x, w, b and y hold exact bf16/fp16 values."""
import json, os, sys
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

def _round_bf16(a):
    u = a.astype(np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) & ~np.uint64(0xFFFF)
    return u.astype(np.uint32).view(np.float32)

def _cast(a, dt):
    if a is None or dt is None: return a
    return _round_bf16(a) if dt == "bf16" else a.astype(np.float16).astype(np.float32)

def load(name):
    with open(os.path.join(HERE, name + ".json")) as fh:
        m = json.load(fh)
    N, C, O, K, G = (m[k] for k in ("N", "C", "O", "K", "G"))
    L = m.get("L_gen", m["L"])  # made at L_gen positions, kept at the first L (causal: nothing later matters)
    r = np.random.default_rng(m["seed"])
    kind = m.get("dist", "conv_init")
    x = (r.uniform(-1, 1, (N, C, L)).astype(np.float32) if kind == "uniform"
         else r.standard_normal((N, C, L), dtype=np.float32))
    bound = 1.0 / np.sqrt(C // G * K) if kind == "conv_init" else 1.0
    w = (r.standard_normal((O, C // G, K), dtype=np.float32) if kind == "normal"
         else r.uniform(-bound, bound, (O, C // G, K)).astype(np.float32))
    b = r.uniform(-bound, bound, O).astype(np.float32) if m["bias"] else None
    x = np.ascontiguousarray(x[..., :m["L"]])
    y = np.load(os.path.join(HERE, name + ".y.npy"))
    dt = m.get("declared")
    if dt:
        bits = y.view(np.uint16)
        y = ((bits.astype(np.uint32) << 16).view(np.float32) if dt == "bf16"
             else bits.view(np.float16).astype(np.float32))
    return m, _cast(x, dt), _cast(w, dt), _cast(b, dt), y

if __name__ == "__main__":
    for n in sys.argv[1:] or sorted(f[:-5] for f in os.listdir(HERE) if f.endswith(".json")):
        m, x, w, b, y = load(n)
        print(n, m["mode"] if "mode" in m else "tf32", x.shape, w.shape, None if b is None else b.shape, y.shape)
