#!/usr/bin/env python3
"""PyTorch's causal Conv1d on the GPU in float64 (and, for context, float32 with and without TF32), timed
like convlab times its kernels: CUDA events around the convolution only, warm-up first, L2 flushed before
each timed run, median reported. It stands in for convlab's own cuDNN float64 path in the comparison
"gpu_oracle_f64 is no slower than cuDNN's float64 convolution".

The input is padded on the left by (K-1)*D once, outside the timed region, so only cuDNN's convolution is
timed. Prints one human line per path and one "RESULT torch_<path>_ms <ms>" line for scripts to parse.

usage: bench_f64_torch.py [--shape N,C,O,L,K,D,bias] [--repeats R] [--json FILE]
"""
import argparse
import json
import statistics
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shape", default="32,256,256,8192,4,1,0", help="N,C,O,L,K,D,bias (default: headline)")
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--json", help="also write the results to this file")
    args = ap.parse_args()
    N, C, O, L, K, D, bias = (int(v) for v in args.shape.split(","))

    try:
        import torch
        import torch.nn.functional as F
    except ImportError as e:
        print(f"bench_f64_torch: PyTorch is not installed ({e})", file=sys.stderr)
        return 1
    if not torch.cuda.is_available():
        print("bench_f64_torch: no CUDA device visible to PyTorch", file=sys.stderr)
        return 1

    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(dev)
    l2 = getattr(props, "L2_cache_size", 64 << 20) or (64 << 20)
    flush = torch.empty(2 * l2, dtype=torch.uint8, device=dev)
    pad = (K - 1) * D
    gen = torch.Generator(device=dev).manual_seed(1)
    bound = 1.0 / (C * K) ** 0.5
    x = torch.randn(N, C, L, device=dev, dtype=torch.float64, generator=gen)
    w = (torch.rand(O, C, K, device=dev, dtype=torch.float64, generator=gen) * 2 - 1) * bound
    b = (torch.rand(O, device=dev, dtype=torch.float64, generator=gen) * 2 - 1) * bound if bias else None
    xp = F.pad(x, (pad, 0))

    def timed(fn):
        fn()  # warm-up (and, with cudnn.benchmark, the algorithm search)
        torch.cuda.synchronize()
        times = []
        for _ in range(args.repeats):
            flush.fill_(len(times) & 0xFF)
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            stop.record()
            stop.synchronize()
            times.append(start.elapsed_time(stop))
        return statistics.median(times), min(times)

    results = {"shape": [N, C, O, L, K, D, bias], "torch": torch.__version__,
               "cudnn": torch.backends.cudnn.version(), "device": props.name, "repeats": args.repeats}
    flops = 2.0 * N * O * L * C * K
    paths = []
    for benchmark in (False, True):
        paths.append((f"fp64{'_benchmark' if benchmark else ''}", torch.float64, False, benchmark))
    paths.append(("fp32", torch.float32, False, True))
    paths.append(("tf32", torch.float32, True, True))
    for name, dtype, tf32, benchmark in paths:
        torch.backends.cudnn.benchmark = benchmark
        torch.backends.cudnn.allow_tf32 = tf32
        xi, wi = xp.to(dtype), w.to(dtype)
        bi = b.to(dtype) if b is not None else None
        with torch.no_grad():
            med, mn = timed(lambda: F.conv1d(xi, wi, bi, dilation=D))
        results[name + "_ms"] = med
        print(f"torch {name:15s} median {med:8.3f} ms  min {mn:8.3f} ms  {flops / med / 1e9:7.2f} TFLOP/s")
        print(f"RESULT torch_{name}_ms {med:.4f}")
        sys.stdout.flush()
    best = min(results["fp64_ms"], results["fp64_benchmark_ms"])
    results["fp64_best_ms"] = best
    print(f"RESULT torch_fp64_best_ms {best:.4f}")
    print(f"torch {torch.__version__}, cuDNN {results['cudnn']}, {props.name}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
