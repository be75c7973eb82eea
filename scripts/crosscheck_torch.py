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

--rows-only (what `convlab bench` runs beside its rows, harness/bench_torch.c): no bench JSON and no
checks; PyTorch's rows of the problem the saved inputs and --groups, --dilation, --dtype, --activation
describe, in the JSON {"torch", "cudnn", "device", "shape", "repeats", "rows": {name: {"ms", "rel_l2",
"max_abs", "fail_allclose_fraction", "label"}}, "left_out": {name: why}} (--out, else stdout):
  - torch_conv1d_<fp32|bf16|f16>: F.conv1d(x, w, b, padding=(K-1)*D, dilation=D, groups=G)[..., :L], the
    kernel PyTorch users get (PyTorch's own depthwise kernel; cuDNN for some fp16 shapes); with --activation
    silu, F.silu of it (timed with it: the SiLU is a second kernel in PyTorch);
  - torch_cudnn_nhwc_<fp32|bf16|f16>: F.conv2d on the (N, C, 1, L) view in channels_last memory (cuDNN's
    NHWC depthwise convolution through PyTorch; fp32 with TF32 off, as convlab's cudnn_fp32_fastest);
    left out with SiLU, as convlab's cuDNN rows are (cuDNN has no SiLU here).
  A dense float32 problem (--groups 1, --dtype f32, no SiLU, no states: the bench's headline table) has
  instead the rows its FLOP-bound table is read against, both with torch.backends.cudnn.benchmark = True
  (cuDNN's fastest algorithm by its own search, the strongest configuration PyTorch offers; the search
  runs in the warm-up):
  - torch_conv1d_fp32: F.conv1d(x, w, b, padding=(K-1)*D, dilation=D)[..., :L] with cudnn.allow_tf32 False;
  - torch_conv1d_tf32: the same with cudnn.allow_tf32 True (TF32 tensor cores).
  With initial states (s.npy), torch.cat((s, x)) replaces the padding, inside the timed region (a PyTorch
  user has to run it). Times as convlab's rows: CUDA events around the call only, one warm-up, the L2
  flushed before each of --repeats runs, the median; cudnn.benchmark left at PyTorch's default. rel_l2,
  max_abs and the allclose(1e-4, 1e-4) failures against float64 (PyTorch's conv1d in float64 on the device).
  Exit status 0, or 2 with one line on stderr ("crosscheck: PyTorch 1.13.0 is a CPU-only build: no CUDA")
  when PyTorch, NumPy or CUDA is missing or the inputs do not fit the flags (argparse's own refusals: its
  usage, then the error as the last line).
Usage: crosscheck_torch.py --inputs DIR --bench bench.json [--out crosscheck.json]
       crosscheck_torch.py --rows-only --inputs DIR --groups G [--dilation D] [--dtype f32|bf16|f16]
                           [--activation none|silu] [--repeats R] [--out rows.json]
"""
import argparse
import json
import math
import os
import sys
import tempfile
import time

try:
    import numpy as np
except ImportError as e:  # one line, as every other refusal (convlab bench prints it)
    print(f"crosscheck: NumPy is needed: {e}", file=sys.stderr)
    sys.exit(2)


# --rows-only's element types: torch's names, and the rows' suffixes (grouped_main's names).
TORCH_DTYPES = {"f32": "float32", "bf16": "bfloat16", "f16": "float16"}
ROW_SUFFIX = {"f32": "fp32", "bf16": "bf16", "f16": "f16"}


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
    ap.add_argument("--bench", help="JSON written by convlab bench --out (not with --rows-only)")
    ap.add_argument("--out", help="write the comparison as JSON here")
    ap.add_argument("--tol-library", type=float, default=0.10, help="cudnn vs torch (default 0.10)")
    ap.add_argument("--tol-model", type=float, default=0.20, help="model vs observed (default 0.20)")
    ap.add_argument("--rows-only", action="store_true", help="PyTorch's rows of a grouped problem, no checks")
    ap.add_argument("--groups", type=int, help="G (--rows-only)")
    ap.add_argument("--dilation", type=int, default=1, help="D (--rows-only; default 1)")
    ap.add_argument("--dtype", choices=sorted(TORCH_DTYPES), default="f32", help="every tensor's type (--rows-only)")
    ap.add_argument("--activation", choices=("none", "silu"), default="none", help="(--rows-only)")
    ap.add_argument("--repeats", type=int, default=20, help="timed runs per row (--rows-only; default 20)")
    # For the tests on machines without CUDA: the same rows on the CPU (no cuDNN, times by the clock).
    ap.add_argument("--device", choices=("cuda", "cpu"), default="cuda", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.rows_only:
        return rows_only_main(ap, args)
    if not args.bench:
        ap.error("--bench is required (or --rows-only)")

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


# --- --rows-only: PyTorch's rows for convlab bench's grouped table -------------------------------------


def load_inputs(d, headers_only=False):
    """x, w, b, s from d (b and s None when absent); with headers_only memory maps, nothing read."""
    mode = "r" if headers_only else None
    out = []
    for name in ("x", "w", "b", "s"):
        path = os.path.join(d, f"{name}.npy")
        if name in ("b", "s") and not os.path.exists(path):
            out.append(None)
            continue
        try:
            out.append(np.load(path, mmap_mode=mode))
        except (OSError, ValueError) as e:
            fail(str(e))
    return out


def check_rows_problem(args, x, w, b, st):
    """One line and exit 2 when the arrays do not make the problem the flags describe."""
    if args.groups is None or args.groups < 1:
        fail("--rows-only needs --groups G (G >= 1)")
    if args.dilation < 1 or args.repeats < 1:
        fail("--dilation and --repeats must be at least 1")
    if any(a is not None and a.dtype != np.float32 for a in (x, w, b, st)):
        fail("inputs must be float32 (as convlab bench --save-inputs writes them)")
    if x.ndim != 3 or w.ndim != 3:
        fail(f"x {x.shape} and w {w.shape} must be (N, C, L) and (O, C/G, K)")
    (N, C, L), (O, Cg, K), G = x.shape, w.shape, args.groups
    if C % G or O % G or Cg * G != C:
        fail(f"x {x.shape} and w {w.shape} do not fit --groups {G} (w must be (O, C/G, K), G dividing O)")
    if b is not None and b.shape != (O,):
        fail(f"b {b.shape} is not ({O},)")
    if st is not None and st.shape != (N, C, (K - 1) * args.dilation):
        fail(f"s {st.shape} is not (N, C, (K-1)*D) = ({N}, {C}, {(K - 1) * args.dilation})")


def no_cuda_reason(torch):
    if torch.version.cuda is None:
        return f"PyTorch {torch.__version__} is a CPU-only build: no CUDA"
    return f"PyTorch {torch.__version__} (CUDA {torch.version.cuda}) sees no CUDA device"


def make_timer(torch, dev, reps):
    """median_ms(fn): fn's median time in ms over reps runs after one warm-up, each run alone between
    CUDA events after an L2 flush (convlab's rows are timed so); on the CPU by the clock."""
    flush = None
    if dev.type == "cuda":
        l2 = getattr(torch.cuda.get_device_properties(dev), "L2_cache_size", 0) or 64 << 20
        flush = torch.empty(2 * l2, dtype=torch.uint8, device=dev)  # twice the L2 evicts it

    def median_ms(fn):
        fn()
        times = []
        for i in range(reps):
            if flush is None:
                t0 = time.perf_counter()
                fn()
                times.append((time.perf_counter() - t0) * 1e3)
                continue
            flush.fill_(i & 0xFF)
            a, z = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            fn()
            z.record()
            z.synchronize()
            times.append(a.elapsed_time(z))
        return sorted(times)[len(times) // 2]

    return median_ms


def rows_only_calls(torch, F, dev, args, arrays):
    """{name: (label, fn)} for the rows, {name: why} for those left out, and the float64 output."""
    x, w, b, st = arrays
    L, K, G, D = x.shape[2], w.shape[2], args.groups, args.dilation
    P, dt, sfx = (K - 1) * D, getattr(torch, TORCH_DTYPES[args.dtype]), ROW_SUFFIX[args.dtype]
    silu = args.activation == "silu"
    act = F.silu if silu else (lambda y: y)

    def on_dev(a, t):
        return torch.from_numpy(np.ascontiguousarray(a)).to(dev, t) if a is not None else None

    def conv1d(tx, tw, tb, ts):  # the causal padding folded into conv1d's, or the states before x
        if ts is None:
            return act(F.conv1d(tx, tw, tb, padding=P, dilation=D, groups=G)[..., :L])
        return act(F.conv1d(torch.cat((ts, tx), -1), tw, tb, dilation=D, groups=G))

    ref = conv1d(*(on_dev(a, torch.float64) for a in arrays))
    tx, tw, tb, ts = (on_dev(a, dt) for a in arrays)
    extra = (" + F.silu" if silu else "") + (", after torch.cat((s, x))" if ts is not None else "")
    kernel = "its own kernel" if args.dtype != "f16" else "its own kernel or cuDNN, PyTorch's choice for fp16"
    left_out = {}
    if G == 1 and args.dtype == "f32" and not silu and ts is None:
        return dense_calls(torch, conv1d, (tx, tw, tb)), left_out, ref
    calls = {f"torch_conv1d_{sfx}": (f"F.conv1d ({kernel}){extra}", lambda: conv1d(tx, tw, tb, ts))}
    if silu:
        left_out[f"torch_cudnn_nhwc_{sfx}"] = "cuDNN has no SiLU (convlab's cuDNN rows skip SiLU problems too)"
        return calls, left_out, ref
    cl = torch.channels_last  # prepared once: a channels_last user's tensors are so already
    x4, w4 = (t.unsqueeze(2).contiguous(memory_format=cl) for t in (tx, tw))
    s4 = ts.unsqueeze(2).contiguous(memory_format=cl) if ts is not None else None

    def nhwc():
        if s4 is None:
            return F.conv2d(x4, w4, tb, padding=(0, P), dilation=(1, D), groups=G)[..., :L].squeeze(2)
        xs = torch.cat((s4, x4), -1).contiguous(memory_format=cl)
        return F.conv2d(xs, w4, tb, dilation=(1, D), groups=G).squeeze(2)

    tf32 = ", TF32 off" if args.dtype == "f32" else ""
    calls[f"torch_cudnn_nhwc_{sfx}"] = (f"conv2d channels_last (cuDNN NHWC{tf32}){extra}", nhwc)
    return calls, left_out, ref


def dense_calls(torch, conv1d, tensors):
    """The dense float32 rows: F.conv1d with TF32 off and on, cuDNN's benchmark mode in both (each call
    sets the flags it runs under, so the two rows' searches and timings stay apart)."""
    cudnn = torch.backends.cudnn

    def under(tf32):
        def call():
            cudnn.benchmark, cudnn.allow_tf32 = True, tf32
            return conv1d(*tensors, None)
        return call

    return {"torch_conv1d_fp32": ("F.conv1d (cuDNN, TF32 off, benchmark mode)", under(False)),
            "torch_conv1d_tf32": ("F.conv1d (cuDNN, TF32 on, benchmark mode)", under(True))}


def rows_only_main(ap, args):
    """--rows-only: the inputs' headers checked against the flags, then PyTorch, then every row measured."""
    if args.bench:
        ap.error("--rows-only takes no --bench")
    check_rows_problem(args, *load_inputs(args.inputs, headers_only=True))
    try:
        import torch
        import torch.nn.functional as F
    except ImportError as e:
        fail(f"PyTorch is needed: {e}")
    if args.device == "cuda" and not torch.cuda.is_available():
        fail(no_cuda_reason(torch))
    dev = torch.device(args.device)
    arrays = load_inputs(args.inputs)
    median_ms = make_timer(torch, dev, args.repeats)
    saved = torch.backends.cudnn.allow_tf32, torch.backends.cudnn.benchmark
    torch.backends.cudnn.allow_tf32 = False  # fp32 as convlab's cuDNN reference row; no effect on bf16/fp16
    rows = {}
    with torch.no_grad():
        calls, left_out, ref = rows_only_calls(torch, F, dev, args, arrays)
        ref_norm = torch.linalg.vector_norm(ref).item()
        for name, (label, fn) in calls.items():
            d = fn().double() - ref
            fails = (d.abs() > 1e-4 + 1e-4 * ref.abs()).sum().item()
            rows[name] = {"label": label, "rel_l2": torch.linalg.vector_norm(d).item() / ref_norm,
                          "max_abs": d.abs().max().item(), "fail_allclose_fraction": fails / ref.numel()}
            del d
            rows[name]["ms"] = median_ms(fn)
    torch.backends.cudnn.allow_tf32, torch.backends.cudnn.benchmark = saved
    (N, C, L), (O, _, K) = arrays[0].shape, arrays[1].shape
    doc = {"torch": torch.__version__, "cudnn": torch.backends.cudnn.version() if dev.type == "cuda" else None,
           "device": torch.cuda.get_device_name(dev) if dev.type == "cuda" else "cpu",
           "shape": {"N": N, "C": C, "O": O, "L": L, "K": K, "D": args.dilation, "G": args.groups,
                     "bias": int(arrays[2] is not None), "states": int(arrays[3] is not None),
                     "dtype": args.dtype, "activation": args.activation},
           "repeats": args.repeats, "rows": rows, "left_out": left_out}
    if args.out:
        write_doc(args.out, doc)
    else:
        print(json.dumps(doc, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
