"""The sdist's build backend: without a compiler, one line that says what to install."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

BACKEND = Path(__file__).resolve().parent.parent / "build_backend"


def run_hook(hook: str, path: str, **env) -> subprocess.CompletedProcess:
    # what pip does first when it builds toy from the sdist
    code = f"import sys; sys.path.insert(0, {str(BACKEND)!r}); import toy_build; toy_build.{hook}()"
    clean = {k: v for k, v in os.environ.items() if k not in ("CC", "CXX")}
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env={**clean, "PATH": path, **env}, timeout=60
    )


@pytest.mark.skipif(sys.platform == "win32", reason="MSVC is found by CMake, not on PATH")
@pytest.mark.parametrize("hook", ["get_requires_for_build_wheel", "get_requires_for_build_editable"])
def test_no_compiler_is_one_line_saying_what_to_install(tmp_path, hook):
    result = run_hook(hook, str(tmp_path))  # an empty PATH: no cc, c++ or cmake
    assert result.returncode != 0
    lines = (result.stdout + result.stderr).strip().splitlines()
    assert len(lines) == 1, lines
    assert "C and C++ compiler" in lines[0] and "CMake" in lines[0] and "install" in lines[0]


def test_a_compiler_named_in_cc_that_does_not_exist_is_missing(tmp_path):
    result = run_hook(
        "get_requires_for_build_wheel",
        os.environ["PATH"],
        CC=str(tmp_path / "no-such-cc"),
        CXX=str(tmp_path / "no-such-c++"),
    )
    assert result.returncode != 0
    assert "compiler" in result.stderr
