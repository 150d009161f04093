"""Where toy finds each backend's library: toy/lib first, then the backend's
own package (toy-cuda installs toy_cuda/lib/libtinynn_cuda.so)."""

import json
import os
import shutil
import subprocess
import sys

import pytest

from toy.native.library import backend_variant, library_path


def test_the_cpu_library_is_toys_own():
    path = library_path("cpu")
    assert path is not None and path.parent.parent.name == "toy"


def test_the_cpu_build_says_which_variant_runs():
    variant = backend_variant("cpu")
    # "native" for a source build, else one of ggml's variant names, never empty
    assert variant == "native" or variant.replace("_", "").replace(".", "").isalnum(), variant


@pytest.mark.parametrize("device", ["cuda", "vulkan"])
def test_a_device_finds_its_own_package(tmp_path, device):
    if library_path(device) is not None:
        pytest.skip(f"a {device} library is installed here already")
    # a stand-in toy_<device> package: toy's lib folder, the CPU library renamed as the device's
    cpu = library_path("cpu")
    lib = tmp_path / f"toy_{device}" / "lib"
    shutil.copytree(str(cpu.parent), lib)
    for other in lib.glob("libtinynn_*"):
        if other.name != cpu.name:
            other.unlink()
    (lib / cpu.name).rename(lib / cpu.name.replace("_cpu", f"_{device}"))
    (tmp_path / f"toy_{device}" / "__init__.py").write_text("")
    grafted = cpu.parent.parent.parent / "toy.libs"  # a repaired wheel's libgomp
    if grafted.is_dir():
        shutil.copytree(str(grafted), tmp_path / "toy.libs")
    code = (
        "import json; from toy.native.library import library, library_path, ffi; "
        f"lib = library('{device}'); "
        f"print(json.dumps([str(library_path('{device}')), ffi.string(lib.tnn_backend_name()).decode()]))"
    )
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    path, name = json.loads(out.stdout)
    assert path.startswith(str(lib))
    assert name == "cpu"  # it is the stand-in, loaded through the device's lookup
