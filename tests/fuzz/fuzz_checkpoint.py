"""Run checkpoints as fuzz input: what `toy-train --resume` reads from a run
directory that may have been damaged by a disk, edited by hand or
downloaded from anyone -- the step-*.npz files (tensors, AdamW moments and
the JSON "__state__" record), latest.json, and events.jsonl beside them.

Each case copies a valid, stopped run (made once per worker process, and
checked to resume), changes one to three things in it and resumes it, now
and then with changed options. The npz is damaged at every level: arrays
dropped, renamed, added, of another shape or dtype, 0-d, NaN-filled, with
headers claiming huge shapes; every field of the state record missing, of
the wrong type, huge, negative or inconsistent, the data source's RNG state
garbage; the archive truncated, flipped, not a zip, empty, or a zip bomb.
latest.json is invalid, of wrong types, names missing files or paths
outside the folder, lists odd "written" entries; folders and files are
deleted, swapped for directories or for symlinks pointing out of the run.

A case passes when the resume succeeds (or is stopped by the case's time
budget: a checkpoint may ask for a very long run), or is refused with exit
2 and one line -- and, either way, no file the run does not own changed or
went (sentinels are planted inside and outside the run folder, and where
symlinks and "written" entries point), and a refused resume changed nothing
at all: the run is still there to resume once the damage is undone.
"""

from __future__ import annotations

import atexit
import contextlib
import copy
import hashlib
import io
import json
import os
import resource
import shutil
import signal
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

NAME = "checkpoint"

# small runs that stop after STOP_AFTER of their 8 steps (as a Ctrl-C would):
# resuming them saves twice more (steps 4 and 6), so pruning runs too
RECIPES = {
    "from-scratch": [
        "--steps",
        "8",
        "--save-every",
        "2",
        "--threads",
        "2",
        "--seq",
        "16",
        "--batch",
        "1",
        "--d-model",
        "32",
    ],
    "vit-tiny": [
        "vit-tiny",
        "--steps",
        "8",
        "--save-every",
        "2",
        "--threads",
        "2",
        "--batch",
        "4",
        "--d-model",
        "16",
        "--layers",
        "1",
    ],
}
STOP_AFTER = 3
CHECKPOINT = f"step-{STOP_AFTER:08d}.npz"
STATE = "__state__"
# a damaged checkpoint may ask for 2**31 steps: the case stops it as a user would, with Ctrl-C
CASE_SECONDS = 8.0
# more than this much memory read for one case means a file was inflated before it was checked
MAX_GROWTH_BYTES = 400 << 20
# the bomb's one entry: this many zeros, deflated to about a thousandth
BOMB_BYTES = 512 << 20


# ---- running toy-train in this process ----------------------------------------


class _StopAfter(io.StringIO):
    """stdout that sends SIGINT once the run printed step n: a run stopped
    there saves its checkpoint, as after a user's Ctrl-C."""

    def __init__(self, n: int):
        super().__init__()
        self.mark = f"step {n}:"

    def write(self, text):
        if text.startswith(self.mark):
            signal.raise_signal(signal.SIGINT)
        return super().write(text)


def toy_train(argv: list[str], stdout=None, seconds: float | None = None) -> tuple[int, list[str]]:
    """toy-train's exit status and stderr lines; past `seconds`, a SIGINT."""
    from toy.cli import train as cli

    err = io.StringIO()
    previous = signal.signal(signal.SIGALRM, lambda *_: signal.raise_signal(signal.SIGINT))
    if seconds:
        signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        with contextlib.redirect_stdout(stdout or io.StringIO()), contextlib.redirect_stderr(err):
            rc = cli.main(list(argv))
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    return rc, err.getvalue().strip().splitlines()


# ---- the valid runs every case starts from (once per worker) -------------------


@dataclass
class Base:
    run: Path  # a stopped run: run/checkpoint/step-00000003.npz, latest.json
    arrays: dict  # the checkpoint's tensors, by name
    state: dict  # its JSON record
    root: Path  # the folder of the run: removed when the worker ends

    def bomb(self) -> Path:
        """The checkpoint with one tensor as a zip bomb (written when first asked for)."""
        path = self.root / "bomb.npz"
        if not path.exists():
            _write_bomb(path, self.arrays, self.state)
        return path


