#!/usr/bin/env python3
"""Cross-check convlab's cuDNN paths and TF32 model against PyTorch, on the same inputs.

Reads the inputs that `convlab bench --save-inputs DIR` wrote (x.npy, w.npy and b.npy when there is a
bias) and the JSON that `convlab bench --out FILE` wrote, runs PyTorch's causal Conv1d
(F.conv1d(F.pad(x, ((K-1)*D, 0)), w, b, dilation=D)) on the GPU with
torch.backends.cudnn.allow_tf32 False and True, and in float64 as the reference, then compares:

  - torch fp32 vs convlab cudnn_fp32, torch tf32 vs convlab cudnn_tf32: relative L2 error against float64
    must agree within 10 % (the same library, the same inputs; only the algorithm may differ);
  - the TF32 model (convlab's gpu_tf32_inputs, or tf32_inputs) vs the observed TF32 error (torch's and
    convlab's): within 20 %.

Also printed: max |error|, the fraction of elements failing allclose(atol=rtol=1e-4) against float64, and
PyTorch's own model (inputs rounded to TF32, then float64): the input-rounding part of the error alone.

Grouped and depthwise problems (the bench's shape has G > 1; `convlab bench --depthwise`), on the same
inputs (the initial states s.npy concatenated before x when present), in the bench's element type (x, w,
b and s cast to bf16/fp16 as PyTorch runs them):
  - cuDNN through PyTorch: conv2d(groups=G) on the (N, C, 1, L) view in channels_last memory, the format
    for which PyTorch always calls cuDNN's depthwise convolution: for fp32 with TF32 off vs convlab
    cudnn_fp32 and on vs cudnn_tf32, for bf16/fp16 vs cudnn_lowp; each relative L2 within 10 %;
  - what PyTorch users get: conv1d(groups=G), which PyTorch sends to its own depthwise kernel for fp32
    and bf16 (cuDNN only for some fp16 shapes): printed, with its time (CUDA events, median of 20) and
    bytes per second, and gpu_dw_fast's figures beside it; no check.
Exit status 0 when every check agrees, 1 when one does not, 2 on a usage or input error.
Usage: crosscheck_torch.py --inputs DIR --bench bench.json [--out crosscheck.json]
"""
import argparse
import json
import math
import os
import sys
import tempfile

import numpy as np


def fail(msg):
    print(f"crosscheck: {msg}", file=sys.stderr)
    sys.exit(2)


def round_tf32_rna(a):
    """float32 -> TF32 (10 mantissa bits), nearest with ties away: convlab's c1d_round_tf32_rna."""
    u = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32)
    special = (u & np.uint32(0x7F800000)) == np.uint32(0x7F800000)
    r = ((u + np.uint32(0x1000)) & np.uint32(0xFFFFE000)).astype(np.uint32)
    r = np.where(special, u, r)
    return r.view(np.float32)


def bench_rows(bench):
    rows = {}
    for row in bench.get("rows", []):
        rows[row["name"]] = row
    return rows


