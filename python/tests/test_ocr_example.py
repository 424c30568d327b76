"""examples/ocr/ocr.py (the OCR example through the Python package) prints
what the C program onyx_ocr prints on the bundled sample images: the same
text, confidences and boxes, line for line."""

import pathlib
import subprocess
import sys

import pytest

from conftest import built_file

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "examples" / "ocr" / "ocr.py"


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    return p.returncode, p.stdout, p.stderr


@pytest.mark.parametrize("image", ["sample.png", "sample2.ppm"])
def test_python_ocr_prints_what_onyx_ocr_prints(build_dir, image):
    ocr_dir = build_dir / "examples" / "ocr"
    models = built_file(build_dir, "examples/ocr/models/ppocr_keys_v1.txt").parent
    sample = built_file(build_dir, f"examples/ocr/{image}")
    rc_c, want, err_c = run([str(built_file(build_dir, "examples/ocr/onyx_ocr")),
                             "--models", str(models), str(sample)])
    assert rc_c == 0, err_c
    rc_py, got, err_py = run([sys.executable, str(SCRIPT), "--models", str(models), str(sample)])
    assert rc_py == 0, err_py
    assert len(want.splitlines()) >= 5 and ocr_dir.is_dir()
    assert got == want


def test_python_ocr_reports_errors_on_one_line(tmp_path, build_dir):
    models = built_file(build_dir, "examples/ocr/models/ppocr_keys_v1.txt").parent
    junk = tmp_path / "junk.png"
    junk.write_bytes(b"not an image")
    for args in ([str(junk)], ["--models", str(tmp_path), str(junk)],
                 [str(tmp_path / "missing.png")]):
        rc, out, err = run([sys.executable, str(SCRIPT), "--models", str(models), *args])
        assert rc == 1 and out == "" and err.startswith("ocr.py: error: ")
        assert len(err.strip().splitlines()) == 1