_bases: dict[str, Base] = {}


def base(recipe: str) -> Base:
    if recipe not in _bases:
        root = Path(tempfile.mkdtemp(prefix=f"toy-fuzz-checkpoint-{recipe}-"))
        atexit.register(shutil.rmtree, root, ignore_errors=True)
        here = os.getcwd()
        os.chdir(root)  # the run's saved --out is "run", as a user's would be
        try:
            rc, err = toy_train([*RECIPES[recipe], "--out", "run"], stdout=_StopAfter(STOP_AFTER))
            assert rc == 130, (rc, err)
            # a plain resume must succeed, or every refusal the cases see means nothing
            shutil.copytree("run", "probe")
            rc, err = toy_train(["--resume", "probe"])
            assert rc == 0, (rc, err)
        finally:
            os.chdir(here)
        with np.load(root / "run/checkpoint" / CHECKPOINT) as npz:
            arrays = {name: npz[name] for name in npz.files}
        state = json.loads(arrays.pop(STATE).tobytes())
        _bases[recipe] = Base(root / "run", arrays, state, root)
    return _bases[recipe]


def _npy(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, array, allow_pickle=True)
    return buffer.getvalue()


def _npy_claiming(array: np.ndarray, shape: tuple, descr: str = "<f4") -> bytes:
    """An .npy whose header claims shape (and dtype) over array's own bytes."""
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(buffer, {"descr": descr, "fortran_order": False, "shape": shape})
    return buffer.getvalue() + array.tobytes()


def _record(state) -> np.ndarray:
    return np.frombuffer(json.dumps(state).encode(), dtype=np.uint8)


def _write_npz(path: Path, entries: dict[str, bytes]) -> None:
    """An npz as numpy writes it (stored, uncompressed), from .npy bytes by name."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
        for name, data in entries.items():
            archive.writestr(name + ".npy", data)


def _write_bomb(path: Path, arrays: dict, state: dict) -> None:
    """The checkpoint with its first tensor as BOMB_BYTES of deflated zeros:
    half a megabyte on disk, half a gigabyte once read."""
    name = next(iter(arrays))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
        for other, array in arrays.items():
            if other != name:
                archive.writestr(other + ".npy", _npy(array))
        archive.writestr(STATE + ".npy", _npy(_record(state)))
        info = zipfile.ZipInfo(name + ".npy")
        info.compress_type = zipfile.ZIP_DEFLATED
        with archive.open(info, "w", force_zip64=True) as entry:
            entry.write(_npy_claiming(np.zeros(0, np.float32), (BOMB_BYTES // 4,)))
            zeros = bytes(64 << 20)
            for _ in range(BOMB_BYTES // len(zeros)):
                entry.write(zeros)


# ---- one case -----------------------------------------------------------------


@dataclass
class Case:
    """One case's run (workdir/run) and what its mutations made of it."""

    workdir: Path
    base: Base
    arrays: dict  # the checkpoint's tensors, written back if changed
    state: object  # its record: a dict, or an array of other bytes
    resume: str = "run"  # what --resume names
    flags: list = field(default_factory=list)
    recipe: list = field(default_factory=list)  # a recipe named before --resume
    done: list = field(default_factory=list)  # what was changed, for the report
    entries: dict = field(default_factory=dict)  # .npy bytes that replace an array's own

    @property
    def run(self) -> Path:
        return self.workdir / "run"

    @property
    def folder(self) -> Path:
        return self.run / "checkpoint"

    @property
    def npz(self) -> Path:
        return self.folder / CHECKPOINT

    @property
    def latest(self) -> Path:
        return self.folder / "latest.json"


