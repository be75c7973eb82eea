#!/usr/bin/env python3
"""The real-library null corpus on a GPU machine: correct causal conv1d outputs that PyTorch and cuDNN
compute the ways users run them, each explained by convlab. Every one is correct, so every verdict must be
rounding of some kind (fp32-rounding, tf32-inputs, reduced-precision); a bug verdict is a false alarm.

Sources (per size): cuDNN with TF32 allowed (PyTorch's default for convolutions), TF32 off, TF32 off with
cudnn.benchmark (FFT or Winograd where cuDNN finds them faster), torch.autocast bf16 and fp16 with a bias
(x, w, b given in float32, y.float() saved, as users save it), bf16 and fp16 tensors with a bias (PyTorch adds
the bias to the already rounded output), and depthwise bf16 with a bias in channels_last (cuDNN's NHWC
kernels, conv2d on (N, C, 1, L)). Inputs from numpy's PCG64 seeds, as ../shared/realcorpus's load.py makes
them. One `convlab explain` per input set: the float32-file outputs share one oracle.

With --device cpu (Debian's PyTorch 1.13, no GPU): fp32 through oneDNN and with oneDNN off (im2col +
OpenBLAS SGEMM, in this process's OPENBLAS_CORETYPE and, each in a process of its own, under every other
--sgemm-coretypes: by default each of Cooperlake, SkylakeX, Haswell, Sandybridge, Nehalem, Core2 and
Prescott this CPU can run), BLIS's SGEMM on im2col (libblis-dev, its kernels for this CPU), autocast bf16
with a bias, bf16 tensors with a bias and bf16 depthwise on both CPU paths (oneDNN's, and the bf16 running
sums of CPUs without AVX-512 bf16).

usage: real_corpus.py --convlab PATH --out DIR [--device cuda|cpu] [--sizes 2M,16M,67M]
                      [--sources dense,lowp,dw] [--sgemm-coretypes auto|none|Haswell,...]
Prints one line per output (source, outputs, verdict, where, seconds) and writes DIR/corpus.json; exit 0
when no output is called a bug, 1 when one is, 2 on a usage or setup error.
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

SIZES = {  # name: (N, C=O, L) of the dense problem, K=4; depthwise: (N, C=O=G, L)
    "2M": ((8, 256, 1024), (8, 1024, 256)),
    "4M": ((4, 256, 4096), (4, 1024, 1024)),
    "16M": ((16, 256, 4096), (16, 2048, 512)),
    "67M": ((16, 256, 16384), (16, 4096, 1024)),
}
K = 4


def inputs(N, C, O, L, G, seed, bias=True):
    r = np.random.default_rng(seed)
    x = r.standard_normal((N, C, L), dtype=np.float32)
    bound = 1.0 / np.sqrt(C // G * K)
    w = r.uniform(-bound, bound, (O, C // G, K)).astype(np.float32)
    b = r.uniform(-bound, bound, O).astype(np.float32) if bias else None
    return x, w, b


def isa_cap():
    """ONEDNN_MAX_CPU_ISA (or DNNL_MAX_CPU_ISA) when it caps oneDNN below AVX-512, as when emulating an
    AVX2-only CPU; else None. PyTorch 1.13 sends bf16 convolutions to oneDNN when cpuinfo reports AVX-512
    (BW, VL, DQ), which no variable changes, while the capped oneDNN has no bf16 convolution: under the cap
    the bf16 runs take PyTorch's own path, as they do on a CPU without AVX-512."""
    v = (os.environ.get("ONEDNN_MAX_CPU_ISA") or os.environ.get("DNNL_MAX_CPU_ISA") or "").upper()
    return v if v and v != "ALL" and not v.startswith("AVX512") else None


