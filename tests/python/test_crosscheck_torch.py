"""scripts/crosscheck_torch.py --rows-only, what `convlab bench` runs for PyTorch's rows beside a grouped
table (harness/bench_torch.c), on machines without CUDA: its refusals (exit 2, one line on stderr, no
JSON written: PyTorch without CUDA, flags that do not fit the inputs), and its rows computed on the CPU
(the hidden --device cpu) against a causal convolution written here in NumPy: groups, dilation, bias,
initial states, SiLU, bf16. NumPy needed; the rows need PyTorch (Debian's python3-torch, CPU-only). By
hand from the repository root:

    /usr/bin/python3 tests/python/test_crosscheck_torch.py -v
"""

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "scripts", "crosscheck_torch.py")

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    torch = None


def load_script():
    spec = importlib.util.spec_from_file_location("crosscheck_torch", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def causal_conv(x, w, b, s, G, D, silu):
    """y[n, o, t] = b[o] + sum_{c in o's group, k} w[o, c, k] * xs[n, c, t + k*D] in float64, xs = s then x
    (zeros without s); SiLU after."""
    x, w = x.astype(np.float64), w.astype(np.float64)
    N, C, L = x.shape
    O, Cg, K = w.shape
    P = (K - 1) * D
    xs = np.concatenate((s.astype(np.float64) if s is not None else np.zeros((N, C, P)), x), axis=2)
    y = np.zeros((N, O, L))
    for o in range(O):
        g = o // (O // G)
        for c in range(Cg):
            for k in range(K):
                y[:, o, :] += w[o, c, k] * xs[:, g * Cg + c, k * D:k * D + L]
    if b is not None:
        y += b.astype(np.float64)[None, :, None]
    return y / (1.0 + np.exp(-y)) if silu else y


class Inputs:
    """x, w (b, s) in a temporary directory as convlab bench --save-inputs writes them."""

    def __init__(self, N=2, C=16, O=16, L=40, K=4, G=16, D=1, bias=True, states=False, bf16=False, seed=0):
        rng = np.random.default_rng(seed)
        self.tmp = tempfile.TemporaryDirectory()
        self.dir, self.G, self.D = self.tmp.name, G, D

        def make(shape):
            a = rng.standard_normal(shape).astype(np.float32)
            return torch.from_numpy(a).bfloat16().float().numpy() if bf16 else a  # exact in bf16

        self.x, self.w = make((N, C, L)), make((O, C // G, K))
        self.b = make((O,)) if bias else None
        self.s = make((N, C, (K - 1) * D)) if states else None
        for name, a in (("x", self.x), ("w", self.w), ("b", self.b), ("s", self.s)):
            if a is not None:
                np.save(os.path.join(self.dir, f"{name}.npy"), a)

    def close(self):
        self.tmp.cleanup()


def run_script(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True)


class Refusals(unittest.TestCase):
    """Exit 2 with one line on stderr, and no JSON: what convlab bench prints as the reason."""

    def setUp(self):
        rng = np.random.default_rng(1)
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        np.save(os.path.join(self.dir, "x.npy"), rng.standard_normal((2, 8, 32)).astype(np.float32))
        np.save(os.path.join(self.dir, "w.npy"), rng.standard_normal((8, 1, 4)).astype(np.float32))
        self.out = os.path.join(self.dir, "rows.json")

    def tearDown(self):
        self.tmp.cleanup()

    def refused(self, *args, says):
        r = run_script("--rows-only", "--inputs", self.dir, "--out", self.out, *args)
        self.assertEqual(r.returncode, 2, r.stderr)
        lines = r.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertIn(says, lines[0])
        self.assertTrue(lines[0].startswith("crosscheck: "), lines[0])
        self.assertEqual(r.stdout, "")
        self.assertFalse(os.path.exists(self.out))
        return lines[0]

    @unittest.skipUnless(torch is not None and not torch.cuda.is_available(), "needs PyTorch without CUDA")
    def test_pytorch_without_cuda_is_refused_in_one_line_naming_it(self):
        line = self.refused("--groups", "8", says=f"PyTorch {torch.__version__}")
        self.assertIn("CUDA", line)

    @unittest.skipUnless(torch is None, "needs a Python without PyTorch")
    def test_python_without_pytorch_is_refused_in_one_line(self):
        self.refused("--groups", "8", says="PyTorch is needed")

    def test_rows_only_needs_the_groups(self):
        self.refused(says="--rows-only needs --groups")

    def test_groups_that_do_not_fit_w_are_refused(self):
        self.refused("--groups", "4", says="do not fit --groups 4")

    def test_states_of_another_dilation_are_refused(self):
        np.save(os.path.join(self.dir, "s.npy"), np.zeros((2, 8, 3), np.float32))
        self.refused("--groups", "8", "--dilation", "2", says="s (2, 8, 3) is not")

    def test_a_bias_of_another_length_is_refused(self):
        np.save(os.path.join(self.dir, "b.npy"), np.zeros((7,), np.float32))
        self.refused("--groups", "8", says="b (7,) is not (8,)")

    def test_float64_inputs_are_refused(self):
        np.save(os.path.join(self.dir, "w.npy"), np.zeros((8, 1, 4)))
        self.refused("--groups", "8", says="inputs must be float32")

    def test_a_missing_directory_is_refused(self):
        self.dir = os.path.join(self.tmp.name, "absent")
        self.refused("--groups", "8", says="No such file")

    def test_rows_only_takes_no_bench_json_and_the_cross_check_still_needs_one(self):
        r = run_script("--rows-only", "--inputs", self.dir, "--groups", "8", "--bench", "b.json")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--rows-only takes no --bench", r.stderr.splitlines()[-1])
        r = run_script("--inputs", self.dir)
        self.assertEqual(r.returncode, 2)
        self.assertIn("--bench is required", r.stderr.splitlines()[-1])


@unittest.skipUnless(torch is not None, "needs PyTorch")
class RowsOnTheCpu(unittest.TestCase):
    """The rows' convolutions (what gets timed) against causal_conv, and the JSON convlab bench reads."""

    @classmethod
    def setUpClass(cls):
        cls.mod = load_script()

    def outputs(self, inp, dtype="f32", silu=False):
        args = argparse.Namespace(groups=inp.G, dilation=inp.D, dtype=dtype,
                                  activation="silu" if silu else "none")
        arrays = [inp.x, inp.w, inp.b, inp.s]
        with torch.no_grad():
            calls, left_out, ref = self.mod.rows_only_calls(torch, F, torch.device("cpu"), args, arrays)
            ys = {name: fn().double().numpy() for name, (label, fn) in calls.items()}
        want = causal_conv(inp.x, inp.w, inp.b, inp.s, inp.G, inp.D, silu)
        np.testing.assert_allclose(ref.numpy(), want, rtol=1e-12, atol=1e-12)
        return ys, left_out, want

    def check(self, ys, want, rel):
        for name, y in ys.items():
            self.assertEqual(y.shape, want.shape, name)
            err = np.linalg.norm(y - want) / np.linalg.norm(want)
            self.assertLess(err, rel, name)

    def test_depthwise_fp32_with_bias_and_both_rows(self):
        inp = Inputs()
        ys, left_out, want = self.outputs(inp)
        self.assertEqual(sorted(ys), ["torch_conv1d_fp32", "torch_cudnn_nhwc_fp32"])
        self.assertEqual(left_out, {})
        self.check(ys, want, 1e-6)
        inp.close()

    def test_grouped_dilated_with_initial_states(self):
        inp = Inputs(C=12, O=8, G=4, D=3, K=3, states=True, seed=2)
        ys, _, want = self.outputs(inp)
        self.check(ys, want, 1e-6)
        inp.close()

    def test_bf16_with_silu_keeps_only_conv1d_and_says_why(self):
        inp = Inputs(states=True, bf16=True, seed=3)
        ys, left_out, want = self.outputs(inp, dtype="bf16", silu=True)
        self.assertEqual(list(ys), ["torch_conv1d_bf16"])
        self.assertIn("SiLU", left_out["torch_cudnn_nhwc_bf16"])
        self.check(ys, want, 1e-2)  # bf16 output: about 2^-9 relative
        inp.close()

    def test_the_json_has_each_row_with_its_time_and_error(self):
        inp = Inputs(states=True, D=2, seed=4)
        out = os.path.join(inp.dir, "rows.json")
        r = run_script("--rows-only", "--inputs", inp.dir, "--groups", "16", "--dilation", "2", "--repeats", "3",
                       "--device", "cpu", "--out", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            doc = json.load(f)
        self.assertEqual(doc["torch"], torch.__version__)
        self.assertEqual(doc["device"], "cpu")
        self.assertEqual(doc["repeats"], 3)
        self.assertEqual(doc["shape"], {"N": 2, "C": 16, "O": 16, "L": 40, "K": 4, "D": 2, "G": 16, "bias": 1,
                                        "states": 1, "dtype": "f32", "activation": "none"})
        self.assertEqual(sorted(doc["rows"]), ["torch_conv1d_fp32", "torch_cudnn_nhwc_fp32"])
        for name, row in doc["rows"].items():
            self.assertGreater(row["ms"], 0, name)
            self.assertLess(row["rel_l2"], 1e-6, name)
            self.assertEqual(row["fail_allclose_fraction"], 0.0, name)
            self.assertIn("after torch.cat((s, x))", row["label"])
        inp.close()


if __name__ == "__main__":
    unittest.main()