def _replace(path: Path, data: bytes | str | None) -> None:
    """path's content replaced, whatever it was (None: removed)."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()
    if data is not None:
        path.write_bytes(data.encode() if isinstance(data, str) else data)


# values of every JSON type, and numbers no field should hold
ODD_VALUES = [
    None,
    True,
    False,
    0,
    -1,
    1,
    2,
    3,
    2**31,
    2**63,
    2**64,
    10**30,
    -(10**30),
    1.5,
    float("nan"),
    float("inf"),
    -float("inf"),
    "",
    "3",
    "x" * 1000,
    [],
    [1],
    [[]],
    {},
    {"a": 1},
]


def _odd(rng):
    return copy.deepcopy(rng.choice(ODD_VALUES))


def _a_path(rng, case) -> str:
    """A path a damaged file may name: outside the folder, absolute, odd."""
    outside = case.workdir / "outside" / "sentinel.npz"
    return rng.choice(
        [
            "../../outside/sentinel.npz",
            str(outside),
            "/etc/passwd",
            "..",
            ".",
            "",
            "/",
            "../config.json",
            "step-3.npz",
            CHECKPOINT + "/..",
            CHECKPOINT + "\n",
            "a\x00b",
            "step-00000099.npz",
            "step-00000001.npz",
            "latest.json",
            "x" * 5000,
        ]
    )


# -- the state record --

STATE_FIELDS = ["format", "step", "steps", "losses", "source", "args", "fingerprints"]


def state_field_odd(rng, case):
    key = rng.choice(STATE_FIELDS)
    case.state[key] = _odd(rng)
    return f"state {key}={str(case.state[key])[:30]}"


def state_field_dropped(rng, case):
    key = rng.choice(STATE_FIELDS)
    case.state.pop(key, None)
    return f"state without {key}"


def state_step(rng, case):
    """Steps and losses that disagree with each other or with the run."""
    step = rng.choice([0, -2, 1, 2, 4, 7, 8, 9, 2**31, 10**20])
    case.state["step"] = step
    if rng.random() < 0.5 and 0 <= step < 100:
        case.state["losses"] = (case.state["losses"] * 10)[:step]  # consistent, so it gets further
    if rng.random() < 0.3:
        case.state["steps"] = rng.choice([step, step - 1, 8, 2**31 - 1, 2**40])
        if rng.random() < 0.7 and isinstance(case.state["args"], dict):
            case.state["args"]["steps"] = case.state["steps"]  # as toy writes it: the two agree
    return f"state step={step} steps={case.state['steps']} losses={len(case.state['losses'])}"


def state_losses(rng, case):
    losses = case.state["losses"]
    i = rng.randrange(len(losses))
    losses[i] = rng.choice(
        [float("nan"), float("inf"), -float("inf"), 10**400, -(10**400), 1e308, 0, True, None, "5.5", [5.5], {}, 2**70]
    )
    return f"state losses[{i}]={str(losses[i])[:30]}"


def state_rng(rng, case):
    """The data source's RNG state (and, for image runs, its queue) as garbage."""
    source = case.state["source"]
    bit = source.get("rng", {})
    what = rng.choice(["rng", "bit_generator", "state", "inc", "has_uint32", "uinteger", "queue", "extra"])
    value = rng.choice([_odd(rng), -1, 2**128, 2**200, "MT19937", "PCG64DXSM", {"state": 1, "inc": 1}])
    if what == "rng":
        source["rng"] = value
    elif what in ("state", "inc"):
        if isinstance(bit.get("state"), dict):
            bit["state"][what] = value
    elif what == "queue":
        source["queue"] = rng.choice([value, [-1], [10**9], [1.0], [True], ["1"], list(range(100000))])
    elif what == "extra":
        source[rng.choice(["x", "queue", "rng"])] = value
    else:
        bit[what] = value
    return f"state source {what}={str(value)[:30]}"


def state_args(rng, case):
    """The run's saved options: odd values, dropped, unknown, or another valid run's."""
    args = case.state["args"]
    key = rng.choice(sorted(args) + ["bogus"])
    roll = rng.random()
    if roll < 0.2:
        args.pop(key, None)
        return f"state args without {key}"
    if roll < 0.6:
        value = rng.choice([8, 17, 64, 1, 0, "llama", "gpt2", "cuda", "vit-tiny", "lora", 512])
    else:
        value = _odd(rng)
    args[key] = value
    return f"state args {key}={str(value)[:30]}"