def conv(torch, F, x, w, b, G, dtype=None, autocast=None, channels_last=False, dev="cuda", mkldnn=True):
    """PyTorch's causal conv1d on dev, as float32 (values of dtype when dtype is bf16/fp16)."""
    if dev == "cpu" and torch.bfloat16 in (dtype, autocast) and isa_cap():
        mkldnn = False
    xt, wt = torch.from_numpy(x).to(dev), torch.from_numpy(w).to(dev)
    bt = torch.from_numpy(b).to(dev) if b is not None else None
    if dtype is not None:
        xt, wt = xt.to(dtype), wt.to(dtype)
        bt = bt.to(dtype) if bt is not None else None
    with torch.no_grad(), torch.backends.mkldnn.flags(enabled=mkldnn):
        if channels_last:
            x4 = F.pad(xt, (K - 1, 0)).unsqueeze(2).contiguous(memory_format=torch.channels_last)
            w4 = wt.unsqueeze(2).contiguous(memory_format=torch.channels_last)
            y = F.conv2d(x4, w4, bt, groups=G).squeeze(2)
        elif autocast is not None:
            with torch.autocast(dev, dtype=autocast):
                y = F.conv1d(F.pad(xt, (K - 1, 0)), wt, bt, groups=G)
        else:
            y = F.conv1d(F.pad(xt, (K - 1, 0)), wt, bt, groups=G)
        if dev == "cuda":
            torch.cuda.synchronize()
    return y.contiguous()


def openblas_core():
    """The OpenBLAS kernel set this process runs (OPENBLAS_CORETYPE, or the one OpenBLAS detected)."""
    import ctypes
    for lib in ("libopenblas.so.0", "libblas.so.3"):
        try:
            f = ctypes.CDLL(lib).openblas_get_corename
        except (OSError, AttributeError):
            continue
        f.restype = ctypes.c_char_p
        return f().decode()
    return os.environ.get("OPENBLAS_CORETYPE", "not OpenBLAS")


def cpu_capability(torch):
    """ATen's kernel set (ATEN_CPU_CAPABILITY, or what it picked), as torch.__config__ says it."""
    lines = [l.split(":", 1)[1].strip() for l in torch.__config__.show().splitlines() if "CPU capability" in l]
    return f"ATen {lines[0] if lines else 'unknown'}"


def cpu_coretypes():
    """OpenBLAS kernel sets this CPU runs (from /proc/cpuinfo) whose SGEMM sums differ (0.3.21, C=O=256 K=4:
    each pair in 8-92 % of outputs; Zen's are Haswell's bits, Penryn's Nehalem's, Atom's Core2's). The SSE
    ones (Nehalem, Core2, Prescott) run on every x86-64 CPU of this kind: kernels of older machines, still
    what OpenBLAS picks where it does not know the CPU."""
    try:
        with open("/proc/cpuinfo") as fh:
            flags = set(next(l for l in fh if l.startswith("flags")).split(":", 1)[1].split())
    except (OSError, StopIteration):
        return []
    avx512 = {"avx512f", "avx512bw", "avx512dq", "avx512vl", "avx512cd"}
    need = (("Cooperlake", avx512 | {"avx512_bf16"}), ("SkylakeX", avx512), ("Haswell", {"avx2", "fma"}),
            ("Sandybridge", {"avx"}), ("Nehalem", {"sse4_2"}), ("Core2", {"ssse3"}), ("Prescott", {"pni"}))
    return [name for name, want in need if want <= flags]


def sgemm_in_child(coretype, files, out):
    """PyTorch's fp32 conv with oneDNN off (im2col + SGEMM) in a process whose OpenBLAS runs coretype (it
    reads OPENBLAS_CORETYPE when it loads): the output's file, and the kernel set OpenBLAS reports."""
    env = dict(os.environ, OPENBLAS_CORETYPE=coretype)
    done = subprocess.run([sys.executable, os.path.abspath(__file__), "--sgemm-child", files["x"], files["w"],
                           files["b"], out], env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"SGEMM under OPENBLAS_CORETYPE={coretype} failed: {done.stderr.strip()[-400:]}")
    return done.stdout.strip()


def sgemm_child(xf, wf, bf, out):
    import torch
    import torch.nn.functional as F
    x, w, b = np.load(xf), np.load(wf), np.load(bf)
    np.save(out, conv(torch, F, x, w, b, 1, dev="cpu", mkldnn=False).numpy())
    print(openblas_core())
    return 0


