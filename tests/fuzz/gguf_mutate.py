"""A seeded mutation fuzzer for toy's GGUF reading.

Each case takes one seed file (fuzz/seeds.py), applies one to three
mutations chosen by random.Random(f"{seed}:{case}") -- bit flips, bytes
overwritten, inserted or deleted, truncation, and structural ones that know
the GGUF layout: counts, lengths, dimensions, types and key values set to
edge values, dimensions swapped, tensors retyped or renamed -- and feeds the
result to what reads GGUFs in toy:

    toy.native.session.read_gguf_config(path)
    toy.recipes.LoRA().realize(path, ...) and one training step
    toy.formats.donor.donor_embedding(path, ...), the warm start's donor
    toy.text.tokenizer.GGUFTokenizer.from_gguf(path), when the seed has a tokenizer

Each of them must either accept the file or raise ToyError with a one-line
message. The cases run in a child process, so that a crash (an abort, a
sanitizer report, a segfault) or a hang is caught, saved with its seed and
case number, and the run goes on from the next case.

    python -m tests.fuzz.gguf_mutate --cases 20000 --seed 1
    python -m tests.fuzz.gguf_mutate --replay tests/fuzz/cases/*.gguf
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
CASES_DIR = HERE / "cases"

# ---- the layout of a well-formed seed --------------------------------------

_SCALAR = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<B", 10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9


@dataclass
class Num:
    """A number in the file: where, its struct format, and what it is."""

    offset: int
    fmt: str
    role: str


@dataclass
class Layout:
    nums: list[Num] = field(default_factory=list)
    strings: list[tuple[int, int, str]] = field(default_factory=list)  # offset, length, role
    tensors: list[dict] = field(default_factory=list)  # name (offset, len), ne [Num], type Num
    kv_values: dict[str, Num] = field(default_factory=dict)  # scalar key -> its value
    kv_types: dict[str, Num] = field(default_factory=dict)  # key -> its type (for arrays,
    #                                                           the element type)
    infos_end: int = 0  # where the tensor infos end (padding follows)
    data_start: int = 0


def parse_layout(data: bytes) -> Layout:
    """Where every field of a well-formed GGUF v3 lies."""
    lay = Layout()
    pos = 0

    def num(fmt, role):
        nonlocal pos
        lay.nums.append(Num(pos, fmt, role))
        value = struct.unpack_from(fmt, data, pos)[0]
        pos += struct.calcsize(fmt)
        return value

    def string(role):
        nonlocal pos
        n = num("<Q", role + "_len")
        lay.strings.append((pos, n, role))
        text = data[pos : pos + n].decode("utf-8", "replace")
        pos += n
        return text

    pos = 4
    num("<I", "version")
    n_tensors = num("<q", "n_tensors")
    n_kv = num("<q", "n_kv")
    alignment = 32
    for _ in range(n_kv):
        key = string("key")
        lay.kv_types[key] = Num(pos, "<I", "kv_type")
        kind = num("<I", "kv_type")
        if kind == _ARRAY:
            lay.kv_types[key] = Num(pos, "<I", "arr_type")
            elem = num("<I", "arr_type")
            count = num("<Q", "arr_count")
            for _ in range(count):
                if elem == _STRING:
                    string("arr_str")
                else:
                    num(_SCALAR[elem], "arr_value")
        elif kind == _STRING:
            string("str_value")
        else:
            lay.kv_values[key] = Num(pos, _SCALAR[kind], "kv_value")
            value = num(_SCALAR[kind], "kv_value")
            if key == "general.alignment":
                alignment = value
    for _ in range(n_tensors):
        name_at = pos + 8
        name = string("tensor_name")
        dims_at = pos
        n_dims = num("<I", "n_dims")
        ne = []
        for _ in range(n_dims):
            ne.append(Num(pos, "<q", "ne"))
            num("<q", "ne")
        ttype = Num(pos, "<I", "tensor_type")
        num("<I", "tensor_type")
        num("<Q", "tensor_offset")
        lay.tensors.append(
            {
                "name": (name_at, len(name.encode())),
                "name_bytes": name.encode(),
                "dims_at": dims_at,
                "ne": ne,
                "type": ttype,
            }
        )
    lay.infos_end = pos
    lay.data_start = (pos + alignment - 1) // alignment * alignment
    return lay


# ---- mutations -------------------------------------------------------------

_BITS = {"<B": 8, "<b": 8, "<H": 16, "<h": 16, "<I": 32, "<i": 32, "<Q": 64, "<q": 64}


def _edge_values(rng: random.Random, original: int, bits: int, file_size: int) -> int:
    top = (1 << bits) - 1
    choices = [
        0,
        1,
        2,
        3,
        7,
        8,
        16,
        31,
        32,
        33,
        48,
        64,
        255,
        256,
        4096,
        65535,
        65536,
        (1 << 24),
        (1 << 24) + 1,
        top >> 1,
        (top >> 1) + 1,
        top,
        top - 1,
        original + 1,
        original - 1,
        original * 2,
        original // 2,
        original * 3,
        file_size,
        file_size + 1,
        file_size - original,
        (1 << 31) - 1,
        1 << 31,
        (1 << 32) - 1,
        rng.getrandbits(bits),
        rng.randrange(0, 1024),
    ]
    return rng.choice(choices) & top


def _write_num(buf: bytearray, num: Num, value) -> None:
    if num.offset + struct.calcsize(num.fmt) > len(buf):
        return
    if num.fmt in ("<f", "<d"):
        struct.pack_into(num.fmt, buf, num.offset, value)
    else:
        bits = _BITS[num.fmt]
        unsigned = {8: "<B", 16: "<H", 32: "<I", 64: "<Q"}[bits]
        struct.pack_into(unsigned, buf, num.offset, int(value) & ((1 << bits) - 1))


def _read_num(buf: bytes, num: Num):
    if num.offset + struct.calcsize(num.fmt) > len(buf):
        return 0  # cut off by an earlier mutation
    return struct.unpack_from(num.fmt, buf, num.offset)[0]


def _meta_position(rng, buf, lay) -> int:
    """A byte offset, mostly in the header, key/values and tensor infos."""
    end = min(lay.data_start, len(buf)) if rng.random() < 0.85 else len(buf)
    return rng.randrange(0, max(1, end))


def m_bit_flips(rng, buf, lay):
    for _ in range(rng.randint(1, 4)):
        at = _meta_position(rng, buf, lay)
        if at < len(buf):
            buf[at] ^= 1 << rng.randrange(8)
    return "bit flips"


def m_random_bytes(rng, buf, lay):
    at = _meta_position(rng, buf, lay)
    for i in range(rng.randint(1, 8)):
        if at + i < len(buf):
            buf[at + i] = rng.choice([0, 0xFF, 0x7F, 0x80, rng.randrange(256)])
    return "random bytes"


def m_truncate(rng, buf, lay):
    cut = rng.choice([_meta_position(rng, buf, lay), len(buf) - rng.randint(1, 64), rng.randrange(len(buf))])
    del buf[max(0, cut) :]
    return "truncate"


def m_insert(rng, buf, lay):
    at = _meta_position(rng, buf, lay)
    buf[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
    return "insert"


def m_delete(rng, buf, lay):
    at = _meta_position(rng, buf, lay)
    del buf[at : at + rng.randint(1, 16)]
    return "delete"


def m_duplicate(rng, buf, lay):
    start = _meta_position(rng, buf, lay)
    chunk = bytes(buf[start : start + rng.randint(1, 64)])
    at = _meta_position(rng, buf, lay)
    buf[at:at] = chunk
    return "duplicate"


def m_number(rng, buf, lay):
    """A count, length, dimension, type or offset set to an edge value."""
    num = rng.choice([n for n in lay.nums if n.fmt not in ("<f", "<d")])
    if num.offset + struct.calcsize(num.fmt) > len(buf):
        return "number (gone)"
    _write_num(buf, num, _edge_values(rng, _read_num(buf, num), _BITS[num.fmt], len(buf)))
    return f"number {num.role}"


def m_type(rng, buf, lay):
    """A key/value, array element or tensor type set to another value, valid or not."""
    num = rng.choice([n for n in lay.nums if n.role in ("kv_type", "arr_type", "tensor_type")])
    value = rng.choice(
        [
            rng.randrange(-2, 45),
            rng.randrange(0, 13),
            rng.getrandbits(32),
            0x7FFFFFFF,
            0x80000000,
            0xFFFFFFFF,
            13,
            39,
            40,
            41,
            64,
            255,
        ]
    )
    _write_num(buf, num, value)
    return f"type {num.role}={value & 0xFFFFFFFF}"


def m_key_value(rng, buf, lay):
    """A hyper-parameter (block count, widths, heads, rope, eps...) set to an edge value."""
    key = rng.choice(sorted(lay.kv_values))
    num = lay.kv_values[key]
    if num.fmt in ("<f", "<d"):
        value = rng.choice(
            [0.0, -0.0, -1.0, 1.0, float("nan"), float("inf"), float("-inf"), 1e38, 1e-45, _read_num(buf, num) * 2]
        )
    else:
        original = _read_num(buf, num)
        value = rng.choice(
            [
                original + 1,
                original - 1,
                original * 2,
                original // 2,
                0,
                1,
                3,
                5,
                (1 << 24),
                (1 << 24) + 1,
                (1 << 31) - 1,
                -1,
                rng.getrandbits(32),
            ]
        )
    _write_num(buf, num, value)
    return f"value {key}={value}"


def m_swap_dims(rng, buf, lay):
    """Two dimensions of a tensor swapped: the same size, a different shape."""
    t = rng.choice([t for t in lay.tensors if len(t["ne"]) >= 2] or lay.tensors)
    if len(t["ne"]) < 2:
        return "swap dims (none)"
    a, b = t["ne"][0], t["ne"][1]
    va, vb = _read_num(buf, a), _read_num(buf, b)
    _write_num(buf, a, vb)
    _write_num(buf, b, va)
    return "swap dims"


def m_reshape(rng, buf, lay):
    """A tensor given another shape of the same size, with fewer or more
    dimensions ([a, b] -> [a, b/2, 2], [a*b], [a, 1, b]...); the padding
    before the data absorbs the change, so the file still parses."""
    t = rng.choice(lay.tensors)
    ne = [_read_num(buf, n) for n in t["ne"]]
    if len(buf) < lay.data_start or not ne:
        return "reshape (gone)"
    total = 1
    for n in ne:
        total *= n
    a = ne[0]
    if a <= 0 or total <= 0 or total % a or total >= 1 << 62:
        return "reshape (odd shape)"
    shapes = [[total], [a, total // a, 1], [a, 1, total // a], [a, total // a, 1, 1]]
    if total // a % 2 == 0:
        shapes += [[a, total // a // 2, 2], [a, 2, total // a // 2], [a * 2, total // a // 2]]
    if a % 2 == 0:
        shapes += [[a // 2, total // a, 2], [a // 2, 2 * total // a]]
    shape = rng.choice(shapes)
    if not set_shape(buf, lay, t, shape):
        return "reshape (no room)"
    return f"reshape {ne} -> {shape}"


def set_shape(buf: bytearray, lay: Layout, tensor: dict, shape: list[int]) -> bool:
    """Rewrite a tensor's dimensions in place, the padding before the data
    absorbing the change in length (False when it cannot)."""
    new = struct.pack("<I", len(shape)) + b"".join(struct.pack("<q", n) for n in shape)
    start, end = tensor["dims_at"], tensor["dims_at"] + 4 + 8 * len(tensor["ne"])
    grow = len(new) - (end - start)
    if grow > lay.data_start - lay.infos_end:
        return False
    # keep the data where it is: take the growth out of the padding (or give it back)
    pad_at = lay.infos_end
    if grow > 0:
        del buf[pad_at : pad_at + grow]
    else:
        buf[pad_at:pad_at] = bytes(-grow)
    buf[start:end] = new
    return True


def m_retype_same_size(rng, buf, lay):
    """F32 <-> I32, F16 <-> BF16/I16: the data section still adds up."""
    same = {0: [26], 26: [0], 1: [30, 25], 30: [1], 25: [1]}
    candidates = [t for t in lay.tensors if _read_num(buf, t["type"]) in same]
    if not candidates:
        return "retype (none)"
    t = rng.choice(candidates)
    _write_num(buf, t["type"], rng.choice(same[_read_num(buf, t["type"])]))
    return "retype same size"


def m_rename(rng, buf, lay):
    """A tensor's name overwritten with another's (or a neighbour layer's)."""
    at, n = rng.choice(lay.tensors)["name"]
    new = bytearray(rng.choice([t["name_bytes"] for t in lay.tensors if len(t["name_bytes"]) == n]))
    if rng.random() < 0.5 and new.startswith(b"blk."):
        new[4] = ord(rng.choice("0123456789"))
    buf[at : at + n] = new
    return "rename"


def m_string_bytes(rng, buf, lay):
    """Bytes inside a key, a string value or a token set to awkward ones
    (invalid UTF-8, NUL, newline)."""
    at, n, role = rng.choice([s for s in lay.strings if s[1] > 0])
    for _ in range(rng.randint(1, 3)):
        i = at + rng.randrange(n)
        if i < len(buf):
            buf[i] = rng.choice([0x00, 0x0A, 0xFF, 0xC3, 0x80, 0x20])
    return f"string bytes {role}"


MUTATIONS = [
    m_bit_flips,
    m_random_bytes,
    m_truncate,
    m_insert,
    m_delete,
    m_duplicate,
    m_number,
    m_number,
    m_type,
    m_key_value,
    m_key_value,
    m_swap_dims,
    m_reshape,
    m_reshape,
    m_retype_same_size,
    m_rename,
    m_string_bytes,
    m_string_bytes,
]


def mutate(data: bytes, lay: Layout, rng: random.Random) -> tuple[bytes, list[str]]:
    buf = bytearray(data)
    done = []
    for _ in range(rng.choice([1, 1, 1, 2, 2, 3])):
        if len(buf) < 8:
            break
        done.append(rng.choice(MUTATIONS)(rng, buf, lay))
    return bytes(buf), done


# ---- one case: every reader of GGUFs in toy --------------------------------


def _check_error(e: BaseException) -> str | None:
    """None when e is an acceptable failure (a one-line ToyError), else why not."""
    import toy

    if not isinstance(e, toy.ToyError):
        return f"{type(e).__module__}.{type(e).__name__} instead of ToyError: {e!r}"[:400]
    message = str(e)
    if not message or "\n" in message or "\r" in message:
        return f"ToyError message is not one line: {message!r}"[:400]
    return None


def run_readers(path: Path, tokenizer: bool) -> dict:
    """Feed one file to the readers; each result is 'ok', 'error: <message>'
    or 'BAD: <why>' (a failure that is not a one-line ToyError)."""
    import numpy as np

    import toy
    from toy.native.session import read_gguf_config
    from toy.text.tokenizer import GGUFTokenizer

    results = {}

    def attempt(name, fn):
        try:
            fn()
            results[name] = "ok"
            return True
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as e:  # noqa: BLE001 -- a Rust panic is a BaseException
            bad = _check_error(e)
            results[name] = f"BAD: {bad}" if bad else f"error: {e}"
            return False

    attempt("config", lambda: read_gguf_config(path))

    def lora_step():
        lora = toy.recipes.LoRA(threads=1)
        lora.realize(path, None, 2, toy.RecipeOptions(t_seq=8, t_batch=1), targets=("q", "v"))
        ids = np.arange(9, dtype=np.int32).reshape(1, 9) % lora.cfg.vocab
        positions = np.arange(8, dtype=np.int32).reshape(1, 8)
        lora.step(ids[:, :8], positions, ids[:, 1:], toy.adamw_hp(1, 1e-3), True)

    attempt("lora", lora_step)

    def donor():
        from toy.formats.donor import donor_embed_width, donor_embedding

        donor_embedding(path, donor_embed_width(path), 8)

    attempt("donor", donor)
    if tokenizer:

        def tok():
            t = GGUFTokenizer.from_gguf(path)
            t.decode(t.encode("the rain in spain"))

        attempt("tokenizer", tok)
    return results


# ---- the child: runs cases, one line of JSON per case on its own pipe ------


def _case_bytes(seeds: dict, seed: int, case: int) -> tuple[str, bytes, list[str]]:
    rng = random.Random(f"{seed}:{case}")
    name = rng.choice(sorted(seeds))
    data, lay, _ = seeds[name]
    mutated, done = mutate(data, lay, rng)
    return name, mutated, done


def load_seeds(folder: Path) -> dict:
    from .seeds import SEEDS

    seeds = {}
    for name, (_, tokenizer) in SEEDS.items():
        data = (folder / f"{name}.gguf").read_bytes()
        seeds[name] = (data, parse_layout(data), tokenizer)
    return seeds


def worker(args) -> int:
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # anything the libraries print goes to stderr, not the protocol
    work = Path(tempfile.mkdtemp(prefix="toy-fuzz-case-"))
    try:
        if args.replay:
            for i, path in enumerate(args.replay):
                proto.write(json.dumps({"case": i, "start": True}) + "\n")
                results = run_readers(Path(path), tokenizer=True)
                proto.write(json.dumps({"case": i, "results": results}) + "\n")
            return 0
        seeds = load_seeds(Path(args.seeds_dir))
        path = work / "case.gguf"
        for case in range(args.start, args.stop):
            name, data, done = _case_bytes(seeds, args.seed, case)
            path.write_bytes(data)
            proto.write(json.dumps({"case": case, "start": True}) + "\n")
            results = run_readers(path, tokenizer=seeds[name][2])
            proto.write(json.dumps({"case": case, "seed_file": name, "mutations": done, "results": results}) + "\n")
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


# ---- the parent: starts children, watches for crashes and hangs ------------


@dataclass
class Report:
    cases: int = 0
    accepted: int = 0  # cases every reader accepted
    toy_errors: int = 0  # reader results that were one-line ToyErrors
    bad: list = field(default_factory=list)  # non-ToyError or multi-line: (case, detail)
    crashes: list = field(default_factory=list)  # (case, returncode, stderr tail)
    hangs: list = field(default_factory=list)  # case numbers
    messages: Counter = field(default_factory=Counter)
    seconds: float = 0.0

    @property
    def failures(self) -> int:
        return len(self.bad) + len(self.crashes) + len(self.hangs)

    def summary(self) -> str:
        return (
            f"{self.cases} cases in {self.seconds:.1f} s: {self.accepted} accepted, "
            f"{self.toy_errors} ToyErrors, {len(self.bad)} bad errors, "
            f"{len(self.crashes)} crashes, {len(self.hangs)} hangs"
        )


def _worker_command(extra: list[str]) -> list[str]:
    return [sys.executable, "-m", "fuzz.gguf_mutate", "--worker", *extra]


def _run_children(
    make_args,
    first: int,
    stop: int,
    report: Report,
    case_timeout: float,
    on_failure,
    log=None,
    deadline: float | None = None,
) -> None:
    """Run cases first..stop-1 in children, restarting after a crash or hang;
    past `deadline` (time.monotonic) the child is killed and TimeoutError raised."""
    from .harness import HUNG, child_env, watch_child

    env = child_env()
    env.setdefault("OMP_NUM_THREADS", "1")
    next_case = first
    while next_case < stop:
        with tempfile.TemporaryFile() as err:
            child = subprocess.Popen(
                _worker_command(make_args(next_case, stop)),
                stdout=subprocess.PIPE,
                stderr=err,
                env=env,
                start_new_session=True,
            )
            current, hung = None, False
            for msg in watch_child(child, case_timeout, deadline):
                if msg == HUNG:
                    hung = True
                    continue
                if "start" in msg:
                    current = msg["case"]
                    continue
                current = None
                report.cases += 1
                next_case = msg["case"] + 1
                results = msg["results"]
                if all(r == "ok" for r in results.values()):
                    report.accepted += 1
                for reader, r in results.items():
                    if r.startswith("BAD"):
                        report.bad.append((msg["case"], reader, r, msg.get("mutations")))
                        on_failure(msg["case"], f"{reader}: {r}")
                    elif r.startswith("error"):
                        report.toy_errors += 1
                        report.messages[f"{reader}: {r[7:][:90]}"] += 1
                if log and report.cases % 1000 == 0:
                    log(f"  {report.cases} cases ...")
            child.stdout.close()
            rc = child.wait()
            if current is None and not hung:
                if rc != 0:
                    err.seek(0)
                    raise RuntimeError(
                        f"fuzz worker failed outside a case (exit {rc}):\n"
                        + err.read().decode(errors="replace")[-3000:]
                    )
                return
            err.seek(0)
            tail = err.read().decode(errors="replace")[-3000:]
            report.cases += 1
            if hung:
                report.hangs.append(current)
                on_failure(current, f"hang: no answer in {case_timeout} s")
            else:
                report.crashes.append((current, rc, tail))
                on_failure(current, f"crash: exit {rc}\n{tail}")
            next_case = current + 1


def fuzz(
    cases: int,
    seed: int = 0,
    start: int = 0,
    case_timeout: float = 30.0,
    findings: Path | None = None,
    log=None,
    timeout: float | None = None,
) -> Report:
    """Run cases start..start+cases-1 of seed; failing inputs are saved in
    findings. timeout: seconds for the whole run (TimeoutError past it)."""
    deadline = time.monotonic() + timeout if timeout else None
    report = Report()
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="toy-fuzz-seeds-") as tmp:
        from .seeds import write_seeds

        write_seeds(Path(tmp))
        seeds = None

        def on_failure(case, why):
            nonlocal seeds
            if findings is None:
                return
            seeds = seeds or load_seeds(Path(tmp))
            name, data, done = _case_bytes(seeds, seed, case)
            findings.mkdir(parents=True, exist_ok=True)
            stem = f"seed{seed}-case{case}"
            (findings / f"{stem}.gguf").write_bytes(data)
            (findings / f"{stem}.txt").write_text(f"seed file {name}, mutations {done}\n{why}\n")

        def make_args(first, stop):
            return ["--seeds-dir", tmp, "--seed", str(seed), "--start", str(first), "--stop", str(stop)]

        _run_children(make_args, start, start + cases, report, case_timeout, on_failure, log, deadline)
    report.seconds = time.perf_counter() - t0
    return report