def state_fingerprints(rng, case):
    prints = case.state["fingerprints"]
    what = rng.choice(["data", "model"])
    prints[what] = rng.choice([("0" * 64), prints.get("data", "")[::-1], _odd(rng)])
    return f"state fingerprint {what} changed"


def state_format(rng, case):
    case.state["format"] = rng.choice(
        ["toy/checkpoint-v2", "toy/checkpoint-v0", "", "toy/train-v1", "TOY/CHECKPOINT-V1", None, 1]
    )
    return f"state format={case.state['format']}"


def state_raw(rng, case):
    """The record not JSON, or JSON that is not an object, or stored as another array."""
    text = json.dumps(case.state).encode()
    choices = {
        "cut": text[: rng.randrange(len(text))],
        "not utf-8": b"\xff\xfe" + text,
        "list": b"[]",
        "null": b"null",
        "number": b"1",
        "empty": b"",
        "deep": b"[" * 100000 + b"]" * 100000,
        "huge int": text.replace(b'"step": ', b'"step": ' + b"9" * 5000, 1),
        "huge float": text.replace(b'"step": ', b'"step": 1e999', 1),
        "duplicate keys": text[:-1] + b', "step": "x"}',
    }
    what = rng.choice(list(choices) + ["float64", "0-d", "2-d", "object", "big"])
    record = np.frombuffer(text, dtype=np.uint8)
    if what in choices:
        case.state = np.frombuffer(choices[what], dtype=np.uint8)
    elif what == "float64":
        case.state = record.astype(np.float64)
    elif what == "0-d":
        case.state = np.array(text)
    elif what == "2-d":
        case.state = record.reshape(1, -1) if rng.random() < 0.5 else np.stack([record, record])
    elif what == "object":
        case.state = np.array([text], dtype=object)
    else:
        case.state = np.frombuffer(text + b" " * (8 << 20), dtype=np.uint8)
    return f"state record {what}"


# -- the arrays --


def _a_tensor(rng, case) -> str:
    return rng.choice(list(case.arrays))


def array_dropped(rng, case):
    name = _a_tensor(rng, case)
    del case.arrays[name]
    return f"without {name}"


def array_renamed(rng, case):
    name = _a_tensor(rng, case)
    new = rng.choice([name + "x", name.upper(), "adamw_m." + name, STATE, "", "../" + name, name[:-1]])
    case.arrays[new] = case.arrays.pop(name)
    return f"{name} renamed {new}"


def array_added(rng, case):
    name = rng.choice(["extra", "blk.9.attn_q.weight", "adamw_m.extra", "token_embd.weight2"])
    case.arrays[name] = np.zeros((4, 4), np.float32)
    return f"added {name}"


def array_reshaped(rng, case):
    name = _a_tensor(rng, case)
    a = case.arrays[name]
    shapes = [
        a.reshape(-1),
        a.reshape(1, *a.shape),
        a.T,
        a[:1],
        a[..., :0],
        np.float32(1.0),
        np.zeros((0,), np.float32),
        np.zeros((2**10, 2**10), np.float32),
    ]
    case.arrays[name] = np.asarray(rng.choice(shapes))
    return f"{name} shape {case.arrays[name].shape}"


def array_dtype(rng, case):
    name = _a_tensor(rng, case)
    dtype = rng.choice(
        ["float64", "float16", "int32", "int64", "bool", "complex64", ">f4", "uint8", "object", "U4", "V4"]
    )
    a = case.arrays[name]
    case.arrays[name] = (
        a.astype(object) if dtype == "object" else a.view(np.dtype(dtype)) if dtype in ("V4",) else a.astype(dtype)
    )
    return f"{name} dtype {dtype}"


def array_values(rng, case):
    """Values a diverged run may hold: NaN, inf, huge (all still float32)."""
    name = _a_tensor(rng, case)
    value = rng.choice([np.nan, np.inf, -np.inf, 3e38, 0.0])
    a = case.arrays[name].copy()
    if a.size:
        a.flat[rng.randrange(a.size)] = value
        if rng.random() < 0.5:
            a[...] = value
    case.arrays[name] = np.asfortranarray(a) if rng.random() < 0.2 else a
    return f"{name} holds {value}"