def blis_conv(x, w, b):
    """The dense causal conv as im2col + BLIS's SGEMM (bli_sgemm: BLIS's own kernels and blocking for this
    CPU, skx, haswell, zen3, ...) onto y prefilled with the bias, as bench/power_blis.c does: y (N, O, L)
    float32 and the kernel set's name, or None where libblis.so.4 is not (Debian: libblis-dev). ctypes
    opens it RTLD_LOCAL: its cblas_sgemm and sgemm_ do not take OpenBLAS's place in this process."""
    import ctypes
    try:
        lib = ctypes.CDLL("libblis.so.4")
    except OSError:
        return None
    lib.bli_arch_query_id.restype = ctypes.c_int
    lib.bli_arch_string.restype = ctypes.c_char_p
    arch = lib.bli_arch_string(lib.bli_arch_query_id()).decode()
    N, C, L = x.shape
    O = w.shape[0]
    xp = np.concatenate([np.zeros((N, C, K - 1), np.float32), x], axis=2)
    wm = np.ascontiguousarray(w.reshape(O, C * K))  # row c*K + k: w[o, c, k]
    y = np.empty((N, O, L), np.float32)
    P, Ln = ctypes.POINTER(ctypes.c_float), ctypes.c_long
    one = ctypes.c_float(1.0)
    for n in range(N):
        col = np.ascontiguousarray(np.stack([xp[n, :, k:k + L] for k in range(K)], axis=1).reshape(C * K, L))
        yn = np.ascontiguousarray(np.broadcast_to(b[:, None], (O, L)), dtype=np.float32)
        lib.bli_sgemm(0, 0, Ln(O), Ln(L), Ln(C * K), ctypes.byref(one), wm.ctypes.data_as(P), Ln(C * K), Ln(1),
                      col.ctypes.data_as(P), Ln(L), Ln(1), ctypes.byref(one), yn.ctypes.data_as(P), Ln(L), Ln(1))
        y[n] = yn
    return y, arch


def same_as(torch, done, size, name, y, record):
    """Where y equals an output already explained bit for bit (both of PyTorch's CPU paths are its own bf16
    kernel on a CPU without AVX-512), the row takes that verdict, said so, without explaining it again."""
    for prev, yp, res in done:
        if yp.dtype == y.dtype and torch.equal(yp, y):
            record(size, name, y.numel(), res, 0.0, f" (the same bits as {prev}: its verdict)")
            return True
    return False


def explain(convlab, files, ys, groups, out_dir):
    """convlab explain on x, w, b files and outputs ys [(name, file)]: [(verdict dict)], seconds."""
    args = [convlab, "explain", "--json"]
    if "case" in files:
        args += ["--case", files["case"]]
    else:
        args += ["--x", files["x"], "--w", files["w"]] + (["--b", files["b"]] if "b" in files else [])
        for _, f in ys:
            args += ["--y", f]
    if groups > 1:
        args += ["--groups", str(groups)]
    t0 = time.time()
    done = subprocess.run(args, capture_output=True, text=True)
    secs = time.time() - t0
    if done.returncode != 0:
        raise RuntimeError(f"convlab explain failed ({done.returncode}): {done.stderr.strip()[:400]}")
    if done.stderr.strip():  # C1D_TRACE_MARKS's evidence, kept beside the table
        with open(os.path.join(out_dir, "trace.txt"), "a") as fh:
            fh.write(f"--- {' '.join(n for n, _ in ys)}\n{done.stderr}")
    res = json.loads(done.stdout)
    return (res if isinstance(res, list) else [res]), secs


