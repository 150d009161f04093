"""The cffi (ABI mode) binding to libtinynn_<device>.

The declarations come from the shipped header, between TNN_CDEF_BEGIN and
TNN_CDEF_END, so the header stays the single source of truth. A non-zero
status from any call raises ToyError with the C library's message.
"""
from __future__ import annotations

import sys
from importlib import resources

import cffi

DEVICES = ("cpu", "cuda", "metal")


class ToyError(RuntimeError):
    """An error reported by tinynn or by toy's own checks.

    status is tinynn's status code (1: bad argument, 2: call out of order,
    3: backend failure, 4: out of memory, 5: file I/O), 0 for Python checks.
    """

    def __init__(self, message: str, status: int = 0):
        super().__init__(message)
        self.status = status


class DeviceNotBuilt(ToyError):
    """The library for the requested device was not built into this install."""


def _read_cdef() -> str:
    header = (resources.files("toy") / "include" / "tinynn.h").read_text()
    begin = header.index("/* TNN_CDEF_BEGIN */") + len("/* TNN_CDEF_BEGIN */")
    end = header.index("/* TNN_CDEF_END */")
    return header[begin:end]


ffi = cffi.FFI()
ffi.cdef(_read_cdef())

_libraries: dict[str, object] = {}

_BUILD_HINT = {
    "cpu": "reinstall toy: pip install .",
    "cuda": "rebuild with CUDA: TOY_CUDA=ON pip install . (needs nvcc and the nvidia-cublas wheel)",
    "metal": "Metal is built on macOS only: pip install . on a Mac",
}


def _library_filename(device: str) -> str:
    if sys.platform == "darwin":
        return f"libtinynn_{device}.dylib"
    if sys.platform == "win32":
        return f"tinynn_{device}.dll"
    return f"libtinynn_{device}.so"


def library(device: str = "cpu"):
    """The loaded libtinynn for a device ('cpu', 'cuda' or 'metal')."""
    if device not in DEVICES:
        raise ToyError(f"unknown device '{device}': choose one of {', '.join(DEVICES)}")
    if device not in _libraries:
        path = resources.files("toy") / "lib" / _library_filename(device)
        if not path.is_file():
            raise DeviceNotBuilt(
                f"device '{device}' is not built into this install ({path.name} is missing): "
                f"{_BUILD_HINT[device]}"
            )
        _libraries[device] = ffi.dlopen(str(path))
    return _libraries[device]


def check(lib, status: int) -> None:
    """Raise ToyError with tinynn's message when status is not TNN_OK."""
    if status != 0:
        raise ToyError(ffi.string(lib.tnn_last_error()).decode("utf-8", "replace"), status)