def array_claims(rng, case):
    """An .npy header claiming a huge (or impossible) shape over the array's own bytes."""
    name = rng.choice(list(case.arrays) + [STATE])
    shape = rng.choice([(2**40, 32), (2**31,), (2**62,), (2**31, 2**31), (-1, 32), (10**6, 10**6), ()])
    descr = rng.choice(["<f4", "<f4", "<f8", "|u1", "|V0", "<U1000000"])
    own = case.arrays.get(name, np.zeros(4, np.uint8))
    case.entries[name] = _npy_claiming(own, shape, descr)
    return f"{name} claims {descr} {shape}"


# -- whole files and folders --


def npz_cut(rng, case):
    data = case.npz.read_bytes()
    case.npz.write_bytes(data[: rng.randrange(len(data))])
    return "npz truncated"


def npz_flipped(rng, case):
    data = bytearray(case.npz.read_bytes())
    n = rng.choice([1, 1, 4, 64])
    for _ in range(n):
        i = rng.randrange(len(data))
        data[i] ^= 1 << rng.randrange(8)
    case.npz.write_bytes(bytes(data))
    return f"npz {n} bits flipped"


def npz_replaced(rng, case):
    what = rng.choice(
        ["empty", "text", "npy", "pickle", "directory", "missing", "zip of nothing", "bomb", "central size"]
    )
    if what == "directory":
        _replace(case.npz, None)
        case.npz.mkdir()
    elif what == "bomb":
        shutil.copyfile(case.base.bomb(), case.npz)
    elif what == "central size":
        _claim_huge_entry_sizes(case.npz)
    else:
        buffer = io.BytesIO()
        zipfile.ZipFile(buffer, "w").close()
        _replace(
            case.npz,
            {
                "empty": b"",
                "text": "not a checkpoint\n",
                "missing": None,
                "npy": _npy(np.zeros(3, np.float32)),
                "pickle": b"\x80\x04K\x01.",
                "zip of nothing": buffer.getvalue(),
            }[what],
        )
    return f"npz {what}"


def _claim_huge_entry_sizes(path: Path) -> None:
    """Every entry's uncompressed size, in the central directory, claimed as 2**32 - 2."""
    data = bytearray(path.read_bytes())
    i = data.find(b"PK\x01\x02")
    while i >= 0:
        data[i + 24 : i + 28] = (2**32 - 2).to_bytes(4, "little")
        i = data.find(b"PK\x01\x02", i + 4)
    path.write_bytes(bytes(data))


def latest_damaged(rng, case):
    """latest.json as anything but what toy writes."""
    pointer = json.loads(case.latest.read_text())
    what = rng.choice(
        [
            "invalid",
            "empty",
            "list",
            "null",
            "string",
            "deep",
            "file odd",
            "file path",
            "file missing",
            "no file",
            "written odd",
            "written path",
            "written long",
            "written not list",
            "directory",
            "missing",
            "symlink out",
            "not utf-8",
        ]
    )
    if what == "file odd":
        pointer["file"] = _odd(rng)
    elif what == "file path":
        pointer["file"] = _a_path(rng, case)
    elif what == "file missing":
        pointer["file"] = "step-00000005.npz"
    elif what == "no file":
        del pointer["file"]
    elif what == "written odd":
        pointer["written"] = [rng.choice([None, 1, [], CHECKPOINT, CHECKPOINT.upper()]), CHECKPOINT]
    elif what == "written path":
        pointer["written"] = [_a_path(rng, case), CHECKPOINT]
    elif what == "written long":
        pointer["written"] = [f"step-{i:08d}.npz" for i in range(20000)]
    elif what == "written not list":
        pointer["written"] = _odd(rng)
    text = {
        "invalid": '{"file": ',
        "empty": "",
        "list": "[]",
        "null": "null",
        "string": '"x"',
        "deep": "[" * 100000 + "]" * 100000,
    }.get(what, json.dumps(pointer))
    if what == "directory":
        _replace(case.latest, None)
        case.latest.mkdir()
    elif what == "missing":
        _replace(case.latest, None)
    elif what == "symlink out":
        _replace(case.latest, None)
        case.latest.symlink_to(case.workdir / "outside" / "latest.json")
    elif what == "not utf-8":
        _replace(case.latest, b"\xff" + text.encode())
    else:
        _replace(case.latest, text)
    return f"latest.json {what}"