def main():
    if sys.argv[1:2] == ["--sgemm-child"]:  # sgemm_in_child's process: x w b y files
        return sgemm_child(*sys.argv[2:6])
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--convlab", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    ap.add_argument("--sizes", default="2M,16M,67M")
    ap.add_argument("--sources", default="dense,lowp,dw")
    ap.add_argument("--sgemm-coretypes", default="auto",
                    help="CPU: OpenBLAS kernel sets for more SGEMM outputs (auto: each this CPU runs; none)")
    a = ap.parse_args()
    try:
        import torch
        import torch.nn.functional as F
        sys.path.insert(0, os.path.join(HERE, "..", "python"))
        from convlab import _safetensors
    except ImportError as e:
        print(f"real_corpus: {e}", file=sys.stderr)
        return 2
    dev = a.device
    if dev == "cuda" and not torch.cuda.is_available():
        print("real_corpus: no CUDA device for PyTorch (--device cpu runs PyTorch's CPU paths)", file=sys.stderr)
        return 2
    os.makedirs(a.out, exist_ok=True)
    tmp = os.path.join(a.out, "tmp")
    os.makedirs(tmp, exist_ok=True)
    sources = a.sources.split(",")
    rows = []

    def record(size, source, n_out, res, secs, note=""):
        row = {"size": size, "source": source, "outputs": n_out, "verdict": res["verdict"],
               "where": res.get("where") or "", "seconds": round(secs, 2), "reason": res["reason"]}
        rows.append(row)
        print(f"{size:4s} {source:42s} {n_out:>10d} {row['verdict']:18s} {row['where']:12s} {secs:7.1f} s{note}",
              flush=True)

    core = openblas_core() if dev == "cpu" else None
    extra_cores = []
    if dev == "cpu" and a.sgemm_coretypes != "none":
        listed = cpu_coretypes() if a.sgemm_coretypes == "auto" else a.sgemm_coretypes.split(",")
        extra_cores = [c for c in listed if c and c.lower() != core.lower()]
    print(f"torch {torch.__version__}, " + (f"cuDNN {torch.backends.cudnn.version()}, {torch.cuda.get_device_name()}"
          if dev == "cuda" else f"{cpu_capability(torch)}, OpenBLAS {core} "
          f"(OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', 'unset')}), SGEMM also under: "
          f"{', '.join(extra_cores) or 'none'}"))
    if dev == "cpu" and isa_cap():
        print(f"oneDNN capped at {isa_cap()}: the bf16 runs marked [own path] take PyTorch's own bf16 path, as on a "
              "CPU without AVX-512 (PyTorch would ask the capped oneDNN, which has no bf16 convolution)")
    own = " [own path]" if dev == "cpu" and isa_cap() else ""
    for size in a.sizes.split(","):
        (N, C, L), (Nd, Cd, Ld) = SIZES[size]
        seed = 1000 + len(rows)
        if "dense" in sources:
            x, w, b = inputs(N, C, C, L, 1, seed)
            f = {"x": os.path.join(tmp, "x.npy"), "w": os.path.join(tmp, "w.npy"), "b": os.path.join(tmp, "b.npy")}
            np.save(f["x"], x), np.save(f["w"], w), np.save(f["b"], b)
            ys = []
            runs = ((("cudnn tf32 (default)", (True, False), {}),
                     ("cudnn fp32", (False, False), {}),
                     ("cudnn fp32 benchmark", (False, True), {}),
                     ("cudnn tf32 benchmark", (True, True), {}),
                     ("autocast bf16 + bias", (True, False), {"autocast": torch.bfloat16}),
                     ("autocast fp16 + bias", (True, False), {"autocast": torch.float16})) if dev == "cuda" else
                    (("torch fp32 (oneDNN)", None, {}),
                     (f"torch fp32 (oneDNN off: SGEMM {core})", None, {"mkldnn": False}),
                     ("autocast bf16 + bias (CPU)" + own, None, {"autocast": torch.bfloat16})))
            for name, setup, kw in runs:
                if setup:
                    torch.backends.cudnn.allow_tf32, torch.backends.cudnn.benchmark = setup
                y = conv(torch, F, x, w, b, 1, dev=dev, **kw).float().cpu().numpy()
                path = os.path.join(tmp, f"y{len(ys)}.npy")
                np.save(path, y)
                ys.append((name, path))
            blis = blis_conv(x, w, b) if dev == "cpu" else None
            if dev == "cpu" and not blis:
                print(f"{size:4s} BLIS SGEMM left out: libblis.so.4 cannot be opened (Debian: apt-get install libblis-dev)")
            if blis:  # a second BLAS, its own kernels
                path = os.path.join(tmp, f"y{len(ys)}.npy")
                np.save(path, blis[0])
                ys.append((f"BLIS SGEMM ({blis[1]}, im2col)", path))
            twins = []  # (name, earlier name): another kernel set that gave the same bits (Zen's are Haswell's)
            for ct in extra_cores:  # the same SGEMM path under another OpenBLAS kernel set
                path = os.path.join(tmp, f"y{len(ys)}.npy")
                got = f"torch fp32 (oneDNN off: SGEMM {sgemm_in_child(ct, f, path)})"
                yc = np.load(path)
                same = [n for n, p in ys if np.array_equal(np.load(p), yc)]
                if same:
                    twins.append((got, same[0]))
                else:
                    ys.append((got, path))
            if dev == "cuda":
                torch.backends.cudnn.allow_tf32, torch.backends.cudnn.benchmark = True, False
            res, secs = explain(a.convlab, f, ys, 1, a.out)
            for (name, _), r in zip(ys, res):
                record(size, name, y.size, r, secs / len(ys), " (shared oracle: time per output)")
            for name, prev in twins:
                record(size, name, y.size, res[[n for n, _ in ys].index(prev)], 0.0,
                       f" (the same bits as {prev}: its verdict)")
        if "lowp" in sources:
            x, w, b = inputs(N, C, C, L, 1, seed + 1)
            lowp = ((("bf16 tensors + bias", torch.bfloat16, True), ("fp16 tensors + bias", torch.float16, True))
                    if dev == "cuda" else (("bf16 tensors + bias (oneDNN)" + own, torch.bfloat16, True),
                                           ("bf16 tensors + bias (oneDNN off)", torch.bfloat16, False)))
            done = []  # (name, y, verdict): one output equal bit for bit to an earlier one takes its verdict
            for name, dt, mk in lowp:
                y = conv(torch, F, x, w, b, 1, dtype=dt, dev=dev, mkldnn=mk)
                if same_as(torch, done, size, name, y, record):
                    continue
                tt = {k: torch.from_numpy(v).to(dt) for k, v in (("x", x), ("w", w), ("b", b))}
                case = os.path.join(tmp, "case.safetensors")
                _safetensors.write(case, {"x": tt["x"], "w": tt["w"], "b": tt["b"], "initial_states": None,
                                          "y": y.cpu()})
                res, secs = explain(a.convlab, {"case": case}, [(name, case)], 1, a.out)
                record(size, name, y.numel(), res[0], secs)
                done.append((name, y, res[0]))
        if "dw" in sources:
            x, w, b = inputs(Nd, Cd, Cd, Ld, Cd, seed + 2)
            dt = torch.bfloat16
            tt = {k: torch.from_numpy(v).to(dt) for k, v in (("x", x), ("w", w), ("b", b))}
            done = []
            for name, kw in ((("depthwise bf16 NHWC + bias", {"channels_last": True}),) if dev == "cuda" else
                             (("depthwise bf16 + bias (oneDNN)" + own, {}), ("depthwise bf16 + bias (oneDNN off)",
                                                                       {"mkldnn": False}))):
                y = conv(torch, F, x, w, b, Cd, dtype=dt, dev=dev, **kw)
                if same_as(torch, done, size, name, y, record):
                    continue
                case = os.path.join(tmp, "case.safetensors")
                _safetensors.write(case, {"x": tt["x"], "w": tt["w"], "b": tt["b"], "initial_states": None,
                                          "y": y.cpu()})
                res, secs = explain(a.convlab, {"case": case}, [("dw", case)], Cd, a.out)
                record(size, name, y.numel(), res[0], secs)
                done.append((name, y, res[0]))
    for fn in os.listdir(tmp):
        os.remove(os.path.join(tmp, fn))
    os.rmdir(tmp)
    bugs = [r for r in rows if r["verdict"] in ("bug-localized", "bug-global", "non-finite")]
    with open(os.path.join(a.out, "corpus.json"), "w") as fh:
        json.dump({"torch": torch.__version__, "device": dev, "rows": rows,
                   "cudnn": torch.backends.cudnn.version() if dev == "cuda" else None}, fh, indent=1)
    print(f"{len(rows)} correct outputs, {len(bugs)} called a bug")
    for r in bugs:
        print(f"  FALSE ALARM {r['size']} {r['source']}: {r['reason'][:600]}")
    return 1 if bugs else 0


if __name__ == "__main__":
    sys.exit(main())
