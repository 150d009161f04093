"""LoRA adapters as hostile input, run as a user runs them: toy-generate
--adapter and toy.formats.merge.merge_lora on a tiny llama base. Each adapter here
was found by the adapter fuzzer (tests/fuzz/fuzz_adapter.py) or beside it:
it must end in one line and exit 2 (or a one-line InputError from the
merge, which leaves no file and prints nothing), never in a warning on
stderr, a silently useless adapter or a merged model holding infinities."""

import subprocess
import sys
import warnings

import gguf
import numpy as np
import pytest

import reference_llama as ref
from gguf_fixtures import tiny_tokenizer, write_llama_gguf, write_lora_adapter
from toy import InputError
from toy.formats.merge import merge_lora

Q = gguf.GGMLQuantizationType
CFG = ref.Config(vocab=300, d_model=32, n_layers=1, n_heads=2, n_kv_heads=1, d_ff=64, untied=True)


@pytest.fixture
def base(tmp_path):
    """A tiny llama GGUF with a tokenizer; its attn_q is Q8_0, so that a
    merge "base" requantizes it."""
    params = ref.init_params(CFG, np.random.default_rng(0), scale=0.3)
    return write_llama_gguf(
        tmp_path / "base.gguf", params, CFG, types={"blk.0.attn_q.weight": Q.Q8_0}, tokenizer=tiny_tokenizer(CFG.vocab)
    )


def write_adapter(path, a, b, alpha=16.0, alpha_type=gguf.GGUFValueType.FLOAT32):
    """An adapter of blk.0.attn_q: A (rank, 32) and B (32, rank) in numpy's order."""
    tensors = {"blk.0.attn_q.weight.lora_a": a, "blk.0.attn_q.weight.lora_b": b}
    return write_lora_adapter(path, "llama", tensors, alpha, alpha_type)


def small(rank=4):
    return np.full((rank, 32), 0.1, np.float32), np.full((32, rank), 0.1, np.float32)


def toy_generate(*args):
    return subprocess.run(
        [sys.executable, "-m", "toy.cli.generate", *args], capture_output=True, text=True, timeout=120
    )


def assert_one_line(result, *phrases):
    assert result.returncode == 2, (result.returncode, result.stderr[-2000:])
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr[-2000:]
    assert lines[0].startswith("toy-generate: error: adapter ")
    for phrase in phrases:
        assert phrase in lines[0], lines[0]


def test_a_valid_adapter_generates(tmp_path, base):
    adapter = write_adapter(tmp_path / "adapter.gguf", *small())
    result = toy_generate("hi", "--model", str(base), "--adapter", str(adapter), "--max-new-tokens", "2")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""


# numpy warned "overflow encountered in cast" on stderr before the refusal
def test_an_alpha_beyond_float32_is_refused_in_one_line(tmp_path, base):
    adapter = write_adapter(tmp_path / "adapter.gguf", *small(), alpha=1e39, alpha_type=gguf.GGUFValueType.FLOAT64)
    result = toy_generate("hi", "--model", str(base), "--adapter", str(adapter), "--max-new-tokens", "2")
    assert_one_line(result, "adapter.lora.alpha is 1e+39", "finite in float32")


# 1e-50 is 0 in float32, where the C core holds alpha: toy-generate refused
# "alpha ... got 0.0" without naming the file, and the merge took it and
# wrote the base unchanged
def test_an_alpha_that_is_zero_in_float32_is_refused(tmp_path, base):
    adapter = write_adapter(tmp_path / "adapter.gguf", *small(), alpha=1e-50, alpha_type=gguf.GGUFValueType.FLOAT64)
    result = toy_generate("hi", "--model", str(base), "--adapter", str(adapter), "--max-new-tokens", "2")
    assert_one_line(result, "adapter.lora.alpha is 1e-50", "> 0")
    assert "adapter.lora.alpha is 1e-50" in merge_refused(base, adapter, tmp_path / "merged.gguf", "f32")


# numpy warned "overflow encountered in cast" converting F64 to float32
def test_f64_values_beyond_float32_are_refused_in_one_line(tmp_path, base):
    a, b = small()
    a = a.astype(np.float64)
    a[0, 0] = 1e300
    adapter = write_adapter(tmp_path / "adapter.gguf", a, b)
    result = toy_generate("hi", "--model", str(base), "--adapter", str(adapter), "--max-new-tokens", "2")
    assert_one_line(result, "blk.0.attn_q.weight.lora_a", "NaN or infinite")


def merge_refused(base, adapter, out, dtype):
    """The InputError of a refused merge, which printed nothing and left nothing."""
    before = set(out.parent.iterdir())
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with pytest.raises(InputError) as refused:
            merge_lora(base, adapter, out, dtype)
    assert [str(w.message) for w in seen] == []
    assert set(out.parent.iterdir()) == before
    message = str(refused.value)
    assert "\n" not in message
    return message


# merged weights past 65504 were written to F16 (and Q8_0's F16 scales) as infinity
@pytest.mark.parametrize("dtype,kind", [("f16", "F16"), ("base", "Q8_0")])
def test_a_merge_past_what_the_type_holds_is_refused_and_f32_is_not(tmp_path, base, dtype, kind):
    # alpha / rank * B @ A = 16 * 1000 * 1000: finite in float32, not in F16 nor Q8_0
    adapter = write_adapter(
        tmp_path / "adapter.gguf", np.full((1, 32), 1000.0, np.float32), np.full((32, 1), 1000.0, np.float32)
    )
    message = merge_refused(base, adapter, tmp_path / "merged.gguf", dtype)
    assert message.startswith(f"cannot write {tmp_path / 'merged.gguf'} as {kind}: blk.0.attn_q.weight")
    assert "write f32" in message

    merged = merge_lora(base, adapter, tmp_path / "merged.gguf", "f32")
    weights = {t.name: t.data for t in gguf.GGUFReader(str(merged)).tensors}
    assert np.isfinite(weights["blk.0.attn_q.weight"]).all()
    assert np.abs(weights["blk.0.attn_q.weight"]).max() > 1.5e7


# numpy warned "overflow encountered in multiply" before the merge was refused
def test_a_merge_past_float32_is_refused_without_a_warning(tmp_path, base):
    adapter = write_adapter(
        tmp_path / "adapter.gguf", np.full((1, 32), 1e20, np.float32), np.full((32, 1), 1e20, np.float32)
    )
    message = merge_refused(base, adapter, tmp_path / "merged.gguf", "f32")
    assert "blk.0.attn_q.weight gives values that are not finite" in message


def test_an_adapter_of_experts_on_a_dense_base_is_refused_in_one_line(tmp_path, base):
    """A mixture's ffn_up_exps pairs (3-D, a pair per expert) over a llama
    without experts."""
    pair = {"blk.0.ffn_up_exps.weight.lora_a": np.zeros((4, 4, 32), np.float32)}
    pair["blk.0.ffn_up_exps.weight.lora_b"] = np.zeros((4, 64, 4), np.float32)
    write_lora_adapter(tmp_path / "experts.gguf", "llama", pair, alpha=8.0)
    result = toy_generate("hi", "--model", str(base), "--adapter", str(tmp_path / "experts.gguf"))
    assert_one_line(result, "ffn_up_exps", "the base has no experts")