def written_points_out(rng, case):
    """A file latest.json lists as written (so pruned after the next save) that
    is a symlink to a file outside the run, or a folder: pruning must remove
    at most the link."""
    name = rng.choice(["step-00000001.npz", "step-00000002.npz", "step-00000005.npz"])
    target = case.workdir / "outside" / "sentinel.npz"
    _replace(case.folder / name, None)
    if rng.random() < 0.7:
        (case.folder / name).symlink_to(target)
    else:
        (case.folder / name).mkdir()
        (case.folder / name / "inside.txt").write_text("a folder's file\n")
    pointer = json.loads(case.latest.read_text())
    pointer["written"] = [name, *pointer["written"]]
    case.latest.write_text(json.dumps(pointer))
    return f"written {name} is a symlink out or a folder"


def where_toy_writes(rng, case):
    """Something already where the resume will write: a checkpoint or its
    temporary file as a symlink out of the run, or a folder."""
    name = rng.choice(
        ["step-00000004.npz", "step-00000004.npz.tmp", "latest.json.tmp", "step-00000006.npz", "step-00000006.npz.tmp"]
    )
    _replace(case.folder / name, None)
    if rng.random() < 0.7:
        (case.folder / name).symlink_to(case.workdir / "outside" / "sentinel.npz")
        return f"{name} a symlink out"
    (case.folder / name).mkdir()
    return f"{name} a folder"


def other_runs_file(rng, case):
    """A checkpoint no pointer names (another run's, or the user's): never pruned."""
    shutil.copyfile(case.npz, case.folder / rng.choice(["step-00000001.npz", "step-00000002.npz"]))
    return "another run's checkpoint beside"


def folder_damaged(rng, case):
    what = rng.choice(["no checkpoint folder", "checkpoint folder a file", "empty folder"])
    shutil.rmtree(case.folder)
    if what == "checkpoint folder a file":
        case.folder.write_text("not a folder\n")
    elif what == "empty folder":
        case.folder.mkdir()
    return what


def events_damaged(rng, case):
    """events.jsonl, which a resume cuts back to the checkpoint's step."""
    events = case.run / "events.jsonl"
    lines = events.read_text().splitlines()
    what = rng.choice(
        [
            "list line",
            "string step",
            "null step",
            "cut line",
            "not utf-8",
            "directory",
            "missing",
            "huge step",
            "nested",
        ]
    )
    bad = {
        "list line": "[1, 2]",
        "string step": '{"step": "x"}',
        "null step": '{"step": null}',
        "cut line": '{"step": 2, "lo',
        "huge step": '{"step": 1e999}',
        "nested": "[" * 100000,
        "not utf-8": '{"step": 1, "x": "\udcff"}',
    }
    if what == "directory":
        _replace(events, None)
        events.mkdir()
    elif what == "missing":
        _replace(events, None)
    else:
        lines.insert(rng.randrange(len(lines) + 1), bad[what])
        data = "\n".join(lines).encode("utf-8", "surrogateescape") + b"\n"
        events.write_bytes(data)
    return f"events.jsonl {what}"


def resume_elsewhere(rng, case):
    """--resume naming the checkpoint file, the folder, a copy of the file
    outside any run (a download), or something that is not a run."""
    downloads = case.workdir / "downloads"
    downloads.mkdir(exist_ok=True)
    copy_ = downloads / rng.choice([CHECKPOINT, "x.npz", "checkpoint"])
    choices = [
        "run/checkpoint",
        f"run/checkpoint/{CHECKPOINT}",
        "downloads",
        str(case.run.resolve()),
        "nowhere",
        "run/config.json",
        "run/checkpoint/latest.json",
        ".",
    ]
    case.resume = rng.choice(choices + [str(copy_.relative_to(case.workdir))] * 3)
    if case.resume.startswith("downloads/"):
        shutil.copyfile(case.npz, copy_)
    return f"--resume {case.resume}"