def rel_change(a, b):
    return abs(a - b) / abs(b) if b else math.inf


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--inputs", required=True, help="directory with x.npy, w.npy [, b.npy]")
    ap.add_argument("--bench", required=True, help="JSON written by convlab bench --out")
    ap.add_argument("--out", help="write the comparison as JSON here")
    ap.add_argument("--tol-library", type=float, default=0.10, help="cudnn vs torch (default 0.10)")
    ap.add_argument("--tol-model", type=float, default=0.20, help="model vs observed (default 0.20)")
    args = ap.parse_args()

    try:
        import torch
        import torch.nn.functional as F
    except ImportError as e:
        fail(f"PyTorch is needed: {e}")
    if not torch.cuda.is_available():
        fail("PyTorch sees no CUDA device")

    try:
        with open(args.bench) as f:
            bench = json.load(f)
        x = np.load(os.path.join(args.inputs, "x.npy"))
        w = np.load(os.path.join(args.inputs, "w.npy"))
        bpath = os.path.join(args.inputs, "b.npy")
        b = np.load(bpath) if os.path.exists(bpath) else None
        spath = os.path.join(args.inputs, "s.npy")
        st = np.load(spath) if os.path.exists(spath) else None
    except (OSError, ValueError) as e:
        fail(str(e))
    shape = bench["shape"]
    if int(shape.get("G", 1)) > 1:
        return grouped_main(args, torch, F, bench, x, w, b, st)
    N, C, L = x.shape
    O, C2, K = w.shape
    D = int(shape["D"])
    if C2 != C or (N, C, O, L, K) != (shape["N"], shape["C"], shape["O"], shape["L"], shape["K"]):
        fail(f"inputs {x.shape} {w.shape} do not match the bench shape {shape}")
    if x.dtype != np.float32 or w.dtype != np.float32:
        fail("inputs must be float32")
    P = (K - 1) * D

    dev = torch.device("cuda")
    tx, tw = torch.from_numpy(x).to(dev), torch.from_numpy(w).to(dev)
    tb = torch.from_numpy(b).to(dev) if b is not None else None

    def conv(xx, ww, bb):
        return F.conv1d(F.pad(xx, (P, 0)), ww, bb, dilation=D)

    with torch.no_grad():
        ref = conv(tx.double(), tw.double(), tb.double() if tb is not None else None)
        ref_norm = torch.linalg.vector_norm(ref).item()

        def stats(y):
            d = y.double() - ref
            fails = (d.abs() > 1e-4 + 1e-4 * ref.abs()).sum().item()
            return {
                "rel_l2": torch.linalg.vector_norm(d).item() / ref_norm,
                "max_abs": d.abs().max().item(),
                "fail_allclose_fraction": fails / ref.numel(),
            }

        results = {}
        saved = torch.backends.cudnn.allow_tf32
        for name, allow in (("torch_fp32", False), ("torch_tf32", True)):
            torch.backends.cudnn.allow_tf32 = allow
            y = conv(tx, tw, tb)
            torch.cuda.synchronize()
            results[name] = stats(y)
            del y
        torch.backends.cudnn.allow_tf32 = saved
        # PyTorch-side model: inputs rounded to TF32, everything else exact (float64).
        xr = torch.from_numpy(round_tf32_rna(x)).to(dev).double()
        wr = torch.from_numpy(round_tf32_rna(w)).to(dev).double()
        results["torch_model_tf32_inputs_f64"] = stats(conv(xr, wr, tb.double() if tb is not None else None))

    rows = bench_rows(bench)
    model_name = "gpu_tf32_inputs" if "gpu_tf32_inputs" in rows else "tf32_inputs"

    def conv_l2(name):
        r = rows.get(name)
        if not r or r.get("rel_l2") is None:
            return None
        return float(r["rel_l2"])

    checks = []

    def check(what, observed, reference, tol):
        if observed is None or reference is None:
            checks.append({"check": what, "ok": False, "observed": observed, "reference": reference,
                           "note": "missing in the bench JSON"})
            return
        rc = rel_change(observed, reference)
        checks.append({"check": what, "ok": rc <= tol, "a": observed, "b": reference, "rel_diff": rc,
                       "tolerance": tol})

    check("convlab cudnn_fp32 vs torch fp32 (rel L2)", conv_l2("cudnn_fp32"), results["torch_fp32"]["rel_l2"],
          args.tol_library)
    check("convlab cudnn_tf32 vs torch tf32 (rel L2)", conv_l2("cudnn_tf32"), results["torch_tf32"]["rel_l2"],
          args.tol_library)
    check(f"model {model_name} vs torch tf32 (rel L2)", conv_l2(model_name), results["torch_tf32"]["rel_l2"],
          args.tol_model)
    check(f"model {model_name} vs convlab cudnn_tf32 (rel L2)", conv_l2(model_name), conv_l2("cudnn_tf32"),
          args.tol_model)

    print(f"shape N={N} C={C} O={O} L={L} K={K} D={D} bias={int(b is not None)}; torch {torch.__version__}, "
          f"cuDNN {torch.backends.cudnn.version()}, {torch.cuda.get_device_name(0)}")
    print(f"{'path':34s} {'rel L2':>10s} {'max |err|':>10s} {'fail allclose(1e-4)':>20s}")
    for name, r in results.items():
        print(f"{name:34s} {r['rel_l2']:10.3e} {r['max_abs']:10.3e} {100 * r['fail_allclose_fraction']:19.2f}%")
    for name in ("cudnn_fp32", "cudnn_tf32", "cublas_im2col_fp32", "cublas_im2col_tf32", model_name):
        r = rows.get(name)
        if r and r.get("rel_l2") is not None:
            frac = r.get("fail_allclose_fraction")
            print(f"{'convlab ' + name:34s} {r['rel_l2']:10.3e} {r.get('max_abs', float('nan')):10.3e} "
                  f"{(100 * frac if frac is not None else float('nan')):19.2f}%  {r.get('math', '')}")
    print()
    ok = print_checks(checks)

    if args.out:
        write_doc(args.out, {"shape": {"N": N, "C": C, "O": O, "L": L, "K": K, "D": D, "bias": int(b is not None)},
                             "torch": torch.__version__, "cudnn": torch.backends.cudnn.version(),
                             "device": torch.cuda.get_device_name(0), "torch_results": results, "checks": checks,
                             "ok": ok})
    return 0 if ok else 1


