"""toy-train lora on SmolLM2-135M Q4_1, as a user runs it."""

import json

import gguf
import numpy as np
import pytest

import reference_llama as ref
from cli_helpers import GATE_THREADS, golden_log, toy_train
from gguf_fixtures import write_llama_gguf

LORA_GATE = ("lora", "--threads", GATE_THREADS, "--steps", "8", "--seq", "32", "--batch", "2")


def test_lora_gate_matches_the_golden_log_and_writes_an_adapter(smollm2, tmp_path):
    out = tmp_path / "run"
    result = toy_train(*LORA_GATE, "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert result.stdout == golden_log("lora-smollm2-cpu.txt")

    reader = gguf.GGUFReader(out / "adapter.gguf")
    f = reader.fields
    assert bytes(f["general.type"].parts[-1]).decode() == "adapter"
    assert bytes(f["adapter.type"].parts[-1]).decode() == "lora"
    assert float(f["adapter.lora.alpha"].parts[-1][0]) == 16.0
    shapes = {t.name: tuple(int(n) for n in t.shape) for t in reader.tensors}
    # llama.cpp's layout: lora_a ne = [d_in, rank], lora_b ne = [rank, d_out]
    assert shapes["blk.0.attn_q.weight.lora_a"] == (576, 8)
    assert shapes["blk.0.attn_q.weight.lora_b"] == (8, 576)
    assert len(shapes) == 30 * 2
    config = json.loads((out / "config.json").read_text())
    assert config["lora"] == {"rank": 8, "alpha": 16.0, "targets": ["q"], "base_compute": "fast"}


# each CPU level and the qgemm variant that is its own (kernels.h)
LEVEL_VARIANTS = {"haswell": "avx2", "alderlake": "avxvnni", "icelake": "avx512", "sapphirerapids": "amx"}


@pytest.mark.parametrize("level", LEVEL_VARIANTS)
def test_every_cpu_level_gives_the_golden_bytes(smollm2, tmp_path, monkeypatch, level):
    """toy's kernels give the same bits in every variant (tinynn/cpu/kernels.h):
    bounded to a Haswell's AVX2, an Alder Lake's AVX-VNNI, an Ice Lake's
    AVX-512 or a Sapphire Rapids' AMX, the LoRA gate is the same bytes. A
    level this CPU lacks would only repeat a lower one: it skips."""
    from toy.native.library import library

    if not library("cpu").tnn_cpu_kernel_runs(b"qgemm", LEVEL_VARIANTS[level].encode()):
        pytest.skip(f"this CPU lacks {level}'s qgemm variant ({LEVEL_VARIANTS[level]})")
    monkeypatch.setenv("TNN_CPU_VARIANT", level)
    result = toy_train(*LORA_GATE, "--out", str(tmp_path / "run"))
    assert result.returncode == 0, result.stderr
    assert result.stdout == golden_log("lora-smollm2-cpu.txt")


def test_lora_learns_a_repeated_text(smollm2, tmp_path):
    text = tmp_path / "facts.txt"
    text.write_text("The capital of Zorbia is Quintelle. " * 40)
    result = toy_train(
        "lora",
        "--corpus",
        str(text),
        "--steps",
        "12",
        "--seq",
        "16",
        "--batch",
        "2",
        "--targets",
        "q,v",
        "--lr",
        "2e-3",
        "--json",
        "--out",
        str(tmp_path / "run"),
    )
    assert result.returncode == 0, result.stderr
    losses = json.loads(result.stdout)["losses"]
    assert np.mean(losses[-3:]) < 0.5 * np.mean(losses[:3]), losses


def assert_input_error(result, *phrases):
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    for phrase in phrases:
        assert phrase in lines[0], lines[0]


def test_missing_model(tmp_path):
    assert_input_error(toy_train("lora", "--model", str(tmp_path / "nope.gguf")), "not found", "--model")


def test_not_a_gguf(tmp_path):
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"this is not a gguf file at all" * 10)
    assert_input_error(toy_train("lora", "--model", str(bad)), "not a GGUF")


def test_truncated_gguf(smollm2, tmp_path):
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(smollm2.read_bytes()[:40_000_000])
    assert_input_error(toy_train("lora", "--model", str(cut)), "truncated")


def tiny_gguf(tmp_path, arch="llama", types=None, **changes):
    cfg = ref.Config(vocab=300, d_model=32, n_layers=1, n_heads=2, n_kv_heads=1, d_ff=64, untied=True)
    params = ref.init_params(cfg, np.random.default_rng(0))
    params.update(changes)
    return write_llama_gguf(tmp_path / "tiny.gguf", params, cfg, arch=arch, types=types)


def test_unsupported_architecture(tmp_path):
    path = tiny_gguf(tmp_path, arch="gpt2")
    assert_input_error(
        toy_train("lora", "--model", str(path)), "unsupported architecture 'gpt2': toy trains llama, qwen2, qwen3"
    )