# options a resume may give again (how the run is carried out), and ones that
# would change what it computes
MAY_CHANGE = [
    ["--threads", "1"],
    ["--keep", "3"],
    ["--keep", "1"],
    ["--save-every", "1"],
    ["--save-every", "0"],
    ["--json"],
]
MAY_NOT = [
    ["--steps", "1"],
    ["--steps", "2"],
    ["--steps", "3"],
    ["--steps", "8"],
    ["--steps", "9"],
    ["--seq", "8"],
    ["--seq", "16"],
    ["--out", "run"],
    ["--overwrite"],
    ["--d-model", "64"],
    ["--seed", "1"],
    ["--batch", "4"],
]


def changed_options(rng, case):
    """Options given again on resume, or a recipe named before --resume."""
    if rng.random() < 0.1:
        case.recipe = [rng.choice(["vit-tiny", "from-scratch", "lora"])]
        return f"recipe {case.recipe[0]}"
    flags = rng.choice(MAY_CHANGE if rng.random() < 0.6 else MAY_NOT)
    case.flags += flags
    return " ".join(flags)


# (mutation, weight); the content ones change the record or arrays before the
# file is written, the others change files on disk after
CONTENT = [
    (state_field_odd, 6),
    (state_field_dropped, 2),
    (state_step, 4),
    (state_losses, 3),
    (state_rng, 5),
    (state_args, 4),
    (state_fingerprints, 1),
    (state_format, 1),
    (state_raw, 4),
    (array_dropped, 2),
    (array_renamed, 2),
    (array_added, 1),
    (array_reshaped, 3),
    (array_dtype, 3),
    (array_values, 5),
    (array_claims, 2),
]
ON_DISK = [
    (npz_cut, 2),
    (npz_flipped, 3),
    (npz_replaced, 4),
    (latest_damaged, 8),
    (written_points_out, 3),
    (where_toy_writes, 3),
    (other_runs_file, 4),
    (folder_damaged, 1),
    (events_damaged, 5),
    (resume_elsewhere, 4),
    (changed_options, 10),
]


def _write_checkpoint(case: Case) -> None:
    if isinstance(case.state, dict):
        record = _record(case.state)
    else:
        record = case.state if isinstance(case.state, np.ndarray) else np.frombuffer(case.state, np.uint8)
    entries = {name: _npy(array) for name, array in case.arrays.items()}
    entries[STATE] = _npy(record)
    entries.update(case.entries)
    _replace(case.npz, None)
    _write_npz(case.npz, entries)


# ---- what must hold after the resume ------------------------------------------


