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


def _skbuild():
    from scikit_build_core import build
    return build


def get_requires_for_build_sdist(config_settings=None):
    return _skbuild().get_requires_for_build_sdist(config_settings)


def build_sdist(sdist_directory, config_settings=None):
    return _skbuild().build_sdist(sdist_directory, config_settings)


def get_requires_for_build_wheel(config_settings=None):
    _check_toolchain()
    return _skbuild().get_requires_for_build_wheel(config_settings)


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    return _skbuild().prepare_metadata_for_build_wheel(metadata_directory, config_settings)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    _check_toolchain()
    return _skbuild().build_wheel(wheel_directory, config_settings, metadata_directory)


def get_requires_for_build_editable(config_settings=None):
    _check_toolchain()
    return _skbuild().get_requires_for_build_editable(config_settings)


def prepare_metadata_for_build_editable(metadata_directory, config_settings=None):
    return _skbuild().prepare_metadata_for_build_editable(metadata_directory, config_settings)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    _check_toolchain()
    return _skbuild().build_editable(wheel_directory, config_settings, metadata_directory)
