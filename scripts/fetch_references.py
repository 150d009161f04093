"""Fetch llama.cpp's reference files for the tests, as the llama-cpp-python
0.3.36 sdist carries them under vendor/llama.cpp (llama.cpp is MIT):

- models/: the ggml-vocab-*.gguf vocabularies with their .inp/.out token ids,
  and templates/*.jinja, about 70 real chat templates;
- convert_hf_to_gguf.py with what it imports from llama.cpp's tree,
  conversion/ (a module per family) and gguf-py/ (its own gguf package, newer
  than the one on PyPI): llama.cpp's own converter, which the tests run
  (tests/llama_cpp_convert.py) to turn a random-weight transformers model
  into the GGUF llama.cpp expects, for families toy cannot check against a
  released file;
- LICENSE.

    python scripts/fetch_references.py [DEST] [--sdist llama_cpp_python-0.3.36.tar.gz]

pip downloads the sdist (unbuilt), unless --sdist names one already here, and
those files are unpacked to DEST, by default tests/.references/llama.cpp
(models/ in it is where tests/conftest.py looks, or set TOY_LLAMA_CPP_MODELS).
Nothing is fetched when DEST is complete; a DEST from an older version of
this script (models/ alone) is fetched again, whole.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

VERSION = "0.3.36"
ROOT = f"llama_cpp_python-{VERSION}/vendor/llama.cpp/"
# what is unpacked: folders end in "/", the rest are files
WANTED = ("models/", "conversion/", "gguf-py/", "convert_hf_to_gguf.py", "LICENSE")
# one file per entry of WANTED: when all are there, DEST is complete
MARKERS = (
    "models/templates",
    "models/ggml-vocab-llama-bpe.gguf.out",
    "conversion/__init__.py",
    "gguf-py/gguf/__init__.py",
    "convert_hf_to_gguf.py",
    "LICENSE",
)
DEFAULT = Path(__file__).resolve().parent.parent / "tests" / ".references" / "llama.cpp"


def complete(dest: Path) -> bool:
    return all((dest / marker).exists() for marker in MARKERS)


def download(tmp: str) -> Path:
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:",
         "--no-build-isolation", f"llama-cpp-python=={VERSION}", "-d", tmp],
        check=True,
    )  # fmt: skip
    (sdist,) = Path(tmp).glob("llama_cpp_python-*.tar.gz")
    return sdist


def wanted(name: str) -> bool:
    rest = name[len(ROOT) :]
    return name.startswith(ROOT) and any(rest == w or (w.endswith("/") and rest.startswith(w)) for w in WANTED)


def fetch(dest: Path, sdist: Path | None = None) -> None:
    if complete(dest):
        print(f"fetch_references: {dest} is already there")
        return
    with tempfile.TemporaryDirectory() as tmp:
        sdist = sdist or download(tmp)
        partial = dest.with_name(dest.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)  # a run that stopped half way
        with tarfile.open(sdist) as archive:
            members = [m for m in archive.getmembers() if wanted(m.name) and (m.isfile() or m.isdir())]
            for member in members:
                member.name = member.name[len(ROOT) :]
            archive.extractall(partial, members=members, filter="data")
        if not complete(partial):
            sys.exit(f"fetch_references: {sdist} lacks some of {', '.join(MARKERS)}")
        # whole or not at all: an older DEST (models/ alone) stays until the new one is in place
        old = dest.with_name(dest.name + ".old")
        if dest.exists():
            dest.rename(old)
        partial.rename(dest)
        shutil.rmtree(old, ignore_errors=True)
    print(f"fetch_references: llama.cpp's {', '.join(WANTED)} from llama-cpp-python {VERSION} in {dest}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dest", nargs="?", type=Path, default=DEFAULT)
    parser.add_argument("--sdist", type=Path, help=f"llama-cpp-python {VERSION}'s sdist, not downloaded then")
    args = parser.parse_args()
    fetch(args.dest, args.sdist)