def write_doc(path, doc):
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".crosscheck.")
    with os.fdopen(fd, "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)


def print_checks(checks):
    """One line per check (AGREE, DISAGREE or MISSING) and the summary; True when there are checks and all agree."""
    for c in checks:
        if "rel_diff" in c:
            print(f"{'AGREE   ' if c['ok'] else 'DISAGREE'} {c['check']}: {c['a']:.4g} vs {c['b']:.4g} "
                  f"({100 * c['rel_diff']:.1f} %, tolerance {100 * c['tolerance']:.0f} %)")
        else:
            print(f"MISSING  {c['check']}: {c['note']}")
    ok = bool(checks) and all(c["ok"] for c in checks)
    print("crosscheck:", "all checks agree" if ok else "some checks disagree")
    return ok


def grouped_main(args, torch, F, bench, x, w, b, st):
    """The cuDNN rows of a grouped (depthwise) bench against PyTorch's conv1d(groups=G)."""
    shape = bench["shape"]
    N, C, L = x.shape
    O, Cg, K = w.shape
    G, D = int(shape["G"]), int(shape["D"])
    dtype = shape.get("dtypes", {}).get("x", "f32")
    if (N, C, O, L, K) != (shape["N"], shape["C"], shape["O"], shape["L"], shape["K"]) or Cg * G != C:
        fail(f"inputs {x.shape} {w.shape} do not match the bench shape {shape}")
    if shape.get("activation", "none") != "none":
        fail("the cuDNN rows have no SiLU: cross-check a bench without --activation")
    P = (K - 1) * D
    dev = torch.device("cuda")
    tdt = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}.get(dtype)
    if tdt is None:
        fail(f"unknown element type {dtype!r} in the bench JSON")
    tx, tw = torch.from_numpy(x).to(dev), torch.from_numpy(w).to(dev)
    tb = torch.from_numpy(b).to(dev) if b is not None else None
    ts = torch.from_numpy(st).to(dev) if st is not None else None

    def padded(xx, ss):
        return torch.cat((ss, xx), -1) if ss is not None else F.pad(xx, (P, 0))

    def conv(xx, ww, bb, ss):
        return F.conv1d(padded(xx, ss), ww, bb, dilation=D, groups=G)

    def conv_cudnn(xx, ww, bb, ss):
        cl = torch.channels_last
        x4 = padded(xx, ss).unsqueeze(2).contiguous(memory_format=cl)
        y4 = F.conv2d(x4, ww.unsqueeze(2).contiguous(memory_format=cl), bb, dilation=(1, D), groups=G)
        return y4.squeeze(2)

    def cast(t, to):
        return t.to(to) if t is not None else None

    def median_ms(fn, reps=20):
        fn()
        times = []
        for _ in range(reps):
            a, z = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            fn()
            z.record()
            torch.cuda.synchronize()
            times.append(a.elapsed_time(z))
        return sorted(times)[len(times) // 2]

    esize = {"f32": 4, "bf16": 2, "f16": 2}[dtype]
    moved = (N * C * L + N * O * L) * esize
    with torch.no_grad():
        ref = conv(tx.double(), tw.double(), cast(tb, torch.float64), cast(ts, torch.float64))
        ref_norm = torch.linalg.vector_norm(ref).item()

        def stats(y):
            d = y.double() - ref
            fails = (d.abs() > 1e-4 + 1e-4 * ref.abs()).sum().item()
            return {"rel_l2": torch.linalg.vector_norm(d).item() / ref_norm, "max_abs": d.abs().max().item(),
                    "fail_allclose_fraction": fails / ref.numel()}

        results, pairs = {}, []
        saved = torch.backends.cudnn.allow_tf32

        def measure(name, fn, *operands):
            results[name] = stats(fn(*operands))
            results[name]["ms"] = median_ms(lambda: fn(*operands))

        if dtype == "f32":
            for suffix, allow, row in (("fp32", False, "cudnn_fp32"), ("tf32", True, "cudnn_tf32")):
                torch.backends.cudnn.allow_tf32 = allow
                measure(f"torch_cudnn_nhwc_{suffix}", conv_cudnn, tx, tw, tb, ts)
                pairs.append((f"torch_cudnn_nhwc_{suffix}", row))
            torch.backends.cudnn.allow_tf32 = False
            measure("torch_conv1d_fp32", conv, tx, tw, tb, ts)
        else:
            lx, lw, lb, ls = cast(tx, tdt), cast(tw, tdt), cast(tb, tdt), cast(ts, tdt)
            measure(f"torch_cudnn_nhwc_{dtype}", conv_cudnn, lx, lw, lb, ls)
            pairs.append((f"torch_cudnn_nhwc_{dtype}", "cudnn_lowp"))
            measure(f"torch_conv1d_{dtype}", conv, lx, lw, lb, ls)
        torch.backends.cudnn.allow_tf32 = saved

    rows = bench_rows(bench)
    checks = []
    for tname, row in pairs:
        r = rows.get(row)
        observed = float(r["rel_l2"]) if r and r.get("rel_l2") is not None else None
        reference = results[tname]["rel_l2"]
        if observed is None:
            checks.append({"check": f"convlab {row} vs {tname}", "ok": False, "note": "missing in the bench JSON"})
            continue
        rc = rel_change(observed, reference)
        checks.append({"check": f"convlab {row} vs {tname} (rel L2)", "ok": rc <= args.tol_library, "a": observed,
                       "b": reference, "rel_diff": rc, "tolerance": args.tol_library})

    print(f"shape N={N} C={C} O={O} L={L} K={K} D={D} G={G} bias={int(b is not None)} states={int(st is not None)} "
          f"{dtype}; torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}, {torch.cuda.get_device_name(0)}")
    print(f"{'path':34s} {'rel L2':>10s} {'max |err|':>10s} {'fail allclose(1e-4)':>20s} {'ms':>8s} {'GB/s':>8s}")
    for name, r in results.items():
        print(f"{name:34s} {r['rel_l2']:10.3e} {r['max_abs']:10.3e} {100 * r['fail_allclose_fraction']:19.2f}% "
              f"{r['ms']:8.3f} {moved / (r['ms'] * 1e6):8.0f}")
    for name in ("cudnn_fp32", "cudnn_tf32", "cudnn_fp32_fastest", "cudnn_lowp", "cudnn_lowp_fastest", "gpu_dw_fast"):
        r = rows.get(name)
        if r and r.get("rel_l2") is not None:
            frac = r.get("fail_allclose_fraction")
            print(f"{'convlab ' + name:34s} {r['rel_l2']:10.3e} {r.get('max_abs', float('nan')):10.3e} "
                  f"{(100 * frac if frac is not None else float('nan')):19.2f}% {r.get('time_median_ms', float('nan')):8.3f} "
                  f"{r.get('gbps', float('nan')):8.0f}  {r.get('algo', '')}")
    print()
    ok = print_checks(checks)
    if args.out:
        write_doc(args.out, {"shape": dict(shape), "torch": torch.__version__, "cudnn": torch.backends.cudnn.version(),
                             "device": torch.cuda.get_device_name(0), "torch_results": results, "checks": checks,
                             "ok": ok})
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