def _snapshot(workdir: Path) -> dict[str, str]:
    """Every file and link under workdir: relative path -> what it is."""
    seen = {}
    for folder, dirs, files in os.walk(workdir):
        for name in dirs + files:
            path = Path(folder) / name
            rel = str(path.relative_to(workdir))
            if path.is_symlink():
                seen[rel] = "-> " + os.readlink(path)
            elif path.is_file():
                seen[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
            else:
                seen[rel] = "dir"
    return seen


# what a resume may rewrite: the run's own files at the top of its folder
RUN_FILES = ("config.json", "events.jsonl", "loss.svg", "model.gguf", "adapter.gguf", "merged.gguf")


def _owned(case: Case) -> set[str]:
    """The paths the run owns, so that a resume may change or prune them: its
    run files, latest.json, and the checkpoints latest.json lists as written
    (or that the run writes on)."""
    owned = {f"run/{name}" for name in RUN_FILES}
    owned |= {"run/checkpoint/latest.json", f"run/checkpoint/{CHECKPOINT}"}
    owned |= {f"run/checkpoint/step-{k:08d}.npz" for k in range(STOP_AFTER + 1, 9)}
    try:
        pointer = json.loads(case.latest.read_text())
        owned |= {f"run/checkpoint/{name}" for name in pointer.get("written", []) if isinstance(name, str)}
    except (OSError, ValueError, RecursionError, AttributeError, TypeError):
        pass
    return owned


def _judge(rc: int, lines: list[str], before: dict, after: dict, owned: set[str], grew: int) -> None:
    """Raise AssertionError unless the outcome is one a user may see."""
    if rc == 2:
        assert len(lines) == 1 and lines[0].startswith("toy-train: error: "), f"exit 2 with {lines}"
        changed = sorted(p for p in before.keys() | after.keys() if before.get(p) != after.get(p))
        assert not changed, f"refused ({lines[0]}) but changed {changed[:5]}"
    elif rc == 130:
        assert lines and lines[-1].startswith("toy-train: "), f"stopped, but {lines[-3:]}"
    else:
        assert rc == 0, f"exit {rc}: {lines[-3:]}"
    lost = sorted(
        p
        for p in before
        if p not in owned and before[p] != after.get(p) and not any(p.startswith(o + "/") for o in owned)
    )
    assert not lost, f"exit {rc}, but a file the run does not own changed or went: {lost[:5]}"
    assert grew <= MAX_GROWTH_BYTES, f"exit {rc}, after reading {grew >> 20} MiB: inflated before checked"


def _resume(case: Case, argv: list[str]):
    """The case as the harness calls it: toy-train run in this process, then
    what must hold checked (AssertionError); a refusal is raised again as
    InputError, so that the harness counts it, under its message."""

    def resume():
        from toy.core.errors import InputError

        before, owned = _snapshot(case.workdir), _owned(case)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss << 10
        rc, lines = toy_train(argv, seconds=CASE_SECONDS)
        grew = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss << 10) - peak
        _judge(rc, lines, before, _snapshot(case.workdir), owned, grew)
        if rc == 2:
            raise InputError(lines[0].removeprefix("toy-train: error: "))

    resume.__name__ = f"toy-train {' '.join(argv)[:120]} [{'; '.join(case.done)}]"
    return resume


def make_case(rng, workdir):
    recipe = rng.choices(list(RECIPES), weights=[3, 1])[0]
    b = base(recipe)
    shutil.copytree(b.run, workdir / "run", symlinks=True)
    case = Case(workdir, b, dict(b.arrays), copy.deepcopy(b.state))
    # sentinels: files the run does not own, beside it and inside its folders
    (workdir / "outside").mkdir()
    (workdir / "outside" / "sentinel.npz").write_bytes(case.npz.read_bytes())
    (workdir / "outside" / "latest.json").write_text('{"a user\'s": "file"}\n')
    (workdir / "model.gguf").write_text("a user's model beside the run\n")
    (workdir / "events.jsonl").write_text('{"step": 1}\n')
    (case.run / "notes.txt").write_text("a user's notes in the run folder\n")
    (case.folder / "README.txt").write_text("a user's file in the checkpoint folder\n")

    pool = CONTENT + ON_DISK
    chosen = rng.choices([m for m, _ in pool], weights=[w for _, w in pool], k=rng.randint(1, 3))
    contents = [m for m in chosen if m in dict(CONTENT)]
    for mutation in contents:
        _apply(mutation, rng, case)
    if contents:
        _write_checkpoint(case)
    for mutation in chosen:
        if mutation not in contents:
            _apply(mutation, rng, case)
    if rng.random() < 0.1:
        # a new run over the damaged one: --overwrite removes only what latest.json lists
        argv = [*RECIPES[recipe], "--out", "run", "--overwrite", "--steps", "2"]
        case.done.append("a new run with --overwrite")
    else:
        argv = [*case.recipe, "--resume", case.resume, *case.flags]
    return _resume(case, argv)


def _apply(mutation, rng, case: Case) -> None:
    """One mutation; one that does not apply to what an earlier one left (a
    field it dropped, a record no longer JSON, a file gone) is skipped."""
    try:
        case.done.append(mutation(rng, case))
    except (KeyError, TypeError, AttributeError, IndexError, ValueError, OSError, RecursionError):
        case.done.append(f"({mutation.__name__} skipped)")
