"""The cffi (ABI mode) binding to libtinynn_<device>: which library serves
a device, loaded once. The declarations come from the shipped header
(_ffi.py). A status other than TNN_OK from any call raises ToyError with
the C library's message.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from importlib import resources

from ..core.errors import TNN_OK, DeviceNotBuilt, ToyError
from ..core.ffi import ffi

DEVICES = ("cpu", "cuda", "vulkan", "metal")

_libraries: dict[str, object] = {}

# toy and its backends' packages are built, not published: every hint names
# a wheel file or a checkout, never a name an index would be asked for
_INSTALL_HINT = {
    "cpu": "reinstall toy: pip install toy-*.whl (the CPU wheel), or pip install . in a checkout",
    "cuda": "not on any index: in a checkout of toy, pip install ./packages/toy-cuda "
    "or TOY_CUDA=ON pip install . (nvcc 13 and cuBLAS; docs/gpus.md)",
    "vulkan": "not on any index: in a checkout of toy, pip install ./packages/toy-vulkan "
    "or TOY_VULKAN=ON pip install . (libvulkan-dev, glslc and spirv-headers; docs/gpus.md)",
    "metal": "Metal is built on macOS only: pip install . on a Mac",
}

# The backends that come as packages of their own (packages/ in the repo):
# their library lies in <package>/lib.
_BACKEND_PACKAGES = {"cuda": "toy_cuda", "vulkan": "toy_vulkan"}


def _library_filename(device: str) -> str:
    if sys.platform == "darwin":
        return f"libtinynn_{device}.dylib"
    if sys.platform == "win32":
        return f"tinynn_{device}.dll"
    return f"libtinynn_{device}.so"


def library_path(device: str):
    """Where libtinynn_<device> lies in this install, or None.

    First toy/lib (what `pip install .` built), then the backend's own
    package (packages/toy-cuda installs toy_cuda/lib/libtinynn_cuda.so)."""
    name = _library_filename(device)
    path = resources.files("toy") / "lib" / name
    if path.is_file():
        return path
    package = _BACKEND_PACKAGES.get(device)
    if package is not None and importlib.util.find_spec(package) is not None:
        path = resources.files(package) / "lib" / name
        if path.is_file():
            return path
    return None


def library(device: str = "cpu"):
    """The loaded libtinynn for a device ('cpu', 'cuda' or 'metal')."""
    if device not in DEVICES:
        raise ToyError(f"unknown device '{device}': choose one of {', '.join(DEVICES)}")
    if device not in _libraries:
        path = library_path(device)
        if path is None:
            raise DeviceNotBuilt(
                f"device '{device}' is not built into this install "
                f"({_library_filename(device)} is missing): {_INSTALL_HINT[device]}"
            )
        try:
            _libraries[device] = ffi.dlopen(str(path))
        except OSError as err:  # e.g. the CUDA runtime libraries are missing
            raise DeviceNotBuilt(f"device '{device}': cannot load {path}: {err}") from None
    return _libraries[device]


def backend_variant(device: str = "cpu") -> str:
    """Which build of the device's code runs here: for the CPU, "native" (a
    source build, compiled for its build machine) or the instruction-set level
    a portable wheel picked for this CPU ("haswell", "icelake", ...)."""
    lib = library(device)
    return ffi.string(lib.tnn_backend_variant()).decode()


CPU_KERNELS = ("qgemm", "fgemm", "head_loss", "adamw", "fgemm_bf16")


def cpu_kernel_variants() -> str:
    """Which variant each of toy's CPU kernels runs in here, under
    TNN_CPU_KERNELS and TNN_CPU_VARIANT: "qgemm avx512, fgemm avx512, ..."."""
    lib = library("cpu")
    names = []
    for kernel in CPU_KERNELS:
        answer = lib.tnn_cpu_kernel_choice(kernel.encode())
        names.append(f"{kernel} {'?' if answer == ffi.NULL else ffi.string(answer).decode()}")
    return ", ".join(names)


def device_notice(device: str) -> str | None:
    """One line for stderr when the device is a software one (Mesa's
    lavapipe: Vulkan shaders run on the CPU), so that its pace is not taken
    for a hang; None otherwise."""
    if device == "cpu":
        return None
    variant = backend_variant(device)
    if "(software" not in variant:
        return None
    name = variant.split(" (software")[0]
    return (
        f"toy: {device} runs on {name}, a software device (the CPU runs its shaders): "
        f"expect it far slower than --device cpu"
    )


def describe_backends() -> list[str]:
    """One line per device: what this install can run (toy-train --version)."""
    lines = []
    for device in DEVICES:
        path = library_path(device)
        if path is None:
            lines.append(f"{device}: not installed; {_INSTALL_HINT[device]}")
        elif device == "cpu":
            variant = backend_variant("cpu")
            how = (
                "built for this machine's CPU"
                if variant == "native"
                else "portable build, the variant chosen for this CPU"
            )
            lines.append(f"cpu: {variant} ({how}); toy's kernels: {cpu_kernel_variants()}")
        else:
            try:
                variant = backend_variant(device)
                lines.append(f"{device}: {'no device found' if variant == 'none' else variant} ({path})")
            except DeviceNotBuilt as err:  # built, but its runtime is missing
                lines.append(f"{device}: {err}")
    return lines


def check(lib, status: int) -> None:
    """Raise ToyError with tinynn's message when status is not TNN_OK."""
    if status != TNN_OK:
        raise ToyError(ffi.string(lib.tnn_last_error()).decode("utf-8", "replace"), status)


class VersionAction(argparse.Action):
    """--version: the program's name and toy's version, then a line per
    device (which CPU variant runs, which backends are installed)."""

    def __init__(self, option_strings, version_name: str, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest, nargs=0, default=default, help=help)
        self.version_name = version_name

    def __call__(self, parser, namespace, values, option_string=None):
        from ..core.version import __version__

        print("\n".join([f"{self.version_name} {__version__}", *describe_backends()]))
        parser.exit()
