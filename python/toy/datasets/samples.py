"""The sample data shipped with toy, to try every recipe without data of
one's own: `toy-train samples [DIR]` copies it out.

    facts.jsonl   30 made-up facts as {"prompt", "response"} lines (instruct's
                  default data: a base model cannot know them)
    preferences.jsonl  40 {"prompt", "chosen", "rejected"} lines: the same
                  answer with and without a sign-off, the signed one chosen
                  (dpo's and orpo's default data)
    notes.txt     a page of made-up field notes, a corpus for lora and full
    photos/       32 grey 32x32 pictures in two class folders, ring/ and cross/
                  (vit-tiny --images; scripts/make_sample_photos.py drew them)
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from ..core.errors import InputError, OneLineParser, run_command

SAMPLES = Path(__file__).resolve().parent.parent / "data" / "samples"  # toy/data/samples
NAMES = ("facts.jsonl", "preferences.jsonl", "notes.txt", "photos")


def path(name: str) -> Path:
    """The shipped sample `name` (one of NAMES), where the package keeps it."""
    if name not in NAMES:
        raise InputError(f"toy ships no sample called {name!r}; the samples are {', '.join(NAMES)}")
    return SAMPLES / name


def copy_samples(folder) -> list[Path]:
    """Copy every sample into folder (made if missing); a name already there
    is refused before anything is copied: nothing of the user's is replaced."""
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise InputError(f"{folder} is not a folder")
    taken = [name for name in NAMES if (folder / name).exists() or (folder / name).is_symlink()]
    if taken:
        raise InputError(f"{folder / taken[0]} already exists; remove it or name another folder")
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name in NAMES:
        source, target = path(name), folder / name
        if source.is_dir():
            shutil.copytree(source, target)
        else:
            shutil.copyfile(source, target)
        written.append(target)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(
        prog="toy-train samples", description="Write toy's sample data into a folder: " + ", ".join(NAMES) + "."
    )
    parser.add_argument("folder", nargs="?", default=".", help="where to write them (default: here)")

    def body() -> int:
        args = parser.parse_args(argv)
        for target in copy_samples(args.folder):
            print(f"toy-train samples: wrote {target}", file=sys.stderr)
        return 0

    return run_command("toy-train samples", body)


if __name__ == "__main__":
    sys.exit(main())
