"""Corrupt GGUF files never take toy down: reading the config, realizing a
LoRA on the file and training a step, and reading its tokenizer either work
or raise ToyError with a one-line message -- no other exception, no abort,
no hang. tests/fuzz/gguf_mutate.py makes the files; each case runs in a
child process so that a crash is seen and reported, not suffered."""

from pathlib import Path

import pytest

from fuzz.gguf_mutate import CASES_DIR, _write_num, fuzz, parse_layout, replay, set_shape
from fuzz.seeds import write_seeds

# about 20 s on the 2-core development machine (plain build)
CASES = 2500


def details(report) -> str:
    lines = [f"{case} {reader}: {why} (mutations {done})" for case, reader, why, done in report.bad]
    lines += [f"{case}: crashed with exit {rc}\n{tail}" for case, rc, tail in report.crashes]
    lines += [f"{case}: hung" for case in report.hangs]
    return "\n".join(lines)


def test_a_seeded_fuzz_run_ends_in_toy_errors_or_success_only(tmp_path):
    report = fuzz(CASES, seed=0, findings=tmp_path / "findings", timeout=180)
    assert report.cases == CASES
    assert report.failures == 0, details(report) + f"\ninputs saved in {tmp_path / 'findings'}"
    # the mutations reach both ends: files refused, and files that train
    assert report.toy_errors > CASES // 2
    assert report.accepted > CASES // 50


def edited_seed(tmp_path, seed, change) -> Path:
    """A seed file with one field changed by change(data, layout)."""
    path, _ = write_seeds(tmp_path / "seeds")[seed]
    data = bytearray(path.read_bytes())
    change(data, parse_layout(bytes(data)))
    out = tmp_path / f"edited-{seed}.gguf"
    out.write_bytes(data)
    return out


def assert_refused_cleanly(path, *readers):
    report = replay([path])
    assert report.failures == 0, details(report)
    assert report.accepted == 0
    for reader in readers:
        assert any(m.startswith(reader + ": ") for m in report.messages), report.messages


# Under UBSan these stopped the process inside ggml's GGUF parser, where the
# type landed in an enum before its range was checked (vendor patch 0006).
@pytest.mark.parametrize(
    "key,value",
    [
        ("llama.block_count", 41),
        ("llama.block_count", 0xFFFFFFFF),
        ("tokenizer.ggml.tokens", 0x80000000),
        ("general.architecture", 16),
    ],
)
def test_a_key_type_out_of_range_is_refused(tmp_path, key, value):
    path = edited_seed(tmp_path, "f32-tokenizer", lambda data, lay: _write_num(data, lay.kv_types[key], value))
    assert_refused_cleanly(path, "config", "lora", "tokenizer")


@pytest.mark.parametrize("value", [43, 255, 0x80000000, 0xFFFFFFFF])
def test_a_tensor_type_out_of_range_is_refused(tmp_path, value):
    path = edited_seed(tmp_path, "quantized", lambda data, lay: _write_num(data, lay.tensors[1]["type"], value))
    assert_refused_cleanly(path, "config", "lora")


def test_a_name_with_a_line_break_still_gives_a_one_line_error(tmp_path):
    def break_architecture(data, lay):
        at, n, _ = next(s for s in lay.strings if data[s[0] : s[0] + s[1]] == b"llama")
        data[at + 2] = ord("\n")

    path = edited_seed(tmp_path, "f32-tokenizer", break_architecture)
    assert_refused_cleanly(path, "config", "lora")


# These reached ggml_get_rows / ggml_mul_mat with a third dimension and
# aborted on their asserts: tinynn checked only the first two.
@pytest.mark.parametrize(
    "seed,name,shape",
    [
        ("f32-tokenizer", "token_embd.weight", [32, 2, 150]),
        ("f32-tokenizer", "output.weight", [32, 1, 300]),
        ("f32-tokenizer", "output.weight", [32, 150, 2]),
        ("quantized", "token_embd.weight", [32, 32, 2]),
    ],
)
def test_a_tensor_with_an_extra_dimension_is_refused(tmp_path, seed, name, shape):
    def reshape(data, lay):
        tensor = next(t for t in lay.tensors if t["name_bytes"] == name.encode())
        assert set_shape(data, lay, tensor, shape)

    path = edited_seed(tmp_path, seed, reshape)
    assert_refused_cleanly(path, "config", "lora")


def test_saved_cases_are_refused_cleanly():
    cases = sorted(CASES_DIR.glob("*.gguf"))
    report = replay(cases)
    assert report.failures == 0, details(report)