@pytest.mark.parametrize(
    ("arch", "why"),
    [
        ("nemotron_h_moe", "mixture-of-experts layers (relu-squared experts"),
        ("mamba", "GGML_OP_SSM_SCAN, which ggml cannot differentiate"),
        ("rwkv7", "GGML_OP_RWKV_WKV7, which ggml cannot differentiate"),
    ],
)
def test_a_family_whose_layers_toy_cannot_train_yet_is_refused_by_name(tmp_path, arch, why):
    path = tiny_gguf(tmp_path, arch=arch)
    assert_input_error(
        toy_train("lora", "--model", str(path)), f"architecture '{arch}' cannot be trained yet: its", why
    )


def test_unsupported_tensor_type(tmp_path):
    path = tiny_gguf(tmp_path, types={"blk.0.attn_q.weight": gguf.GGMLQuantizationType.BF16})
    assert_input_error(toy_train("lora", "--model", str(path)), "blk.0.attn_q.weight", "BF16".lower())


def test_misshapen_tensor(tmp_path):
    path = tiny_gguf(tmp_path, **{"blk.0.ffn_up.weight": np.zeros((64, 31))})
    assert_input_error(toy_train("lora", "--model", str(path)), "blk.0.ffn_up.weight", "shape")


@pytest.mark.parametrize("rank,phrase", [("0", "from 1 to"), ("33", "larger than")])
def test_bad_rank(tmp_path, rank, phrase):
    path = tiny_gguf(tmp_path)
    assert_input_error(toy_train("lora", "--model", str(path), "--rank", rank), phrase)


def test_unknown_target(tmp_path):
    path = tiny_gguf(tmp_path)
    assert_input_error(toy_train("lora", "--model", str(path), "--targets", "q,zz"), "unknown LoRA target 'zz'")


def test_corpus_shorter_than_one_sequence(tmp_path):
    path = tiny_gguf(tmp_path)
    tokens = tmp_path / "few.tok"
    np.arange(10, dtype="<i4").tofile(tokens)
    assert_input_error(toy_train("lora", "--model", str(path), "--corpus", str(tokens)), "10 tokens")


def test_model_flags_are_refused_for_lora(tmp_path):
    path = tiny_gguf(tmp_path)
    assert_input_error(toy_train("lora", "--model", str(path), "--d-model", "64"), "--d-model")


def test_lora_on_a_tiny_gguf_runs_with_a_token_corpus(tmp_path):
    path = tiny_gguf(
        tmp_path,
        types={
            "blk.0.attn_q.weight": gguf.GGMLQuantizationType.Q8_0,
            "blk.0.ffn_down.weight": gguf.GGMLQuantizationType.Q4_0,
        },
    )
    tokens = tmp_path / "t.tok"
    np.tile(np.arange(300, dtype="<i4"), 4).tofile(tokens)
    result = toy_train(
        "lora",
        "--model",
        str(path),
        "--corpus",
        str(tokens),
        "--steps",
        "3",
        "--targets",
        "q,down",
        "--rank",
        "4",
        "--out",
        str(tmp_path / "run"),
    )
    assert result.returncode == 0, result.stderr
    assert len(result.stdout.splitlines()) == 3


def token_corpus(tmp_path):
    tokens = tmp_path / "t.tok"
    np.random.default_rng(0).integers(0, 300, 400).astype("<i4").tofile(tokens)
    return str(tokens)


def test_the_flags_peft_and_llama_cpp_users_type_mean_the_same(tmp_path):
    path, corpus = tiny_gguf(tmp_path), token_corpus(tmp_path)
    ours = toy_train(
        "lora",
        "--model",
        str(path),
        "--lr",
        "2e-3",
        "--rank",
        "4",
        "--alpha",
        "8",
        "--targets",
        "q,v",
        "--threads",
        "1",
        "--steps",
        "2",
        "--seq",
        "8",
        "--batch",
        "1",
        "--corpus",
        corpus,
        "--out",
        str(tmp_path / "ours"),
    )
    theirs = toy_train(
        "lora",
        "-m",
        str(path),
        "--learning-rate",
        "2e-3",
        "--lora-r",
        "4",
        "--lora-alpha",
        "8",
        "--target-modules",
        "q_proj,v_proj",
        "-t",
        "1",
        "--steps",
        "2",
        "--seq",
        "8",
        "--batch",
        "1",
        "--corpus",
        corpus,
        "--out",
        str(tmp_path / "theirs"),
    )
    assert ours.returncode == 0 and theirs.returncode == 0, theirs.stderr
    assert theirs.stdout == ours.stdout
    config = json.loads((tmp_path / "theirs/config.json").read_text())
    assert config["lora"]["rank"] == 4 and config["lora"]["targets"] == ["q", "v"]


@pytest.mark.parametrize("spelling", ["all", "all-linear"])
def test_all_targets_adapts_the_seven_projections(tmp_path, spelling):
    result = toy_train(
        "lora",
        "--model",
        str(tiny_gguf(tmp_path)),
        "--targets",
        spelling,
        "--steps",
        "1",
        "--seq",
        "8",
        "--batch",
        "1",
        "--corpus",
        token_corpus(tmp_path),
        "--out",
        str(tmp_path / "run"),
    )
    assert result.returncode == 0, result.stderr
    targets = json.loads((tmp_path / "run/config.json").read_text())["lora"]["targets"]
    assert targets == ["q", "k", "v", "o", "gate", "up", "down"]