def replay(paths: list[Path], case_timeout: float = 30.0) -> Report:
    """Run saved files (e.g. tests/fuzz/cases/*.gguf) through every reader,
    each in a child of its own; the reports name the files."""
    report = Report()
    t0 = time.perf_counter()
    for path in paths:
        one = Report()
        _run_children(
            lambda first, stop, p=str(path): ["--replay", p], 0, 1, one, case_timeout, on_failure=lambda case, why: None
        )
        report.cases += one.cases
        report.accepted += one.accepted
        report.toy_errors += one.toy_errors
        report.messages += one.messages
        report.bad += [(str(path), *b[1:]) for b in one.bad]
        report.crashes += [(str(path), *c[1:]) for c in one.crashes]
        report.hangs += [str(path) for _ in one.hangs]
    report.seconds = time.perf_counter() - t0
    return report


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.fuzz.gguf_mutate", description=__doc__.split("\n\n")[0])
    p.add_argument("--cases", type=int, default=2000, help="how many cases (default 2000)")
    p.add_argument("--seed", type=int, default=0, help="the run's seed (default 0)")
    p.add_argument("--start", type=int, default=0, help="first case number (default 0)")
    p.add_argument(
        "--case-timeout",
        type=float,
        default=30.0,
        help="seconds one case may take before it counts as a hang (default 30)",
    )
    p.add_argument(
        "--findings",
        type=Path,
        default=Path("fuzz-findings"),
        help="where failing inputs are saved (default ./fuzz-findings)",
    )
    p.add_argument("--replay", nargs="+", help="run these files through the readers instead")
    p.add_argument("--messages", action="store_true", help="print the ToyError messages seen, by count")
    # the child's side
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--seeds-dir", help=argparse.SUPPRESS)
    p.add_argument("--stop", type=int, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        return worker(args)
    if args.replay:
        report = replay([Path(x) for x in args.replay], args.case_timeout)
    else:
        report = fuzz(
            args.cases,
            args.seed,
            args.start,
            args.case_timeout,
            args.findings,
            log=lambda s: print(s, file=sys.stderr, flush=True),
        )
    if args.messages:
        for message, n in report.messages.most_common():
            print(f"{n:6d}  {message}")
    for case, reader, why, done in report.bad:
        print(f"BAD case {case} ({reader}, mutations {done}): {why}")
    for case, rc, tail in report.crashes:
        print(f"CRASH case {case}: exit {rc}\n{tail}")
    for case in report.hangs:
        print(f"HANG case {case}")
    print(report.summary())
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main())
