"""The Python helper (python/convlab) against real PyTorch CPU convolutions and planted bugs.

Run by tests/test_python.c with Debian's /usr/bin/python3 (python3-torch), PYTHONPATH=python,
CONVLAB_LIB=the built libconvlab.so and CONVLAB=the built program (for the cases save_case writes); by
hand from the repository root:

    PYTHONPATH=python /usr/bin/python3 -m unittest tests/python/test_helper.py

Each correct output is PyTorch's own (F.conv1d on the causally padded input, or on the states
concatenated before it) and must be explained as rounding; each planted bug must be found where it is.
"""

import importlib.util
import json
import os
import struct
import subprocess
import tempfile
import unittest

import numpy as np
import torch
import torch.nn.functional as F

import convlab

NOT_A_BUG = ("fp32-rounding", "tf32-inputs", "reduced-precision")
REALCORPUS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "realcorpus")


def bf16_sums(xs, w, b, groups):
    """PyTorch 1.13's CPU bf16 convolution where oneDNN's bf16 path is not taken (CPUs without AVX-512 bf16,
    or torch.backends.mkldnn off): from the bias, each product rounded to bf16 and each running sum too,
    input channels outer, taps inner. xs is the padded input (N, C, L + K - 1)."""
    O, cg, K = w.shape
    N, L = xs.shape[0], xs.shape[2] - K + 1
    og = O // groups
    acc = b.float().view(1, O, 1).expand(N, O, L).clone()
    for c in range(cg):
        src = xs[:, torch.arange(O) // og * cg + c, :].float()  # the input channel each output reads
        for k in range(K):
            p = (src[:, :, k:k + L] * w[:, c, k].float().view(1, O, 1)).bfloat16().float()
            acc = (acc + p).bfloat16().float()
    return acc.bfloat16()


def float32_sum_rounded_once(y, xs, w, b, groups):
    """Whether bf16 y is some float32 sum, in any order, rounded once: the exact sum's bf16 rounding, or its
    neighbour where the exact sum lies within float32 accumulation error of the midpoint between the two.
    Exact, not PyTorch's own float32 conv as the reference: that one's order is this CPU's library path."""
    exact = F.conv1d(xs.double(), w.double(), b.double(), groups=groups)
    n = w.shape[1] * w.shape[2] + 1  # the terms of each sum, bias included
    bound = n * 2.0 ** -24 * (F.conv1d(xs.double().abs(), w.double().abs(), b.double().abs(), groups=groups))
    nearest = exact.float().bfloat16().double()  # float64 -> float32 -> bf16 is exact's correct bf16 rounding
    yd = y.double()
    other = yd != nearest
    midpoint = (yd + nearest) / 2
    step = (nearest.abs().clamp(min=2.0 ** -126).log2().floor() - 7).exp2()  # a bf16 ulp at nearest
    near_midpoint = ((exact - midpoint).abs() <= bound) & ((yd - nearest).abs() <= step * 1.0001)
    return bool((~other | near_midpoint).all())


def cpu_path(xs, w, b, groups, mkldnn):
    """(PyTorch's bf16 conv1d on this CPU with oneDNN on or off, the arithmetic it was seen to do): "contract"
    (a float32 sum rounded once), "bf16 sums" (bf16_sums), or None (neither: a new path to emulate)."""
    with torch.backends.mkldnn.flags(enabled=mkldnn):
        y = F.conv1d(xs, w, b, groups=groups)
    if float32_sum_rounded_once(y, xs, w, b, groups):
        return y, "contract"
    if torch.equal(y, bf16_sums(xs, w, b, groups)):
        return y, "bf16 sums"
    return y, None


def causal(x, w, b=None, *, dilation=1, groups=1):
    """PyTorch's causal conv1d: Conv1d(F.pad(x, ((K-1)*D, 0)))."""
    k = w.shape[-1]
    return F.conv1d(F.pad(x, ((k - 1) * dilation, 0)), w, b, dilation=dilation, groups=groups)


def conv_init(*shape, fan_in, generator):
    """nn.Conv1d's default initialisation: U(+-1/sqrt(fan_in))."""
    return (torch.rand(*shape, generator=generator) * 2 - 1) / fan_in ** 0.5


class Mamba:
    """A Mamba-style depthwise problem in bf16: x, w, b and the initial states bf16, SiLU after the bias."""

    def __init__(self, seed, N=2, C=64, L=300, K=4):
        g = torch.Generator().manual_seed(seed)
        self.C, self.K, self.L = C, K, L
        self.x = torch.randn(N, C, L, generator=g).to(torch.bfloat16)
        self.w = conv_init(C, 1, K, fan_in=K, generator=g).to(torch.bfloat16)
        self.b = conv_init(C, fan_in=K, generator=g).to(torch.bfloat16)
        self.s = torch.randn(N, C, K - 1, generator=g).to(torch.bfloat16)
        self.xs = torch.cat([self.s, self.x], dim=2)  # the states by concatenation

    def reference(self, xs=None):
        """The documented contract: exact products, a float32 sum, SiLU in float32, one rounding to bf16."""
        xs = self.xs if xs is None else xs
        return F.silu(F.conv1d(xs.float(), self.w.float(), self.b.float(), groups=self.C)).to(torch.bfloat16)

    def explain(self, y, **kw):
        return convlab.explain(self.x, self.w, y, self.b, groups=self.C, activation="silu", initial_states=self.s,
                               **kw)


class CorrectOutputsAreRounding(unittest.TestCase):
    def test_fp32_dense_conv1d_with_bias_and_dilation_is_fp32_rounding(self):
        g = torch.Generator().manual_seed(1)
        x = torch.randn(2, 16, 300, generator=g)
        w = conv_init(12, 16, 4, fan_in=64, generator=g)
        b = conv_init(12, fan_in=64, generator=g)
        r = convlab.assert_rounding_only(x, w, causal(x, w, b, dilation=2), b, dilation=2)
        self.assertEqual(r["verdict"], "fp32-rounding")
        self.assertEqual((r["problem"]["C"], r["problem"]["O"], r["problem"]["D"]), (16, 12, 2))

    def test_fp32_grouped_conv1d_is_fp32_rounding(self):
        g = torch.Generator().manual_seed(2)
        x = torch.randn(2, 32, 257, generator=g)
        w = conv_init(16, 8, 3, fan_in=24, generator=g)
        r = convlab.explain(x, w, causal(x, w, groups=4), groups=4)
        self.assertEqual(r["verdict"], "fp32-rounding", r["reason"])
        self.assertEqual(r["problem"]["G"], 4)

    def test_fp32_depthwise_conv1d_is_fp32_rounding_with_its_weight_as_c_1_k_or_c_k(self):
        g = torch.Generator().manual_seed(3)
        x = torch.randn(3, 48, 200, generator=g)
        w = conv_init(48, 1, 4, fan_in=4, generator=g)
        y = causal(x, w, groups=48)
        for weight in (w, w.squeeze(1)):
            r = convlab.explain(x, weight, y, groups=48)
            self.assertEqual(r["verdict"], "fp32-rounding", r["reason"])
            self.assertEqual(r["problem"]["G"], 48)

    def test_numpy_arrays_are_explained_like_tensors(self):
        g = torch.Generator().manual_seed(4)
        x = torch.randn(1, 8, 128, generator=g)
        w = conv_init(8, 8, 4, fan_in=32, generator=g)
        r = convlab.explain(x.numpy(), w.numpy(), causal(x, w).numpy())
        self.assertEqual(r["verdict"], "fp32-rounding", r["reason"])

    def test_groups_and_dilation_as_integer_scalars_of_numpy_and_torch_are_taken_as_ints(self):
        g = torch.Generator().manual_seed(5)
        x = torch.randn(1, 8, 64, generator=g)
        w = conv_init(8, 4, 3, fan_in=12, generator=g)
        y = causal(x, w, dilation=2, groups=2)
        for groups, dilation in ((np.int64(2), np.int32(2)), (torch.tensor(2), torch.tensor(2, dtype=torch.int32)),
                                 (np.array(2), 2)):
            r = convlab.explain(x, w, y, groups=groups, dilation=dilation)
            self.assertEqual(r["verdict"], "fp32-rounding", r["reason"])
            self.assertEqual((r["problem"]["G"], r["problem"]["D"]), (2, 2))

    def test_bf16_depthwise_with_silu_and_states_by_concatenation_meets_the_contract(self):
        m = Mamba(5)
        r = convlab.assert_rounding_only(m.x, m.w, m.reference(), m.b, groups=m.C, activation="silu",
                                         initial_states=m.s)
        self.assertEqual(r["problem"]["dtypes"], {"x": "bf16", "w": "bf16", "b": "bf16", "initial_states": "bf16",
                                                  "y": "bf16"})
        self.assertGreater(r["decision"]["exact_fraction"], 0.97, "nearly every bf16 output correctly rounded")

    def test_channel_last_tensors_give_the_same_verdict(self):
        m = Mamba(6)
        r = convlab.explain(m.x.transpose(1, 2).contiguous(), m.w, m.reference().transpose(1, 2).contiguous(), m.b,
                            groups=m.C, activation="silu", initial_states=m.s, layout="nlc")
        self.assertEqual(r["verdict"], "fp32-rounding", r["reason"])
        self.assertEqual(r["problem"]["layout"], "nlc")

    def test_pytorchs_native_bf16_conv1d_then_silu_is_reduced_precision_where_its_cpu_path_says(self):
        # conv1d in bf16 stores its result before F.silu (in bf16 here) rounds again: more rounding than
        # the contract, at the output, no bug. On integer inputs the sums are exact, so the SiLU's own
        # bf16 error is all there is (it was called a certain bug before the stored-sum model). Which
        # arithmetic this CPU's PyTorch does is decided here, by emulation, on both of its paths: oneDNN's
        # (the contract's sums, where the CPU has AVX-512 bf16) and the one without (bf16 running sums).
        m = Mamba(7)
        for name, xs, w, b in (("normal", m.xs, m.w, m.b), ("integer", *self.integer_problem(m))):
            for mkldnn in (True, False):
                y, path = cpu_path(xs, w, b, m.C, mkldnn)
                self.assertIsNotNone(path, f"{name}, oneDNN {mkldnn}: PyTorch's bf16 conv1d on this CPU is "
                                           "neither the contract's sum nor bf16 running sums")
                with torch.backends.mkldnn.flags(enabled=mkldnn):
                    out = F.silu(y)
                r = convlab.explain(xs[:, :, m.K - 1:], w, out, b, groups=m.C, activation="silu",
                                    initial_states=xs[:, :, :m.K - 1])
                want = "output" if path == "contract" else "accumulation"
                self.assertEqual((r["verdict"], r["where"]), ("reduced-precision", want),
                                 f"{name}, oneDNN {mkldnn} ({path}): {r['reason']}")

    @staticmethod
    def integer_problem(m):
        g = torch.Generator().manual_seed(11)
        def ints(*shape):
            return torch.randint(-20, 21, shape, generator=g).to(torch.bfloat16)
        return ints(*m.xs.shape), ints(*m.w.shape), ints(*m.b.shape)


class ThisMachinesPyTorchIsExplained(unittest.TestCase):
    """PyTorch 1.13's CPU bf16 convolutions, on both of its paths, with a bias, dense and depthwise: the
    verdict follows from the arithmetic the path was seen to do (no test may assume one CPU's path)."""

    def test_bf16_conv1d_with_bias_on_each_cpu_path_is_explained_by_its_arithmetic(self):
        g = torch.Generator().manual_seed(21)
        for groups, C, O, K in ((1, 16, 12, 4), (64, 64, 64, 4)):
            x = torch.randn(2, C, 512, generator=g).bfloat16()
            w = conv_init(O, C // groups, K, fan_in=C // groups * K, generator=g).bfloat16()
            b = conv_init(O, fan_in=C // groups * K, generator=g).bfloat16()
            xs = F.pad(x, (K - 1, 0))
            for mkldnn in (True, False):
                y, path = cpu_path(xs, w, b, groups, mkldnn)
                self.assertIsNotNone(path, f"groups {groups}, oneDNN {mkldnn}: PyTorch's bf16 conv1d on this "
                                           "CPU is neither the contract's sum nor bf16 running sums")
                r = convlab.explain(x, w, y, b, groups=groups)
                want = ("fp32-rounding", "") if path == "contract" else ("reduced-precision", "accumulation")
                self.assertEqual((r["verdict"], r["where"] or ""), want,
                                 f"groups {groups}, oneDNN {mkldnn} ({path}): {r['reason']}")


class RealLibraryOutputsAreRounding(unittest.TestCase):
    """The ten outputs PyTorch 2.11 and cuDNN 9.19 made on an H200 (tests/data/realcorpus, inputs from seeds):
    TF32, FFT, autocast with a bias, bf16/fp16 tensors with a bias, NHWC depthwise and grouped. Each is
    correct; each is named by the stage that lost precision."""

    EXPECTED = {  # mode: (verdict, where)
        "tf32": ("tf32-inputs", ""), "fp32_bench": ("fp32-rounding", ""),
        "ac_bf16": ("reduced-precision", "inputs"), "ac_fp16": ("reduced-precision", "inputs"),
        "bf16": ("reduced-precision", "output"), "fp16": ("reduced-precision", "output"),
        "bf16_cl": ("reduced-precision", "output"),
    }

    def test_every_case_is_rounding_at_its_stage(self):
        spec = importlib.util.spec_from_file_location("realcorpus_load", os.path.join(REALCORPUS, "load.py"))
        load = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(load)
        names = sorted(f[:-5] for f in os.listdir(REALCORPUS) if f.endswith(".json"))
        self.assertEqual(len(names), 10)
        for name in names:
            meta, x, w, b, y = load.load(name)
            dt = {None: torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[meta.get("declared")]
            t = lambda a: None if a is None else torch.from_numpy(a.copy()).to(dt)
            r = convlab.explain(t(x), t(w), t(y), t(b), groups=meta["G"], dilation=meta["D"])
            mode = meta.get("mode", "tf32")
            self.assertEqual((r["verdict"], r["where"] or ""), self.EXPECTED[mode], f"{name} ({mode}): {r['reason']}")


class BugsPlantedOnRealOutputsAreLocated(unittest.TestCase):
    """A channel whose bias was never added, planted on the real library outputs of tests/data/realcorpus
    (PyTorch's bf16/fp16 tensors with a bias, autocast fp16, NHWC depthwise): that channel, not
    everywhere (issue 21: the planted channel held every model's tail, and the wrong model was kept)."""

    CASES = ("bf16_dense_bias", "fp16_dense_bias", "autocast_fp16_bias", "dw_bf16_cl_bias")

    def test_a_channel_without_its_bias_is_that_channel(self):
        spec = importlib.util.spec_from_file_location("realcorpus_load", os.path.join(REALCORPUS, "load.py"))
        load = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(load)
        for name in self.CASES:
            meta, x, w, b, y = load.load(name)
            low = meta.get("declared") or ("bf16" if "bf16" in name else "fp16")
            y = y.copy()
            y[:, 3, :] -= b[3]
            y = load._round_bf16(y) if low == "bf16" else y.astype("float16").astype("float32")
            dt = {None: torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[meta.get("declared")]
            t = lambda a: None if a is None else torch.from_numpy(a.copy()).to(dt)
            r = convlab.explain(t(x), t(w), t(y), t(b), groups=meta["G"], dilation=meta["D"])
            self.assertEqual((r["verdict"], r["region"]["kind"]), ("bug-localized", "channel 3"),
                             f"{name}: {r['reason']}")


class PlantedBugsAreFound(unittest.TestCase):
    def test_products_rounded_to_bf16_before_the_sum_are_reduced_precision_where_products(self):
        m = Mamba(8)
        acc = m.b.float().view(1, -1, 1)
        for k in range(m.K):  # vLLM issue 52887: each bf16 product rounded to bf16, then an fp32 sum
            acc = acc + (m.xs[:, :, k:k + m.L] * m.w[:, 0, k].view(1, -1, 1)).float()
        y = F.silu(acc).to(torch.bfloat16)
        ref = m.reference()
        self.assertTrue(torch.allclose(y.float(), ref.float(), rtol=1e-2, atol=5e-2), "allclose passes it")
        r = m.explain(y)
        self.assertEqual((r["verdict"], r["where"]), ("reduced-precision", "products"), r["reason"])
        with self.assertRaises(AssertionError) as caught:
            convlab.assert_rounding_only(m.x, m.w, y, m.b, groups=m.C, activation="silu", initial_states=m.s)
        self.assertIn("reduced-precision (where: products)", str(caught.exception))

    def test_an_offset_on_one_channel_is_bug_localized_there(self):
        m = Mamba(9)
        y = m.reference().float()
        y[:, 5, :] += 0.02
        r = m.explain(y.to(torch.bfloat16))
        self.assertEqual(r["verdict"], "bug-localized", r["reason"])
        self.assertEqual((r["region"]["class"], r["region"]["o"]), ("channels", "5"))

    def test_initial_states_ignored_are_bug_localized_at_the_left_edge(self):
        m = Mamba(10)
        y = m.reference(torch.cat([torch.zeros_like(m.s), m.x], dim=2))
        r = m.explain(y)
        self.assertEqual(r["verdict"], "bug-localized", r["reason"])
        self.assertEqual(r["region"]["class"], "left-edge")


def fft_conv():
    """scripts/fft_null_check.py's convolution through torch.fft (complex64): an FFT algorithm's arithmetic."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "fft_null_check.py")
    spec = importlib.util.spec_from_file_location("fft_null_check", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.fft_conv


class FftConvolutionsAreRounding(unittest.TestCase):
    """Correct convolutions computed by FFT in float32 (what cuDNN's FFT algorithms do under
    cudnn.benchmark): with few terms per output their errors, of one size along a row, pass the direct sum's
    noise and worst case on the outputs whose terms are small. Explained as a transform's arithmetic, never
    a bug; and bugs planted on such an output are still found."""

    CASES = ((4, 1, 16, 4096, 4, 1), (2, 128, 128, 1024, 4, 128), (4, 4, 32, 2048, 3, 1))  # N, C, O, L, K, G

    def test_fft_convolutions_with_one_four_or_depthwise_channels_are_rounding(self):
        conv = fft_conv()
        torch.manual_seed(3)
        for N, C, O, L, K, G in self.CASES:
            x, w = torch.randn(N, C, L), torch.randn(O, C // G, K)
            r = convlab.explain(x, w, conv(x, w, None, G), groups=G)
            self.assertIn(r["verdict"], NOT_A_BUG, f"C={C} G={G}: {r['reason']}")

    def test_stale_values_and_a_channel_offset_on_an_fft_output_are_bugs(self):
        conv = fft_conv()
        torch.manual_seed(4)
        N, C, O, L, K, G = self.CASES[0]
        x, w = torch.randn(N, C, L), torch.randn(O, C // G, K)
        y = conv(x, w, None, G)
        exact = F.conv1d(F.pad(x.double(), (K - 1, 0)), w.double(), groups=G)
        rms = (y.double() - exact).pow(2).mean().sqrt().item()
        stale = y.clone()
        g = torch.Generator().manual_seed(5)
        idx = torch.randperm(y.numel(), generator=g)[: y.numel() // 1000]
        stale.view(-1)[idx] += (torch.where(torch.rand(len(idx), generator=g) < 0.5, -10.0, 10.0) * rms).float()
        r = convlab.explain(x, w, stale, groups=G)
        self.assertTrue(r["verdict"].startswith("bug"), f"stale values: {r['reason']}")
        channel = y.clone()
        channel[:, 3, :] += 10.0 * rms
        r = convlab.explain(x, w, channel, groups=G)
        self.assertTrue(r["verdict"].startswith("bug"), f"a channel offset: {r['reason']}")


class CudnnFftTilingOutputsAreRounding(unittest.TestCase):
    """cuDNN's FFT_TILING in float32 on an H100 (tests/data/cudnn_fft): with C*K = 16 and 4 its errors are
    8 to 15 times the direct sum's and pass its worst case everywhere. Rounding (a transform's arithmetic),
    never a bug; bugs planted on them at 10 times their own rms error are still found, a channel's offset
    in that channel (before, the FFT's own errors made it "everywhere")."""

    DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "cudnn_fft")

    def load(self, name):
        return [np.load(os.path.join(self.DATA, f"{name}.{t}.npy")) for t in "xwy"]

    def test_cudnn_fft_tiling_outputs_are_rounding(self):
        for name in ("c4", "c1"):
            x, w, y = self.load(name)
            r = convlab.explain(x, w, y)
            self.assertEqual(r["verdict"], "fp32-rounding", f"{name}: {r['reason']}")
            self.assertIn("transform", r["reason"], name)

    def test_stale_values_and_a_channel_offset_on_them_are_bugs(self):
        for name in ("c4", "c1"):
            x, w, y = self.load(name)
            exact = F.conv1d(F.pad(torch.from_numpy(x).double(), (w.shape[2] - 1, 0)), torch.from_numpy(w).double()).numpy()
            rms = float(np.sqrt(((y - exact) ** 2).mean()))
            g = np.random.default_rng(6)
            stale = y.copy().reshape(-1)
            idx = g.choice(stale.size, stale.size // 1000, replace=False)
            stale[idx] += np.where(g.random(idx.size) < 0.5, -10.0, 10.0).astype(np.float32) * np.float32(rms)
            r = convlab.explain(x, w, stale.reshape(y.shape))
            self.assertTrue(r["verdict"].startswith("bug"), f"{name}, stale values: {r['reason']}")
            channel = y.copy()
            channel[:, 3, :] += np.float32(10.0 * rms)
            r = convlab.explain(x, w, channel)
            self.assertTrue(r["verdict"].startswith("bug"), f"{name}, a channel offset: {r['reason']}")
            self.assertEqual((r["region"]["class"], r["region"]["o"]), ("channels", "3"), f"{name}: {r['reason']}")


class ClearErrors(unittest.TestCase):
    def setUp(self):
        g = torch.Generator().manual_seed(11)
        self.x = torch.randn(1, 4, 32, generator=g)
        self.w = conv_init(3, 4, 2, fan_in=8, generator=g)
        self.y = causal(self.x, self.w)

    def test_a_missing_libconvlab_is_named(self):
        old = os.environ.get("CONVLAB_LIB")
        os.environ["CONVLAB_LIB"] = "/nonexistent/libconvlab.so"
        try:
            with self.assertRaises(convlab.ConvlabError) as caught:
                convlab.explain(self.x, self.w, self.y)
            self.assertIn("/nonexistent/libconvlab.so", str(caught.exception))
        finally:
            if old is None:
                del os.environ["CONVLAB_LIB"]
            else:
                os.environ["CONVLAB_LIB"] = old

    def test_a_float64_tensor_is_refused_by_name(self):
        with self.assertRaises(TypeError) as caught:
            convlab.explain(self.x.double(), self.w, self.y)
        self.assertIn("x is a torch tensor of torch.float64", str(caught.exception))

    def test_tensors_that_do_not_fit_get_convlabs_one_line(self):
        with self.assertRaises(ValueError) as caught:
            convlab.explain(self.x, conv_init(3, 3, 2, fan_in=6, generator=torch.Generator()), self.y)
        self.assertIn("w has C=3 but x has C=4", str(caught.exception))
        self.assertNotIn("\n", str(caught.exception))

    def test_a_tensor_of_the_wrong_rank_is_refused_before_convlab_runs(self):
        with self.assertRaises(ValueError) as caught:
            convlab.explain(self.x[0], self.w, self.y)
        self.assertIn("x has shape (4, 32)", str(caught.exception))

    def test_a_declared_groups_that_disagrees_with_w_is_refused(self):
        with self.assertRaises(ValueError) as caught:
            convlab.explain(self.x, self.w, self.y, groups=2)
        self.assertIn("--groups 2", str(caught.exception))

    def test_groups_or_dilation_that_is_no_integer_scalar_is_refused_in_one_line(self):
        for value, got in ((torch.tensor(1.0), "got tensor(1.) of torch.float32"), (np.float64(1), "got 1.0"),
                           (torch.tensor([[1, 2], [3, 4]]), "got Tensor of torch.int64 with shape (2, 2)"),
                           (np.array([1]), "got ndarray of int64 with shape (1,)"), (True, "got True"),
                           (torch.tensor(True), "got tensor(True) of torch.bool"), (np.int64(0), "got 0")):
            for name in ("groups", "dilation"):
                with self.assertRaises(ValueError) as caught:
                    convlab.explain(self.x, self.w, self.y, **{name: value})
                self.assertIn(f"{name} must be a positive integer ({got}", str(caught.exception))
                self.assertNotIn("\n", str(caught.exception))

    def test_a_tensor_on_the_meta_device_is_refused_before_anything_reads_it(self):
        for name in ("x", "w", "y", "b"):
            args = {"x": self.x, "w": self.w, "y": self.y, "b": torch.zeros(3)}
            args[name] = args[name].to("meta")
            with self.assertRaises(ValueError) as caught:
                convlab.explain(**args)
            self.assertEqual(str(caught.exception), f"{name} is on the meta device; it holds no values to check")
        with self.assertRaises(ValueError) as caught:
            convlab.explain(self.x, self.w, self.y, dilation=torch.tensor(1, device="meta"))
        self.assertEqual(str(caught.exception), "dilation is on the meta device; it holds no values to check")

    def test_a_sparse_tensor_is_refused_by_name(self):
        with self.assertRaises(ValueError) as caught:
            convlab.explain(self.x, self.w.to_sparse(), self.y)
        self.assertIn("w is a torch.sparse_coo tensor; convlab reads dense ones", str(caught.exception))

    def test_a_nan_input_is_refused(self):
        x = self.x.clone()
        x[0, 1, 2] = float("nan")
        with self.assertRaises(ValueError) as caught:
            convlab.explain(x, self.w, self.y)
        self.assertIn("inputs must be finite", str(caught.exception))


# --- issue 23: the arguments' order, saving a case, a forgotten flag ----------------------------------------------

def exact_causal(xs, w, b=None, *, dilation=1, groups=1, silu=False):
    """The causal conv1d in float64 from the given values (exact products, a float64 sum: no CPU library's
    order), then SiLU in float64: what every machine computes alike. xs: (N, C, (K-1)*D + L), the history
    (zeros or the initial states) before x; w (O, C/G, K). Rounded by the caller to y's type."""
    xs, w = np.asarray(xs, np.float64), np.asarray(w, np.float64)
    O, cg, K = w.shape
    L = xs.shape[2] - (K - 1) * dilation
    first = np.arange(O) // (O // groups) * cg  # the first input channel of each output's group
    y = np.zeros((xs.shape[0], O, L)) + (0.0 if b is None else np.asarray(b, np.float64).reshape(1, O, 1))
    for c in range(cg):
        src = xs[:, first + c, :]
        for k in range(K):
            y += w[:, c, k].reshape(1, O, 1) * src[:, :, k * dilation:k * dilation + L]
    return y / (1.0 + np.exp(-y)) if silu else y


def small_problem(seed, N=2, C=8, O=6, L=96, K=3):
    """fp32 x, w, b (NumPy's generator: the same values on every machine) and y, the exact causal conv
    rounded once to float32."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((N, C, L)).astype(np.float32)
    w = (rng.uniform(-1, 1, (O, C, K)) / np.sqrt(C * K)).astype(np.float32)
    b = rng.uniform(-0.1, 0.1, O).astype(np.float32)
    y = exact_causal(np.pad(x, ((0, 0), (0, 0), (K - 1, 0))), w, b).astype(np.float32)
    return x, w, b, y


def bf16_mamba(seed, N=2, C=16, L=120, K=4):
    """A bf16 depthwise problem with states and SiLU (torch tensors) and y by the contract, exactly: the
    exact sum, SiLU, rounded to float32 then bf16."""
    rng = np.random.default_rng(seed)
    bf16 = lambda a: torch.from_numpy(np.asarray(a, np.float32)).to(torch.bfloat16)
    x, s = bf16(rng.standard_normal((N, C, L))), bf16(rng.standard_normal((N, C, K - 1)))
    w, b = bf16(rng.uniform(-0.5, 0.5, (C, 1, K))), bf16(rng.uniform(-0.5, 0.5, C))
    xs = torch.cat([s, x], dim=2).float().numpy()
    y = bf16(exact_causal(xs, w.float().numpy(), b.float().numpy(), groups=C, silu=True))
    return x, w, b, s, y


class ArgumentOrder(unittest.TestCase):
    """convlab.explain takes (x, w, y, b); F.conv1d's users write (x, w, b, y). Both work, by position or by
    name; a bias third with no output is named as what it is."""

    def setUp(self):
        self.x, self.w, self.b, self.y = small_problem(31)

    def test_the_documented_order_and_keywords_give_the_same_verdict(self):
        x, w, b, y = self.x, self.w, self.b, self.y
        for r in (convlab.explain(x, w, y, b), convlab.explain(x, w, y=y, b=b), convlab.explain(x, w, b=b, y=y)):
            self.assertEqual(r["verdict"], "fp32-rounding", r["reason"])
            self.assertTrue(r["problem"]["bias"], "the bias is the bias")

    def test_f_conv1d_order_x_w_b_y_is_taken_as_such(self):
        r = convlab.explain(self.x, self.w, self.b, self.y)
        self.assertEqual(r["verdict"], "fp32-rounding", r["reason"])
        self.assertTrue(r["problem"]["bias"])
        self.assertEqual(convlab.explain(self.x, self.w, None, self.y)["problem"]["bias"], False)
        convlab.assert_rounding_only(self.x, self.w, self.b, self.y)
        planted = self.y.copy()
        planted[:, 2, :] += 0.05  # the order is not guessed from the verdict: a bug stays a bug
        self.assertEqual(convlab.explain(self.x, self.w, self.b, planted)["verdict"], "bug-localized")

    def test_a_bias_third_with_no_output_is_named_in_one_line(self):
        with self.assertRaises(ValueError) as caught:
            convlab.explain(self.x, self.w, self.b)
        message = str(caught.exception)
        self.assertIn("the third argument has shape (6,), a bias", message)
        self.assertIn("(x, w, y, b)", message)
        self.assertIn("y=", message)
        self.assertNotIn("\n", message)


class SaveCase(unittest.TestCase):
    """convlab.save_case writes the case `convlab explain --case` reads, each tensor in its own type."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="convlab-test-")
        self.path = os.path.join(self.tmp.name, "case.safetensors")

    def tearDown(self):
        self.tmp.cleanup()

    def command_line(self, *flags):
        done = subprocess.run([convlab.convlab_path(), "explain", "--case", self.path, "--json", *flags],
                              capture_output=True, text=True)
        self.assertEqual(done.returncode, 0, done.stderr)
        return json.loads(done.stdout)

    def test_a_saved_case_gets_the_helpers_verdict_from_the_command_line(self):
        x, w, b, s, y = bf16_mamba(41)
        planted = y.float()
        planted[:, 7, :] += 0.03
        for out, want in ((y, "fp32-rounding"), (planted.to(torch.bfloat16), "bug-localized")):
            convlab.save_case(self.path, x, w, out, b, initial_states=s)
            cli = self.command_line("--activation", "silu")
            helper = convlab.explain(x, w, out, b, groups=16, activation="silu", initial_states=s)
            self.assertEqual((cli["verdict"], helper["verdict"]), (want, want), cli["reason"])
            self.assertEqual(cli["region"], helper["region"])
            self.assertEqual(cli["problem"], helper["problem"])

    def test_each_tensor_keeps_its_type_in_the_file(self):
        x, w, b, y = small_problem(42)
        xb = torch.from_numpy(x).to(torch.bfloat16)
        convlab.save_case(self.path, xb, w, y.astype(np.float16), b=torch.from_numpy(b).to(torch.float16))
        with open(self.path, "rb") as f:
            size = struct.unpack("<Q", f.read(8))[0]
            header = json.loads(f.read(size))
        types = {name: t["dtype"] for name, t in header.items() if name != "__metadata__"}
        self.assertEqual(types, {"x": "BF16", "w": "F32", "b": "F16", "y": "F16"})
        self.assertEqual(header["x"]["shape"], list(x.shape))
        r = self.command_line()
        dtypes = r["problem"]["dtypes"]
        self.assertEqual({k: dtypes[k] for k in ("x", "w", "b", "y")},
                         {"x": "bf16", "w": "f32", "b": "f16", "y": "f16"})

    def test_f_conv1d_order_and_refused_types_as_explain_has_them(self):
        x, w, b, y = small_problem(43)
        convlab.save_case(self.path, x, w, b, y)  # (x, w, b, y): the bias is b
        r = self.command_line()
        self.assertTrue(r["problem"]["bias"])
        self.assertEqual(r["verdict"], "fp32-rounding", r["reason"])
        with self.assertRaises(TypeError) as caught:
            convlab.save_case(self.path, x.astype(np.float64), w, y)
        self.assertIn("x is a NumPy array of float64", str(caught.exception))


class ForgottenFlags(unittest.TestCase):
    """An output that fits a flag the call left out: the verdict stays, the dict says which flag, and
    assert_rounding_only's message asks for it in Python's spelling."""

    def test_a_silu_output_explained_without_activation_names_it(self):
        x, w, b, s, y = bf16_mamba(51)
        r = convlab.explain(x, w, y, b, groups=16, initial_states=s)
        self.assertTrue(r["verdict"].startswith("bug-"), r["verdict"])
        self.assertEqual(r.get("suggestion"), "--activation silu")
        with self.assertRaises(AssertionError) as caught:
            convlab.assert_rounding_only(x, w, y, b, groups=16, initial_states=s)
        self.assertIn("did you mean activation='silu'?", str(caught.exception))
        r = convlab.explain(x, w, y, b, groups=16, activation="silu", initial_states=s)
        self.assertEqual(r["verdict"], "fp32-rounding", r["reason"])
        self.assertNotIn("suggestion", r)


if __name__ == "__main__":
    unittest.main()
