"""toy's build backend: scikit-build-core, after checking that a source build
can work on this machine.

pip builds toy from the sdist when no wheel fits the machine. Without a C/C++
compiler that build would fail deep inside CMake's log; this backend says in
one line what to install instead. CMake itself need not be installed:
scikit-build-core asks pip for the `cmake` package when it is missing.
"""
from __future__ import annotations

import os
import shutil
import sys


def _found(env_var: str, names: tuple[str, ...]) -> bool:
    chosen = os.environ.get(env_var)
    if chosen:
        return shutil.which(chosen.split()[0]) is not None
    return any(shutil.which(name) for name in names)


def _check_toolchain() -> None:
    if sys.platform == "win32":
        return   # CMake finds MSVC itself; it is not on PATH
    if _found("CC", ("cc", "gcc", "clang")) and _found("CXX", ("c++", "g++", "clang++")):
        return
    needs = ["a C and C++ compiler"] + ([] if shutil.which("cmake") else ["CMake >= 3.21"])
    how = ("xcode-select --install" if sys.platform == "darwin"
           else "e.g. apt install build-essential cmake, or dnf install gcc-c++ cmake")
    raise SystemExit(f"toy: building from source needs {' and '.join(needs)}: install "
                     f"{'them' if len(needs) > 1 else 'it'} ({how}), or install a prebuilt wheel of toy")


def _hook(name: str, builds_code: bool):
    """scikit-build-core's hook `name`, after the toolchain check when the
    hook leads to compiling (scikit-build-core is imported only when called)."""
    def hook(*args, **kwargs):
        if builds_code:
            _check_toolchain()
        from scikit_build_core import build
        return getattr(build, name)(*args, **kwargs)
    hook.__name__ = hook.__qualname__ = name
    return hook


# the PEP 517 and PEP 660 hooks
get_requires_for_build_sdist = _hook("get_requires_for_build_sdist", builds_code=False)
build_sdist = _hook("build_sdist", builds_code=False)
get_requires_for_build_wheel = _hook("get_requires_for_build_wheel", builds_code=True)
prepare_metadata_for_build_wheel = _hook("prepare_metadata_for_build_wheel", builds_code=False)
build_wheel = _hook("build_wheel", builds_code=True)
get_requires_for_build_editable = _hook("get_requires_for_build_editable", builds_code=True)
prepare_metadata_for_build_editable = _hook("prepare_metadata_for_build_editable", builds_code=False)
build_editable = _hook("build_editable", builds_code=True)
