"""convlab from Python: is a causal conv1d output a bug, or rounding?

    import convlab                      # PYTHONPATH=python, from the repository root
    r = convlab.explain(x, w, y, b, groups=C, activation="silu")
    r["verdict"], r["where"], r["reason"]
    convlab.save_case("case.safetensors", x, w, y, b)   # for `convlab explain --case case.safetensors`

explain() hands x, w, b, the initial states and y (torch tensors or NumPy arrays, each float32, bfloat16
or float16: their types are the problem's) to libconvlab through ctypes, in this process, and returns the
JSON object that `convlab explain --json` prints for them (the library runs the program's code): "verdict"
(fp32-rounding, tf32-inputs, reduced-precision, bug-localized, bug-global, non-finite, inconclusive),
"where" (for reduced-precision: inputs, products, accumulation or output), "reason", "region",
"decision", "evidence", "problem", and "suggestion" where an output called a bug is rounding under one
flag the call left out or got wrong ("--activation silu", "--dilation 2", "--layout nlc"; the verdict
stays the declared problem's). The contract judged is the one low-precision kernels document:
exact products of the given values, a float32 (or better) sum, the activation in float32, one rounding
to y's type.

The operator is PyTorch's causal conv1d: y = act(conv1d(F.pad(x, ((K-1)*D, 0)), w, b, dilation=D,
groups=G)), with the initial states (N, C, (K-1)*D) in place of the zero padding when given. Shapes:
x (N, C, L), w (O, C/G, K) or (C, K) depthwise, b (O,), y (N, O, L); with layout="nlc", x is (N, L, C)
and y (N, L, O).

The tensors come as (x, w, y, b), or by name (y=..., b=...); F.conv1d's order (x, w, b, y) is taken
too, since the ranks tell the two apart (a bias has one dimension, an output three).

save_case(path, x, w, y, b=None, initial_states=None) writes the same tensors, each in its own type, to
one safetensors file that `convlab explain --case path` (and `convlab run --case path`) reads: tensors
named x, w, y, b and initial_states, what safetensors.torch.save_file would write (Debian has no
safetensors package; this needs none). The flags the file cannot hold (--dilation, --activation,
--layout, --groups) go on the command line.

assert_rounding_only() is explain() for a test suite: it returns the same dict when the verdict is
allowed (by default fp32-rounding only: the contract holds) and raises AssertionError with the verdict,
where and reason otherwise.

read_run(DIR) reads what `convlab run --out DIR --save-outputs DIR/outputs` wrote as one run's files:
report.json (a dict), report.csv, report.txt, report.html and the saved outputs (NumPy arrays), each
set read through its commit link, and the outputs' run id checked against the report's (SetMismatch when
they come from different runs). read_reports and read_saved_outputs read one set each.

libconvlab is found beside this package (../../build/lib/libconvlab.so), or where $CONVLAB_LIB says;
convlab_path() finds the program, for the cases save_case writes (../../build/harness/convlab, or $CONVLAB).
"""

import operator
import os

from . import _library, _safetensors
from ._library import ConvlabError
from ._reports import SetMismatch, read_reports, read_run, read_saved_outputs

__all__ = ["explain", "assert_rounding_only", "save_case", "convlab_path", "ConvlabError", "read_run",
           "read_reports", "read_saved_outputs", "SetMismatch"]


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
    _readable(name, tensor)
    if _ndim(tensor) not in ndims:
        want = " or ".join(str(d) for d in ndims)
        raise ValueError(f"{name} has shape {tuple(tensor.shape)}; it needs {want} dimensions")


def _readable(name, value):
    """ValueError for a torch tensor with no values to read (meta device) or none numpy can take (sparse):
    said here, in one line, before anything tries to read it."""
    device = getattr(getattr(value, "device", None), "type", None)
    if getattr(value, "is_meta", False) or device == "meta":
        raise ValueError(f"{name} is on the meta device; it holds no values to check")
    is_torch = type(value).__module__.split(".")[0] == "torch"
    if is_torch and str(getattr(value, "layout", "torch.strided")) != "torch.strided":
        raise ValueError(f"{name} is a {value.layout} tensor; convlab reads dense ones ({name}.to_dense())")


def _what(value):
    """value in a few words on one line: an array's repr can take many."""
    if not (hasattr(value, "shape") and hasattr(value, "dtype")):
        return repr(value)
    if not tuple(value.shape):
        return f"{value!r} of {value.dtype}"
    return f"{type(value).__name__} of {value.dtype} with shape {tuple(value.shape)}"


