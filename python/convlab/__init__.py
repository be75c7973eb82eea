"""convlab from Python: is a causal conv1d output a bug, or rounding?

    import convlab                      # PYTHONPATH=python, from the repository root
    r = convlab.explain(x, w, y, b, groups=C, activation="silu")
    r["verdict"], r["where"], r["reason"]

explain() writes x, w, b, the initial states and y (torch tensors or NumPy arrays, each float32, bfloat16
or float16: their types are the problem's) to one safetensors file in a temporary directory, runs
`convlab explain --case FILE --json` on it, and returns the JSON object it prints: "verdict"
(fp32-rounding, tf32-inputs, reduced-precision, bug-localized, bug-global, non-finite, inconclusive),
"where" (for reduced-precision: inputs, products, accumulation or output), "reason", "region",
"decision", "evidence", "problem". The contract judged is the one low-precision kernels document:
exact products of the given values, a float32 (or better) sum, the activation in float32, one rounding
to y's type.

The operator is PyTorch's causal conv1d: y = act(conv1d(F.pad(x, ((K-1)*D, 0)), w, b, dilation=D,
groups=G)), with the initial states (N, C, (K-1)*D) in place of the zero padding when given. Shapes:
x (N, C, L), w (O, C/G, K) or (C, K) depthwise, b (O,), y (N, O, L); with layout="nlc", x is (N, L, C)
and y (N, L, O).

assert_rounding_only() is explain() for a test suite: it returns the same dict when the verdict is
allowed (by default fp32-rounding only: the contract holds) and raises AssertionError with the verdict,
where and reason otherwise.

convlab itself is found beside this package (../../build/harness/convlab), or where $CONVLAB says.
"""

import json
import os
import subprocess
import tempfile

from . import _safetensors

__all__ = ["explain", "assert_rounding_only", "convlab_path", "ConvlabError"]


class ConvlabError(RuntimeError):
    """convlab is missing, or failed for a reason other than the tensors given."""


def convlab_path():
    """The convlab program: $CONVLAB, or the build beside this package. ConvlabError when it is absent."""
    env = os.environ.get("CONVLAB")
    path = env or os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                                "build", "harness", "convlab"))
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        how = "$CONVLAB names" if env else "convlab is looked for at"
        raise ConvlabError(f"{how} {path}, which is not an executable program (build it from the repository "
                           f"root with `make build`, or set CONVLAB to the built harness/convlab)")
    return path


def _ndim(tensor):
    return len(tuple(tensor.shape)) if hasattr(tensor, "shape") else None


def _check(name, tensor, ndims):
    if not hasattr(tensor, "shape") or not hasattr(tensor, "dtype"):
        raise TypeError(f"{name} is a {type(tensor).__name__}; pass a torch tensor or a NumPy array")
    if _ndim(tensor) not in ndims:
        want = " or ".join(str(d) for d in ndims)
        raise ValueError(f"{name} has shape {tuple(tensor.shape)}; it needs {want} dimensions")


def _positive_int(name, value):
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive integer (got {value!r})")


def explain(x, w, y, b=None, *, groups=1, dilation=1, activation=None, initial_states=None, layout="ncl"):
    """The verdict on y as convlab explain --json gives it (a dict; see the module's text).

    groups: as F.conv1d's; a (C, 1, K) or (C, K) weight is depthwise whatever it says, a declared G > 1
    must agree with w. activation: None (or "none") or "silu". initial_states: (N, C, (K-1)*D), the
    history before t = 0. TypeError or ValueError for tensors that are not float32/bfloat16/float16 or do
    not fit together (convlab's one-line reason), ConvlabError when convlab is missing or fails.
    """
    _check("x", x, (3,))
    _check("w", w, (2, 3))
    _check("y", y, (3,))
    if b is not None:
        _check("b", b, (1,))
    if initial_states is not None:
        _check("initial_states", initial_states, (3,))
    _positive_int("groups", groups)
    _positive_int("dilation", dilation)
    if activation not in (None, "none", "silu"):
        raise ValueError(f"activation must be None, 'none' or 'silu' (got {activation!r})")
    if layout not in ("ncl", "nlc"):
        raise ValueError(f"layout must be 'ncl' or 'nlc' (got {layout!r})")
    program = convlab_path()
    args = ["--dilation", str(dilation)]
    if groups != 1:
        args += ["--groups", str(groups)]
    if activation == "silu":
        args += ["--activation", "silu"]
    if layout != "ncl":
        args += ["--layout", layout]
    with tempfile.TemporaryDirectory(prefix="convlab-") as tmp:
        case = os.path.join(tmp, "case.safetensors")
        _safetensors.write(case, {"x": x, "w": w, "b": b, "initial_states": initial_states, "y": y})
        done = subprocess.run([program, "explain", "--case", case, "--json"] + args, capture_output=True,
                              text=True)
    message = done.stderr.strip().replace(case, "the tensors")
    if done.returncode == 2 or (done.returncode == 1 and case in done.stderr):
        raise ValueError(message)  # an argument convlab refuses, or tensors it cannot use (shapes, NaN)
    if done.returncode != 0:
        raise ConvlabError(message or f"convlab exited with status {done.returncode}")
    try:
        return json.loads(done.stdout)
    except json.JSONDecodeError as e:
        raise ConvlabError(f"convlab printed no JSON object ({e}): {done.stdout[:200]!r}") from None


def assert_rounding_only(x, w, y, b=None, *, groups=1, dilation=1, activation=None, initial_states=None,
                         layout="ncl", allow=("fp32-rounding",)):
    """explain(...), raising AssertionError unless the verdict is one of allow.

    The default allows only fp32-rounding: the contract (exact products, a float32 sum, one rounding to y's
    type) holds. Add "tf32-inputs" for a kernel meant to use TF32, "reduced-precision" to accept any
    precision loss that is not a bug. Use it where a test would call torch.allclose.
    """
    r = explain(x, w, y, b, groups=groups, dilation=dilation, activation=activation,
                initial_states=initial_states, layout=layout)
    if r["verdict"] not in allow:
        where = f" (where: {r['where']})" if r.get("where") else ""
        raise AssertionError(f"convlab: {r['verdict']}{where}: {r['reason']}")
    return r
