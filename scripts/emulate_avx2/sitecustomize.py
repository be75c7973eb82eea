"""Loaded by every Python under scripts/emulate_avx2.sh (its folder is put on PYTHONPATH): makes PyTorch 1.13
take, on this AVX-512 CPU, the bf16 convolution path it takes on a CPU without AVX-512.

PyTorch sends a CPU bf16 convolution (and its bf16 matrix products) to oneDNN when cpuinfo reports AVX-512
BW, VL and DQ, which no variable changes. Under ONEDNN_MAX_CPU_ISA=AVX2 that oneDNN has no bf16
convolution, so the call fails ("could not create a primitive descriptor iterator"); on an AVX2-only CPU
PyTorch takes its own path instead (bf16 products and bf16 running sums, tests/python/test_helper.py). So,
once torch.nn.functional is loaded, its conv1d and conv2d run bf16 tensors on the CPU, and fp32 ones under
a CPU bf16 autocast, with oneDNN off, as PyTorch would there. fp32 convolutions keep oneDNN (capped at AVX2
by the variable, as on that CPU)."""
import importlib.abc
import sys

try:  # what Debian's own sitecustomize does, which this one shadows
    import apport_python_hook
except ImportError:
    pass
else:
    apport_python_hook.install()


def _own_bf16_path(functional):
    import torch

    def wrap(conv):
        def call(input, *args, **kwargs):
            bf16 = input.dtype == torch.bfloat16 or (
                torch.is_autocast_cpu_enabled() and torch.get_autocast_cpu_dtype() == torch.bfloat16)
            if input.device.type == "cpu" and bf16:
                with torch.backends.mkldnn.flags(enabled=False):
                    return conv(input, *args, **kwargs)
            return conv(input, *args, **kwargs)

        call.__doc__, call.__name__ = conv.__doc__, conv.__name__
        return call

    functional.conv1d = wrap(functional.conv1d)
    functional.conv2d = wrap(functional.conv2d)


class _AfterFunctional(importlib.abc.MetaPathFinder):
    """Finds torch.nn.functional with the other finders, then patches it once it has run."""

    def find_spec(self, name, path, target=None):
        if name != "torch.nn.functional":
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        else:
            return None
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            _own_bf16_path(module)

        spec.loader.exec_module = exec_module
        return spec


sys.meta_path.insert(0, _AfterFunctional())
