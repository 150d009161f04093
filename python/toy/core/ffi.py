"""The cffi declarations of tinynn's C API, read from the shipped header.

The block between TNN_CDEF_BEGIN and TNN_CDEF_END of tinynn.h is declared
verbatim, so the header stays the single source of truth for the calls,
the structs and the enum values (status codes, tensor kinds, LoRA targets).
Nothing here loads a library: toy.native.library does that.
"""

from __future__ import annotations

from importlib import resources

import cffi


def _read_cdef() -> str:
    header = (resources.files("toy") / "include" / "tinynn.h").read_text()
    begin = header.index("/* TNN_CDEF_BEGIN */") + len("/* TNN_CDEF_BEGIN */")
    end = header.index("/* TNN_CDEF_END */")
    return header[begin:end]


ffi = cffi.FFI()
ffi.cdef(_read_cdef())


def enum_values(enum: str) -> dict[str, int]:
    """The constants of an enum of tinynn.h by name, e.g.
    enum_values("tnn_status")["TNN_ERR_ARG"]."""
    return dict(ffi.typeof(f"enum {enum}").relements)
