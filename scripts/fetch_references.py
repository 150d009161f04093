"""Fetch llama.cpp's reference files for the tests: its models/ folder (the
ggml-vocab-*.gguf vocabularies with their .inp/.out token ids, and
templates/*.jinja, about 70 real chat templates), as the llama-cpp-python
0.3.36 sdist carries them under vendor/llama.cpp/models (llama.cpp is MIT).

    python scripts/fetch_references.py [DEST]

pip downloads the sdist (unbuilt) and the models/ folder is unpacked to DEST,
by default tests/.references/llama.cpp/models, where tests/conftest.py looks
(or set TOY_LLAMA_CPP_MODELS). Nothing is fetched when DEST is complete.
"""

from __future__ import annotations

import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

VERSION = "0.3.36"
MEMBER = f"llama_cpp_python-{VERSION}/vendor/llama.cpp/models/"
DEFAULT = Path(__file__).resolve().parent.parent / "tests" / ".references" / "llama.cpp" / "models"


def fetch(dest: Path) -> None:
    if (dest / "templates").is_dir() and (dest / "ggml-vocab-llama-bpe.gguf.out").is_file():
        print(f"fetch_references: {dest} is already there")
        return
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:",
             "--no-build-isolation", f"llama-cpp-python=={VERSION}", "-d", tmp],
            check=True,
        )  # fmt: skip
        (sdist,) = Path(tmp).glob("llama_cpp_python-*.tar.gz")
        partial = dest.with_name(dest.name + ".partial")
        with tarfile.open(sdist) as archive:
            members = [m for m in archive.getmembers() if m.name.startswith(MEMBER) and (m.isfile() or m.isdir())]
            for member in members:
                member.name = member.name[len(MEMBER) :]
            archive.extractall(partial, members=[m for m in members if m.name], filter="data")
        partial.rename(dest)  # whole or not at all
    print(f"fetch_references: llama.cpp's models/ from llama-cpp-python {VERSION} in {dest}")


if __name__ == "__main__":
    fetch(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT)