def _positive_int(name, value):
    """value as a Python int: an int, or an integer scalar of NumPy or PyTorch (np.int64(2), torch.tensor(2),
    a 0-dim integer array), which F.conv1d takes too. ValueError for bools, floats, arrays of several
    elements and values below 1."""
    if hasattr(value, "shape"):
        _readable(name, value)
    dtype = str(getattr(value, "dtype", ""))
    ok = not isinstance(value, bool) and not dtype.endswith("bool") and hasattr(value, "__index__")
    ok = ok and not tuple(getattr(value, "shape", ()))  # a scalar, not a one-element array
    if ok:
        try:
            value = operator.index(value)
        except TypeError:  # a float tensor has __index__ but refuses it
            ok = False
    if not ok or value < 1:
        raise ValueError(f"{name} must be a positive integer (got {_what(value)})")
    return value


def _output_and_bias(y, b, call):
    """(y, b) as the caller meant them: the documented (x, w, y, b), or F.conv1d's (x, w, b, y), told
    apart by rank (an output has 3 dimensions, a bias 1). A bias in y's place with no output after it is
    named, not reported as a y of the wrong shape."""
    if _ndim(b) == 3 and (y is None or _ndim(y) == 1):
        return b, y
    if _ndim(y) == 1 and _ndim(b) != 3:
        raise ValueError(f"the third argument has shape {tuple(y.shape)}, a bias: {call} takes (x, w, y, b), or "
                         f"F.conv1d's (x, w, b, y); pass the output y too, or b=... and y=... by name")
    return y, b


def _check_tensors(x, w, y, b, initial_states):
    _check("x", x, (3,))
    _check("w", w, (2, 3))
    _check("y", y, (3,))
    if b is not None:
        _check("b", b, (1,))
    if initial_states is not None:
        _check("initial_states", initial_states, (3,))


def save_case(path, x, w, y, b=None, initial_states=None):
    """Writes x, w, y, b and the initial states (torch tensors or NumPy arrays of float32, bfloat16 or
    float16, each kept in its own type) to path as the safetensors case `convlab explain --case path`
    reads. The arguments as explain takes them (F.conv1d's (x, w, b, y) too); TypeError or ValueError as
    explain raises them. Written beside path and renamed onto it: path never holds half a case."""
    y, b = _output_and_bias(y, b, "convlab.save_case")
    _check_tensors(x, w, y, b, initial_states)
    path = os.fspath(path)
    partial = os.path.join(os.path.dirname(os.path.abspath(path)), f".{os.path.basename(path)}.{os.getpid()}.part")
    try:
        _safetensors.write(partial, {"x": x, "w": w, "b": b, "initial_states": initial_states, "y": y})
        os.replace(partial, path)
    finally:
        if os.path.exists(partial):
            os.unlink(partial)


def explain(x, w, y, b=None, *, groups=1, dilation=1, activation=None, initial_states=None, layout="ncl"):
    """The verdict on y as convlab explain --json gives it (a dict; see the module's text).

    groups: as F.conv1d's; a (C, 1, K) or (C, K) weight is depthwise whatever it says, a declared G > 1
    must agree with w; groups and dilation may be ints or integer scalars of NumPy or PyTorch.
    activation: None (or "none") or "silu". initial_states: (N, C, (K-1)*D), the history before t = 0.
    (x, w, b, y), F.conv1d's order, is taken as such; y= and b= work by name.
    TypeError or ValueError for tensors that are not float32/bfloat16/float16, hold no values (the meta
    device) or do not fit together (convlab's one-line reason), ConvlabError when libconvlab is missing or
    fails.
    """
    y, b = _output_and_bias(y, b, "convlab.explain")
    _check_tensors(x, w, y, b, initial_states)
    groups = _positive_int("groups", groups)
    dilation = _positive_int("dilation", dilation)
    if activation not in (None, "none", "silu"):
        raise ValueError(f"activation must be None, 'none' or 'silu' (got {activation!r})")
    if layout not in ("ncl", "nlc"):
        raise ValueError(f"layout must be 'ncl' or 'nlc' (got {layout!r})")
    tensors = {"x": x, "w": w, "b": b, "initial_states": initial_states, "y": y}
    return _library.explain(tensors, dilation, groups, "silu" if activation == "silu" else None, layout)


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
        hint = f" (did you mean {_as_keyword(r['suggestion'])}?)" if r.get("suggestion") else ""
        raise AssertionError(f"convlab: {r['verdict']}{where}{hint}: {r['reason']}")
    return r


def _as_keyword(flag):
    """convlab's flag in explain's spelling: "--activation silu" -> "activation='silu'", "--dilation 2" ->
    "dilation=2"."""
    name, _, value = flag.partition(" ")
    return f"{name.lstrip('-')}={value if value.isdigit() else repr(value)}"
