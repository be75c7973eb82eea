"""Reading what `convlab run --out DIR --save-outputs DIR/outputs` wrote, as one run's files.

A run commits its reports by replacing one link, DIR/.report, and its saved outputs by replacing
DIR/outputs/.outputs, together (docs/report-format.md). Reading DIR/report.json and then DIR/report.csv by
name can straddle a commit; resolving the link once and reading every file from the set it names cannot.
A set may still be removed under a reader by the run after next: then the read starts again.
"""

import json
import os

_ATTEMPTS = 5


class SetMismatch(RuntimeError):
    """The saved outputs and the report come from different runs."""


def _committed(directory, kind):
    """The set directory that directory/.<kind> names, or the directory itself (reports of older versions)."""
    link = os.path.join(directory, "." + kind)
    return os.path.realpath(link) if os.path.islink(link) else directory


def _read_set(directory, kind, read):
    for attempt in range(_ATTEMPTS):
        where = _committed(directory, kind)
        try:
            return read(where)
        except FileNotFoundError:
            if attempt == _ATTEMPTS - 1 or where == directory:
                raise
    raise AssertionError("not reached")


def read_reports(out_dir):
    """The reports of one run under out_dir: {"json": dict, "csv": str, "txt": str, "html": str or None,
    "set": the set directory they were read from}."""

    def read(where):
        def text(name):
            with open(os.path.join(where, name), encoding="utf-8") as f:
                return f.read()

        html = os.path.join(where, "report.html")
        return {"json": json.loads(text("report.json")), "csv": text("report.csv"), "txt": text("report.txt"),
                "html": text("report.html") if os.path.exists(html) else None, "set": where}

    return _read_set(out_dir, "report", read)


def read_saved_outputs(outputs_dir, run_id=None):
    """The saved outputs of one run: {"run_id": str, "outputs": {name: ndarray}} (name without ".npy").

    With run_id (report.json's "run_id"), SetMismatch when the outputs come from another run."""
    import numpy as np

    def read(where):
        with open(os.path.join(where, "outputs.json"), encoding="utf-8") as f:
            manifest = json.load(f)
        if run_id is not None and manifest.get("run_id") != run_id:
            raise SetMismatch(f"the outputs in {outputs_dir} come from run {manifest.get('run_id')}, not from run "
                              f"{run_id}: run convlab again with --save-outputs {outputs_dir}")
        arrays = {name[:-4]: np.load(os.path.join(where, name)) for name in manifest["files"]
                  if name.endswith(".npy")}
        return {"run_id": manifest.get("run_id"), "outputs": arrays}

    return _read_set(outputs_dir, "outputs", read)


def read_run(out_dir, outputs_dir=None):
    """A run's reports and, when it saved them, its outputs, checked to be the same run's.

    {"report": dict (report.json), "csv": str, "txt": str, "html": str or None, "outputs": {name: ndarray}}.
    outputs_dir defaults to where report.json says the outputs went (relative to the current directory, as
    convlab was run), else no outputs."""
    for attempt in range(_ATTEMPTS):
        reports = read_reports(out_dir)
        report = reports["json"]
        where = outputs_dir or (report.get("saved_outputs") or {}).get("dir")
        try:
            outputs = read_saved_outputs(where, report.get("run_id"))["outputs"] if where else {}
        except SetMismatch:
            # A run that committed both sets between the two reads: read the pair again.
            if attempt < _ATTEMPTS - 1 and _committed(out_dir, "report") != reports["set"]:
                continue
            raise
        return {"report": report, "csv": reports["csv"], "txt": reports["txt"], "html": reports["html"],
                "outputs": outputs}
    raise AssertionError("not reached")
