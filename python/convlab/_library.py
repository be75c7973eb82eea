"""libconvlab through ctypes: the verdict of `convlab explain`, in this process.

The library (include/convlab/convlab.h) derives the problem from the tensors' shapes as convlab explain
does from its files (the same code and one-line messages), reads each tensor's bytes in its own type, and
returns the JSON object that `convlab explain --json` prints. One call costs what the explanation costs:
no process to start and no file to write (measured: README, "From Python").
"""

import ctypes
import json
import os

from . import _safetensors

_STATUS_VALUE_ERRORS = {1, 2, 3, 4}  # invalid argument, invalid shape, overflow, non-finite input: the tensors'
_DTYPES = {"F32": 0, "BF16": 1, "F16": 2}
_TENSORS = {"x": 0, "w": 1, "b": 2, "initial_states": 3, "y": 4}

_lib = None
_lib_path = None


class ConvlabError(RuntimeError):
    """libconvlab (or the convlab program) is missing, or failed for a reason other than the tensors given."""


def library_path():
    """libconvlab.so: $CONVLAB_LIB, or the build beside this package (../../build/lib/libconvlab.so)."""
    env = os.environ.get("CONVLAB_LIB")
    return env or os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "build",
                                                "lib", "libconvlab.so"))


def _load():
    """The library, loaded once per path (ConvlabError naming where it was looked for)."""
    global _lib, _lib_path
    path = library_path()
    if _lib is not None and _lib_path == path:
        return _lib
    if not os.path.isfile(path):
        how = "$CONVLAB_LIB names" if os.environ.get("CONVLAB_LIB") else "libconvlab is looked for at"
        raise ConvlabError(f"{how} {path}, which is not a file (build it from the repository root with "
                           f"`make build`, or set CONVLAB_LIB to the built lib/libconvlab.so)")
    try:
        lib = ctypes.CDLL(path)
    except OSError as e:
        raise ConvlabError(f"{path} cannot be loaded: {e}") from None
    i64, vp, i32 = ctypes.c_int64, ctypes.c_void_p, ctypes.c_int
    p_i64 = ctypes.POINTER(i64)
    lib.convlab_problem_create_from_shapes.argtypes = [ctypes.POINTER(vp), p_i64, p_i64, i32, p_i64, p_i64, p_i64,
                                                       i64, i64, i32, i32]
    lib.convlab_problem_set_dtype.argtypes = [vp, i32, i32]
    lib.convlab_problem_destroy.argtypes = [vp]
    lib.convlab_explain.argtypes = [vp] * 6 + [ctypes.POINTER(vp)]
    lib.convlab_result_json.argtypes = [vp]
    lib.convlab_result_json.restype = ctypes.c_char_p
    lib.convlab_result_destroy.argtypes = [vp]
    lib.convlab_last_error.restype = ctypes.c_char_p
    lib.convlab_status_name.argtypes = [i32]
    lib.convlab_status_name.restype = ctypes.c_char_p
    _lib, _lib_path = lib, path
    return lib


def _fail(lib, status):
    message = lib.convlab_last_error().decode(errors="replace")
    if status in _STATUS_VALUE_ERRORS:
        return ValueError(message)
    return ConvlabError(f"libconvlab: {lib.convlab_status_name(status).decode()}: {message}")


def explain(tensors, dilation, groups, activation, layout):
    """The JSON object (a dict) of convlab explain on tensors (name -> torch tensor or NumPy array, None for
    absent b and initial_states). ValueError for tensors the library refuses (its one line), ConvlabError
    when it is missing or fails otherwise."""
    lib = _load()
    data = {name: _safetensors._as_bytes(name, t) for name, t in tensors.items() if t is not None}
    shape = {name: (ctypes.c_int64 * len(d[1]))(*d[1]) for name, d in data.items()}
    problem, result = ctypes.c_void_p(), ctypes.c_void_p()
    st = lib.convlab_problem_create_from_shapes(
        ctypes.byref(problem), shape["x"], shape["w"], len(data["w"][1]), shape.get("b"), shape.get("initial_states"),
        shape["y"], dilation, 0 if groups == 1 else groups, 1 if activation == "silu" else 0,
        1 if layout == "nlc" else 0)
    if st != 0:
        raise _fail(lib, st)
    try:
        for name, (dtype, _, _) in data.items():
            if (st := lib.convlab_problem_set_dtype(problem, _TENSORS[name], _DTYPES[dtype])) != 0:
                raise _fail(lib, st)
        raw = {name: d[2] for name, d in data.items()}  # bytes: ctypes passes their own memory, read only
        st = lib.convlab_explain(problem, raw["x"], raw["w"], raw.get("b"), raw.get("initial_states"), raw["y"],
                                 ctypes.byref(result))
        if st != 0:
            raise _fail(lib, st)
        return json.loads(lib.convlab_result_json(result))
    finally:
        lib.convlab_result_destroy(result)
        lib.convlab_problem_destroy(problem)
