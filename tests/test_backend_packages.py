"""Where toy finds each backend's library: toy/lib first, then the backend's
own package (toy-cuda installs toy_cuda/lib/libtinynn_cuda.so)."""
import json
import os
import shutil
import subprocess
import sys

from toy._native import backend_variant, library_path


def test_the_cpu_library_is_toys_own():
    path = library_path("cpu")
    assert path is not None and path.parent.parent.name == "toy"


def test_the_cpu_build_says_which_variant_runs():
    variant = backend_variant("cpu")
    # "native" for a source build, else one of ggml's variant names, never empty
    assert variant == "native" or variant.replace("_", "").replace(".", "").isalnum(), variant


def test_device_cuda_finds_the_toy_cuda_package(tmp_path):
    if library_path("cuda") is not None:
        import pytest
        pytest.skip("a CUDA library is installed here already")
    # a stand-in toy_cuda package: toy's lib folder, the CPU library renamed as the CUDA one
    cpu = library_path("cpu")
    lib = tmp_path / "toy_cuda" / "lib"
    shutil.copytree(str(cpu.parent), lib)
    (lib / cpu.name).rename(lib / cpu.name.replace("_cpu", "_cuda"))
    (tmp_path / "toy_cuda" / "__init__.py").write_text("")
    grafted = cpu.parent.parent.parent / "toy.libs"      # a repaired wheel's libgomp
    if grafted.is_dir():
        shutil.copytree(str(grafted), tmp_path / "toy.libs")
    code = ("import json; from toy._native import library, library_path, ffi; "
            "lib = library('cuda'); "
            "print(json.dumps([str(library_path('cuda')), ffi.string(lib.tnn_backend_name()).decode()]))")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    path, name = json.loads(out.stdout)
    assert path.startswith(str(lib))
    assert name == "cpu"      # it is the stand-in, loaded through the CUDA lookup
