"""python/toy's layers (scripts/check_py_imports.py): no import circles, no
upward imports. Run here so that CI's pytest fails on a new one."""

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "check_py_imports.py"


def test_toy_imports_only_downward_and_in_no_circle():
    result = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout
    assert "no circles, none upward" in result.stdout


def test_the_check_names_an_upward_import_and_a_circle(tmp_path):
    package = tmp_path / "toy"
    for layer in ("core", "training"):
        (package / layer).mkdir(parents=True)
        (package / layer / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "core" / "files.py").write_text("def f():\n    from ..training import loop\n")
    (package / "training" / "loop.py").write_text("from ..core import files\n")
    result = subprocess.run([sys.executable, str(SCRIPT), str(package)], capture_output=True, text=True)
    assert result.returncode == 1
    assert "upward import: toy.core.files -> toy.training.loop" in result.stdout
    assert "import circle: toy.core.files -> toy.training.loop -> toy.core.files" in result.stdout
