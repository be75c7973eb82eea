"""convlab.read_run / read_reports / read_saved_outputs against the built convlab (CONVLAB), with
PYTHONPATH=python; needs only NumPy. By hand from the repository root:

    CONVLAB=build/harness/convlab PYTHONPATH=python /usr/bin/python3 tests/python/test_reports.py -v
"""

import json
import os
import subprocess
import tempfile
import unittest

import convlab


def run(*args):
    subprocess.run([os.environ["CONVLAB"], "run", "--batch", "1", "--cin", "8", "--cout", "4", "--length", "64",
                    "--impl", "naive", *args], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


class ReadingOneRunsFiles(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.out = os.path.join(self.tmp.name, "run")
        self.saved = os.path.join(self.out, "outputs")

    def tearDown(self):
        self.tmp.cleanup()

    def test_reports_and_outputs_of_one_run_read_together(self):
        run("--seed", "5", "--out", self.out, "--save-outputs", self.saved)
        r = convlab.read_run(self.out)
        self.assertEqual(r["report"]["inputs"]["seed"], 5)
        self.assertEqual(sorted(r["outputs"]), ["naive", "oracle"])
        self.assertEqual(r["outputs"]["naive"].shape, (1, 4, 64))
        self.assertIn("\nnaive,", r["csv"])
        with open(os.path.join(self.saved, "outputs.json")) as f:
            self.assertEqual(json.load(f)["run_id"], r["report"]["run_id"])

    def test_outputs_of_another_run_are_refused(self):
        run("--seed", "5", "--out", self.out, "--save-outputs", self.saved)
        run("--seed", "6", "--save-outputs", self.saved)  # new outputs, the old report
        with self.assertRaises(convlab.SetMismatch) as caught:
            convlab.read_run(self.out)
        self.assertIn("come from run", str(caught.exception))

    def test_reports_of_an_older_version_are_read_as_plain_files(self):
        os.makedirs(self.out)
        for name, text in [("report.json", '{"run": 1}'), ("report.csv", "a\n"), ("report.txt", "t\n")]:
            with open(os.path.join(self.out, name), "w") as f:
                f.write(text)
        r = convlab.read_reports(self.out)
        self.assertEqual(r["json"], {"run": 1})
        self.assertIsNone(r["html"])


if __name__ == "__main__":
    unittest.main()
