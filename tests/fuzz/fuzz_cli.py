"""The command lines themselves as fuzz input: every option of every
toy-train recipe and of toy-generate, read from their parsers (a new option
is fuzzed without a change here), given random, huge, negative, NaN, empty
and malformed values, repeated, cut short or misspelt. The only acceptable
outcomes are a run (stopped by the harness's SIGINT if it is long) or exit 2
with one line.

Each case starts from a small valid command (one step, short sequences) so
that what is accepted runs quickly, and changes one to three things in it.
"""

from __future__ import annotations

import argparse

NAME = "cli"

# small runs; the fuzzed options are added after these, and argparse keeps the last
BASE = {
    "from-scratch": ["--steps", "1", "--seq", "16", "--batch", "1", "--d-model", "32"],
    "vit-tiny": ["--steps", "1", "--batch", "4", "--d-model", "16", "--layers", "1"],
    "lora": ["--steps", "1", "--seq", "16", "--batch", "1"],
    "instruct": ["--steps", "1", "--seq", "32", "--batch", "1", "--data", "{instruct}"],
    "warm-start": ["--steps", "1", "--seq", "16", "--batch", "1", "--d-model", "64", "--layers", "1"],
}
# how often each command is drawn: the GGUF recipes load a 135M model, the others are quick
WEIGHTS = {"from-scratch": 5, "vit-tiny": 2, "lora": 1, "instruct": 1, "warm-start": 1, "toy-generate": 3}

NUMBERS = [
    "0",
    "-1",
    "1",
    "2",
    "-0",
    "0.5",
    "1e-300",
    "1e309",
    "-1e309",
    "nan",
    "NaN",
    "inf",
    "-inf",
    "2147483647",
    "2147483648",
    "-2147483649",
    "4294967296",
    "3000000000",
    "9223372036854775808",
    "18446744073709551616",
    "99999999999999999999999999",
    "65536",
    "65537",
    "4097",
    "1024",
    "513",
    "0x10",
    "1_000",
    " 7",
    "7 ",
    "１",
    "٣",
    "1e3",
    "1.0",
    "",
    " ",
    "abc",
    "--",
    "-",
    "=1",
]
PATHS = [
    "",
    ".",
    "/",
    "/dev/null",
    "/dev/zero",
    "/proc/self/mem",
    "nope/none.gguf",
    "a\nb",
    "x" * 5000,
    "-",
    "--steps",
    "{instruct}",
    "{text}",
    "{dir}",
    "{empty}",
    "{binary}",
]
WORDS = [
    "",
    "q",
    "q,k,v,o,gate,up,down",
    "all",
    ",",
    "q,,q",
    "Q",
    "embd",
    "f32",
    "bf16",
    "cpu",
    "vulkan",
    "cuda",
    "metal",
    "tpu",
    "fast",
    "stored",
    "gpt2",
    "llama",
    "pca",
    "donor",
    "scratch",
    "base",
    "\x00",
    "é",
    "x" * 10000,
]


def _parsers():
    from toy.cli import generate as generate_cli
    from toy.cli import train as cli

    recipes = cli._recipe_parsers(cli.build_parser())
    return {**{name: recipes[name] for name in BASE}, "toy-generate": generate_cli.build_parser()}


def _options(parser) -> list[argparse.Action]:
    return [a for a in parser._actions if a.option_strings and a.dest not in ("help", "version")]


def _value(rng, action) -> str | None:
    """A value for the option: None for a flag without one."""
    if action.nargs == 0:
        return None
    if action.choices is not None and rng.random() < 0.5:
        return rng.choice(list(action.choices))
    if action.type is not None:
        return rng.choice(NUMBERS)
    return rng.choice(PATHS if rng.random() < 0.6 else WORDS)


def _files(workdir) -> dict:
    """The files a value may name: a valid instruct file, a text corpus, a
    folder, an empty file and binary junk."""
    instruct = workdir / "pairs.jsonl"
    instruct.write_text('{"prompt": "2+2?", "response": "4"}\n{"prompt": "Hi", "response": "Hello!"}\n')
    text = workdir / "notes.txt"
    text.write_text("a small corpus of text for the fuzzer. " * 40)
    (workdir / "folder").mkdir()
    (workdir / "empty.txt").write_bytes(b"")
    (workdir / "junk.bin").write_bytes(bytes(range(256)) * 8)
    return {
        "{instruct}": str(instruct),
        "{text}": str(text),
        "{dir}": str(workdir / "folder"),
        "{empty}": str(workdir / "empty.txt"),
        "{binary}": str(workdir / "junk.bin"),
    }


def make_case(rng, workdir):
    files = _files(workdir)
    command = rng.choices(list(WEIGHTS), weights=list(WEIGHTS.values()))[0]
    parser = _parsers()[command]
    if command == "toy-generate":
        prog, argv = "toy-generate", [rng.choice(["Hello", "", " ", "x" * 3000, "\x00", "--"]), "--max-new-tokens", "2"]
    else:
        prog, argv = "toy-train", [command, *BASE[command], "--out", "run"]
    options = _options(parser)
    for _ in range(rng.randint(1, 3)):
        action = rng.choice(options)
        flag = rng.choice(action.option_strings)
        value = _value(rng, action)
        roll = rng.random()
        if value is None:
            argv += [flag]
        elif roll < 0.08:
            argv += [flag]  # the value left out
        elif roll < 0.16:
            argv += [f"{flag}={value}"]
        elif roll < 0.20:
            argv += [flag[:-1], value]  # misspelt
        else:
            argv += [flag, value]
    if rng.random() < 0.05:
        argv.insert(rng.randrange(len(argv) + 1), rng.choice(["--bogus", "-x", "extra", "--"]))
    return prog, [files.get(a, a) for a in argv]
