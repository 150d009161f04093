"""Phi-3 (GGUF architecture "phi3"), as llama.cpp runs it: the llama block
with NEOX RoPE, q, k, v stored as one attn_qkv [d, q + 2 kv] (their rows
stacked) and gate, up as one ffn_up [d, 2 d_ff] (gate rows first).

A small random-weight transformers Phi3ForCausalLM is written to GGUF as
llama.cpp's converter writes it (qkv_proj and gate_up_proj as they are, no
row permutation), then run by toy: its config, logits and every gradient
(the fused weights' gradients compared fused), LoRA on the q/k/v/gate/up
row ranges of the fused weights (against transformers' gradient rows), a
Q8_0 copy, cached decoding, toy-train full, and llama.cpp, which runs the
file and toy's adapter (written fused, as llama.cpp names it). Then the
same for LongRoPE (Phi-3.5, the 128k models: two factor sets and an
attention factor) and for partial RoPE on top (Phi-4-mini). Skips without
torch and transformers."""

import math
import subprocess
import sys

import numpy as np
import pytest

import toy
from gguf_fixtures import tiny_tokenizer, write_llama_gguf
from hf_compare import (
    ALL_SEVEN,
    LLAMA_LIKE_NAMES,
    assert_cached_decoding_matches,
    assert_toy_matches,
    full_fine_tune,
    gguf_name,
    hf_logits,
    llama_cpp_logits,
    toy_logits,
    trained_adapter,
)
from toy.native.session import read_gguf_config
from toy.recipes import LoRA

gguf = pytest.importorskip("gguf")
torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

T = 48
VOCAB, D_MODEL, N_HEADS, N_KV_HEADS, D_FF = 300, 64, 4, 2, 128
HEAD_DIM = D_MODEL // N_HEADS
Q_WIDTH, KV_WIDTH = N_HEADS * HEAD_DIM, N_KV_HEADS * HEAD_DIM
ROPE_THETA = 10000.0
HF_TO_GGUF = {
    **LLAMA_LIKE_NAMES,
    "lm_head.weight": "output.weight",
    "model.layers.{i}.post_attention_layernorm.weight": "blk.{i}.ffn_norm.weight",
    "model.layers.{i}.self_attn.qkv_proj.weight": "blk.{i}.attn_qkv.weight",
    "model.layers.{i}.mlp.gate_up_proj.weight": "blk.{i}.ffn_up.weight",
}
Q8_0 = gguf.GGMLQuantizationType.Q8_0
# each LoRA slot's rows in the fused weight that holds it: (fused name, first row, rows)
SLOT_ROWS = {
    "attn_q": ("attn_qkv", 0, Q_WIDTH),
    "attn_k": ("attn_qkv", Q_WIDTH, KV_WIDTH),
    "attn_v": ("attn_qkv", Q_WIDTH + KV_WIDTH, KV_WIDTH),
    "ffn_gate": ("ffn_up", 0, D_FF),
    "ffn_up": ("ffn_up", D_FF, D_FF),
}
ALL_TARGETS = ALL_SEVEN


def hf_model(quantize=False, rope=None, max_positions=4096, original=4096):
    """rope: transformers' rope_parameters (default: plain RoPE)."""
    config = transformers.Phi3Config(
        vocab_size=VOCAB,
        hidden_size=D_MODEL,
        intermediate_size=D_FF,
        num_hidden_layers=2,
        num_attention_heads=N_HEADS,
        num_key_value_heads=N_KV_HEADS,
        max_position_embeddings=max_positions,
        original_max_position_embeddings=original,
        rope_parameters=rope or {"rope_type": "default", "rope_theta": ROPE_THETA},
        rms_norm_eps=1e-5,
        tie_word_embeddings=False,
        sliding_window=None,  # llama.cpp runs Phi-3 without its window
        pad_token_id=0,
        bos_token_id=1,
        eos_token_id=2,
    )
    torch.manual_seed(0)
    model = transformers.Phi3ForCausalLM(config).float().eval()
    with torch.no_grad():  # larger weights than the default init: logits worth comparing
        for name, p in model.named_parameters():
            p.copy_(torch.randn_like(p) * (0.1 if p.ndim == 2 else 0.3) + (1.0 if "norm" in name else 0.0))
            if quantize and p.ndim == 2:  # each matrix as a Q8_0 file stores it
                w = p.numpy().astype(np.float32)
                p.copy_(torch.from_numpy(gguf.quants.dequantize(gguf.quants.quantize(w, Q8_0), Q8_0)))
    return model


def spec(**changes):
    fields = dict(vocab=VOCAB, d_model=D_MODEL, n_layers=2, n_heads=N_HEADS, n_kv_heads=N_KV_HEADS, d_ff=D_FF)
    return toy.ModelConfig(**{**fields, "rope_base": ROPE_THETA, "norm_eps": 1e-5, **changes})


def write_gguf(model, path, types=None, edit=None, cfg=None, extra_u32=None, extra_f32=None):
    """The model as llama.cpp's converter writes a Phi-3 (no q/k
    permutation: NEOX RoPE); types: name -> quantization; edit(params):
    change the tensors before writing."""
    params = {gguf_name(n, HF_TO_GGUF): p.detach().numpy().astype(np.float64) for n, p in model.named_parameters()}
    if edit is not None:
        edit(params)
    return write_llama_gguf(
        path,
        params,
        cfg or spec(),
        arch="phi3",
        types=types,
        tokenizer=tiny_tokenizer(VOCAB),
        extra_u32=extra_u32,
        extra_f32=extra_f32,
    )


@pytest.fixture(scope="module")
def model():
    return hf_model()


@pytest.fixture(scope="module")
def ids():
    return np.random.default_rng(1).integers(0, VOCAB, (1, T + 1)).astype(np.int32)


@pytest.fixture(scope="module")
def path(tmp_path_factory, model):
    return write_gguf(model, tmp_path_factory.mktemp("phi3") / "phi3.gguf")


def test_the_config_is_read_from_the_file(path):
    cfg = read_gguf_config(path)
    assert (cfg.d_model, cfg.n_heads, cfg.n_kv_heads, cfg.d_ff, cfg.n_layers) == (64, 4, 2, 128, 2)
    assert cfg.fused_qkv and cfg.fused_gate_up and cfg.rope_neox and cfg.untied
    assert not (cfg.qkv_bias or cfg.qk_norm or cfg.post_norms or cfg.rope_freqs or cfg.swa_window)


def test_logits_and_every_gradient_match_transformers(model, path, ids):
    """Full fine-tuning trains attn_qkv and ffn_up as the file holds them:
    their gradients gather those of the q/k/v and gate/up row views."""
    assert_toy_matches(model, path, ids, HF_TO_GGUF)


def test_a_sliding_window_is_ignored_as_llama_cpp_ignores_it(tmp_path, model, ids):
    """Phi-3's config.json carries a sliding window (2047) that llama.cpp
    ignores; toy reads the same file the same way."""
    windowed = write_gguf(model, tmp_path / "window.gguf", extra_u32={"attention.sliding_window": 8})
    assert read_gguf_config(windowed).swa_window == 0
    expected = hf_logits(model, ids[:, :-1])
    np.testing.assert_allclose(toy_logits(windowed, ids[:, :-1]), expected, atol=1e-4 * np.abs(expected).max())


def slot_rows(weight_name, fused_grads):
    """blk.N.<slot>.weight's rows of the fused gradient that holds them."""
    layer, slot = weight_name.split(".")[1], weight_name.split(".")[2]
    if slot not in SLOT_ROWS:
        return fused_grads[weight_name]
    fused, first, rows = SLOT_ROWS[slot]
    return fused_grads[f"blk.{layer}.{fused}.weight"][first : first + rows]


def test_lora_on_the_fused_rows_matches_transformers(model, path, ids):
    """LoRA over the file as a frozen base, every target: the q/k/v and
    gate/up adapters act on row ranges of the fused weights, so with B = 0
    each B's gradient is scale * (those rows of transformers' dL/dW) A^T."""
    recipe = LoRA("cpu", threads=1)
    opts = toy.RecipeOptions(t_seq=T, t_batch=1, seed=3, init_scale=0.3)
    recipe.realize(path, None, 2, opts, targets=ALL_TARGETS)
    e, adapters = recipe.session, recipe.adapters()
    positions = np.arange(T, dtype=np.int32)[None]

    model.zero_grad()
    out = model(torch.tensor(ids[:, :-1], dtype=torch.long))
    torch.nn.functional.cross_entropy(out.logits[0], torch.tensor(ids[0, 1:], dtype=torch.long)).backward()
    expected = out.logits[0].detach().numpy()
    logits, _ = recipe.evaluate(ids[:, :-1], positions)
    np.testing.assert_allclose(logits[0], expected, atol=1e-4 * np.abs(expected).max())

    recipe._upload_batch(ids[:, :-1], positions, ids[:, 1:])
    e.reset()
    e.compute_gradients()
    weight_grads = {gguf_name(n, HF_TO_GGUF): p.grad.numpy() for n, p in model.named_parameters()}
    b_names = [n for n in adapters if n.endswith(".lora_b")]
    assert len(b_names) == 2 * 7
    for name in b_names:
        weight = name[: -len(".lora_b")]
        a = e.download(adapters[weight + ".lora_a"])
        want = recipe.alpha / recipe.rank * slot_rows(weight, weight_grads) @ a.T
        got = e.download(e.grad_of(adapters[name]))
        np.testing.assert_allclose(got, want, atol=1e-4 * np.abs(want).max(), err_msg=name)


def test_kv_cache_decoding_matches_transformers(model, path, ids):
    tokens = ids[0, :T]
    expected = hf_logits(model, tokens[None])
    assert_cached_decoding_matches(path, tokens, expected, prefill=30, targets=("q", "up"))


def q8_0_types(model):
    return {gguf_name(n, HF_TO_GGUF): Q8_0 for n, p in model.named_parameters() if p.ndim == 2}


def test_lora_on_a_q8_0_copy_follows_transformers_and_trains(tmp_path, model, ids):
    """LoRA over a Q8_0 copy: the fast copies are made from row ranges of the
    fused Q8_0 matrices. Before a step its logits are transformers' on the
    dequantized weights, to the int8 activations' rounding; then it trains."""
    path = write_gguf(model, tmp_path / "q8_0.gguf", types=q8_0_types(model))
    expected = hf_logits(hf_model(quantize=True), ids[:, :-1])
    recipe = LoRA("cpu", threads=1)
    recipe.realize(path, None, 4, toy.RecipeOptions(t_seq=T, t_batch=1, seed=0), targets=ALL_TARGETS)
    positions = np.arange(T, dtype=np.int32)[None]
    logits, _ = recipe.evaluate(ids[:, :-1], positions)
    assert np.abs(logits[0] - expected).max() < 1e-2 * np.abs(expected).max()
    hp = toy.adamw_hp
    losses = [recipe.step(ids[:, :-1], positions, ids[:, 1:], hp(step, 1e-2), step == 1) for step in range(1, 11)]
    assert losses[-1] < losses[0] - 0.5, losses


@pytest.mark.parametrize("kind", ["Q4_0", "Q5_1"])
def test_lora_reads_the_fused_rows_stored_as_through_the_fast_copies(tmp_path, model, ids, kind):
    """The fast copies (packed panels, transposes, Q8_0 forward copies of
    slow types) are made from row ranges of the fused quantized matrices:
    loss and every adapter gradient equal those of the base computed as
    stored (the views multiplied directly), to the copies' 8-bit rounding."""
    qtype = gguf.GGMLQuantizationType[kind]
    path = write_gguf(model, tmp_path / f"{kind}.gguf", types={n: qtype for n in q8_0_types(model)})
    positions = np.arange(T, dtype=np.int32)[None]
    results = []
    for base_compute in ("stored", "fast"):
        recipe = LoRA("cpu", threads=1)
        opts = toy.RecipeOptions(t_seq=T, t_batch=1, seed=3, init_scale=0.3)
        recipe.realize(path, None, 2, opts, targets=ALL_TARGETS, base_compute=base_compute)
        recipe._upload_batch(ids[:, :-1], positions, ids[:, 1:])
        e = recipe.session
        e.reset()
        e.compute_gradients()
        grads = {n: e.download(e.grad_of(h)) for n, h in recipe.adapters().items() if n.endswith(".lora_b")}
        results.append((recipe.evaluate(ids[:, :-1], positions, ids[:, 1:])[1], grads))
    (stored_loss, stored), (fast_loss, fast) = results
    assert fast_loss == pytest.approx(stored_loss, rel=1e-3)
    for name, grad in stored.items():
        cosine = (grad * fast[name]).sum() / np.linalg.norm(grad) / np.linalg.norm(fast[name])
        assert cosine > 0.99, (name, cosine)


def test_the_adapter_is_written_fused_as_llama_cpp_names_it(tmp_path, path, ids):
    """llama.cpp matches an adapter's tensors to the model's by name: a
    Phi-3 adapter adapts attn_qkv and ffn_up (fused shapes), each pair with
    its own rank (llama.cpp scales each by alpha / its rank)."""
    _, _ = trained_adapter(path, ids, tmp_path / "adapter.gguf", targets=("q", "v", "o", "up"))
    tensors = {t.name: [int(n) for n in t.shape] for t in gguf.GGUFReader(str(tmp_path / "adapter.gguf")).tensors}
    for layer in range(2):
        # q and v: two of the three slots, rank 4 each -> rank 8; up: one of two -> rank 4
        assert tensors[f"blk.{layer}.attn_qkv.weight.lora_a"] == [D_MODEL, 8]
        assert tensors[f"blk.{layer}.attn_qkv.weight.lora_b"] == [8, Q_WIDTH + 2 * KV_WIDTH]
        assert tensors[f"blk.{layer}.ffn_up.weight.lora_a"] == [D_MODEL, 4]
        assert tensors[f"blk.{layer}.ffn_up.weight.lora_b"] == [4, 2 * D_FF]
        assert tensors[f"blk.{layer}.attn_output.weight.lora_a"] == [Q_WIDTH, 4]
    assert not [n for n in tensors if ".attn_q." in n or ".attn_v." in n or "ffn_gate" in n]


def test_toy_reads_its_fused_adapter_back(tmp_path, path, ids):
    """toy-generate --adapter and merge_lora read the fused adapter back
    (split into the q/k/v and gate/up row ranges): the session's logits."""
    _, ours = trained_adapter(path, ids, tmp_path / "adapter.gguf", targets=("q", "v", "o", "up", "down"))
    atol = 1e-4 * np.abs(ours).max()
    session = toy.load_model(path, tmp_path / "adapter.gguf").session
    session.kv_init(T)
    np.testing.assert_allclose(session.decode(ids[0, :T], 0, VOCAB), ours[-1], atol=atol)
    merged = toy.merge_lora(path, tmp_path / "adapter.gguf", tmp_path / "merged.gguf")
    np.testing.assert_allclose(toy_logits(merged, ids[:, :-1]), ours, atol=atol)


def test_llama_cpp_runs_the_file_as_toy_does(path, ids):
    ours = toy_logits(path, ids[:, :-1])
    theirs = llama_cpp_logits(path, ids[0, :-1])
    np.testing.assert_allclose(theirs, ours, atol=1e-3 * np.abs(ours).max())


def test_llama_cpp_loads_our_adapter_with_our_logits(tmp_path, path, ids):
    """An adapter on all seven targets, trained on the file, runs in
    llama.cpp on the fused weights: its logits are toy's."""
    pytest.importorskip("llama_cpp")
    _, ours = trained_adapter(path, ids, tmp_path / "adapter.gguf")
    assert np.abs(ours - toy_logits(path, ids[:, :-1])).max() > 1e-2  # the adapter changed something
    theirs = llama_cpp_logits(path, ids[0, :-1], tmp_path / "adapter.gguf")
    np.testing.assert_allclose(theirs, ours, atol=1e-3 * np.abs(ours).max())


def test_toy_train_full_writes_a_phi3_llama_cpp_reads(tmp_path, path, ids):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("the rain in spain stays mainly in the plain. " * 40)
    args = ["full", "--model", str(path), "--corpus", str(corpus), "--steps", "2", "--seq", "16", "--batch", "1"]
    result = subprocess.run(
        [sys.executable, "-m", "toy.cli.train", *args, "--out", str(tmp_path / "run")], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr[-2000:]
    written = tmp_path / "run" / "model.gguf"
    reader = gguf.GGUFReader(str(written))
    assert reader.fields["general.architecture"].contents() == "phi3"
    names = {t.name for t in reader.tensors}
    assert "blk.0.attn_qkv.weight" in names and "blk.0.ffn_gate.weight" not in names
    ours = toy_logits(written, ids[:, :-1])
    assert np.abs(ours - toy_logits(path, ids[:, :-1])).max() > 1e-4  # trained
    theirs = llama_cpp_logits(written, ids[0, :-1])
    np.testing.assert_allclose(theirs, ours, atol=1e-3 * np.abs(ours).max())


# ---- what toy cannot run as llama.cpp does: refused in one line ----------------


def _resized(name, rows):
    def edit(params):
        for key in [k for k in params if k.endswith(name)]:
            params[key] = params[key][:rows]

    return edit


def _factors(short=None, long=None):
    """LongRoPE's sets as given (None: a good one, 1.5 each)."""

    def edit(params):
        for name, value in (("short", short), ("long", long)):
            if value is not False:
                params[f"rope_factors_{name}.weight"] = np.full(HEAD_DIM // 2, 1.5) if value is None else value

    return edit


def _qkv_bias(params):
    params["blk.0.attn_qkv.bias"] = np.zeros(Q_WIDTH + 2 * KV_WIDTH)


BAD_FILES = {
    "attn_qkv without v": (
        {"edit": _resized("attn_qkv.weight", Q_WIDTH + KV_WIDTH)},
        "tensor blk.0.attn_qkv.weight has shape [64, 96], expected [64, 128]",
    ),
    "ffn_up without gate": (
        {"edit": _resized("ffn_up.weight", D_FF)},
        "tensor blk.0.ffn_up.weight has shape [64, 128], expected [64, 256]",
    ),
    "a fused bias": ({"edit": _qkv_bias}, "blk.0.attn_qkv.bias: phi3 models with q/k/v biases are not supported"),
    # LongRoPE's factors as ggml would trip on them or compute nonsense with them
    "LongRoPE factors of the wrong length": (
        {"edit": _factors(long=np.ones(HEAD_DIM // 2 + 1))},
        "tensor rope_factors_long.weight has shape [9, 1, 1, 1], expected [8]",
    ),
    "F16 LongRoPE factors": (
        {"edit": _factors(), "types": {"rope_factors_short.weight": gguf.GGMLQuantizationType.F16}},
        "tensor rope_factors_short.weight has type f16, expected F32",
    ),
    "a NaN LongRoPE factor": (
        {"edit": _factors(short=np.array([1.0] * 7 + [np.nan]))},
        "RoPE factor 7 of rope_factors_short.weight is nan, not a finite positive number",
    ),
    "one LongRoPE set": (
        {"edit": _factors(long=False)},
        "tensor rope_factors_short.weight without rope_factors_long.weight: LongRoPE needs both factor sets",
    ),
    "factors over the whole head with partial RoPE": (
        {"edit": _factors(), "extra_u32": {"rope.dimension_count": 12}},
        "tensor rope_factors_short.weight has shape [8, 1, 1, 1], expected [6]",
    ),
    "a zero attention factor": (
        {"edit": _factors(), "extra_f32": {"rope.scaling.attn_factor": 0.0}},
        "phi3.rope.scaling.attn_factor: RoPE attention factor 0 is not a finite positive number",
    ),
    "RoPE over an odd count of dims": (
        {"extra_u32": {"rope.dimension_count": 7}},
        "phi3: RoPE over 7 of a head's 16 dims is not supported (even, 2 to 16)",
    ),
    "RoPE over more dims than a head": (
        {"extra_u32": {"rope.dimension_count": 18}},
        "phi3: RoPE over 18 of a head's 16 dims is not supported (even, 2 to 16)",
    ),
}


@pytest.mark.parametrize("case", BAD_FILES)
def test_what_toy_cannot_run_is_refused_in_one_line(tmp_path, model, case):
    changes, phrase = BAD_FILES[case]
    bad = write_gguf(model, tmp_path / "bad.gguf", **changes)
    for recipe in ("lora", "full"):
        result = subprocess.run(
            [sys.executable, "-m", "toy.cli.train", recipe, "--model", str(bad), "--steps", "1"],
            capture_output=True,
            text=True,
            cwd=tmp_path,
        )
        assert result.returncode == 2, result.stderr[-2000:]
        assert result.stderr.count("\n") == 1 and result.stderr.startswith("toy-train: error: "), result.stderr
        assert phrase in result.stderr, result.stderr


def write_adapter(path, pairs, alpha):
    """An adapter as llama.cpp reads one: pairs name -> (A (rank, d_in), B (d_out, rank))."""
    writer = gguf.GGUFWriter(str(path), "phi3")
    writer.add_string("general.type", "adapter")
    writer.add_string("adapter.type", "lora")
    writer.add_float32("adapter.lora.alpha", alpha)
    for name, (a, b) in pairs.items():
        writer.add_tensor(f"{name}.lora_a", a.astype(np.float32))
        writer.add_tensor(f"{name}.lora_b", b.astype(np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def test_a_dense_fused_adapter_of_mixed_ranks_is_read_exactly(tmp_path, path, ids):
    """An adapter as PEFT on Phi-3's qkv_proj / gate_up_proj gives (B dense
    over the fused rows, not toy's block-diagonal one), its pairs of
    different ranks, each scaled by alpha / its own rank as llama.cpp does:
    merge_lora adds exactly those products, and toy-generate's session (the
    pairs split and padded to one rank) computes the merged model's logits,
    which are llama.cpp's with the adapter."""
    rng = np.random.default_rng(5)
    alpha, fused_rows = 6.0, {"attn_qkv": Q_WIDTH + 2 * KV_WIDTH, "ffn_up": 2 * D_FF}
    ranks = {"attn_qkv": 3, "ffn_up": 5, "attn_output": 2}
    pairs = {}
    for weight, rank in ranks.items():
        d_out, d_in = fused_rows.get(weight, D_MODEL), D_MODEL if weight != "attn_output" else Q_WIDTH
        pairs[f"blk.1.{weight}.weight"] = (rng.normal(0, 0.1, (rank, d_in)), rng.normal(0, 0.1, (d_out, rank)))
    adapter = write_adapter(tmp_path / "dense.gguf", pairs, alpha)
    merged = toy.merge_lora(path, adapter, tmp_path / "merged.gguf")
    base = {t.name: t for t in gguf.GGUFReader(str(path)).tensors}
    written = {t.name: t for t in gguf.GGUFReader(str(merged)).tensors}
    for name, (a, b) in pairs.items():
        want = np.asarray(base[name].data) + alpha / a.shape[0] * (b @ a)
        np.testing.assert_allclose(np.asarray(written[name].data), want, atol=1e-5)
    expected = toy_logits(merged, ids[:, :-1])
    atol = 1e-3 * np.abs(expected).max()
    assert np.abs(expected - toy_logits(path, ids[:, :-1])).max() > 20 * atol  # the adapter matters
    session = toy.load_model(path, adapter).session
    session.kv_init(T)
    np.testing.assert_allclose(session.decode(ids[0, :T], 0, VOCAB), expected[-1], atol=1e-4 * np.abs(expected).max())
    theirs = llama_cpp_logits(path, ids[0, :-1], adapter)
    np.testing.assert_allclose(theirs, expected, atol=atol)


def test_an_adapter_for_separate_q_k_v_is_refused_over_fused_weights(tmp_path, path):
    a, b = np.ones((2, D_MODEL)), np.ones((Q_WIDTH, 2))
    adapter = write_adapter(tmp_path / "separate.gguf", {"blk.0.attn_q.weight": (a, b)}, 2.0)
    with pytest.raises(
        toy.InputError, match="adapts attn_q, and the base stores attn_q, attn_k, attn_v as one attn_qkv"
    ):
        toy.load_model(path, adapter)


# ---- LongRoPE (Phi-3.5-mini, the 128k models) and partial RoPE (Phi-4-mini) --------

ORIGINAL, MAX_POSITIONS = 4096, 131072  # Phi-3.5-mini's: 4k trained, 128k extended
LONGROPE_SHAPES = {"longrope": 1.0, "longrope, partial RoPE (Phi-4-mini)": 0.75}


def longrope_params(partial, original=ORIGINAL):
    """transformers' rope_parameters for LongRoPE over partial * HEAD_DIM
    dims: random factors, the short ones near 1 as in Phi-3.5's config, the
    long ones large, so that either set changes the logits."""
    rng = np.random.default_rng(7)
    pairs = int(HEAD_DIM * partial) // 2
    return {
        "rope_type": "longrope",
        "rope_theta": ROPE_THETA,
        "short_factor": [float(x) for x in rng.uniform(1.0, 3.0, pairs)],
        "long_factor": [float(x) for x in rng.uniform(2.0, 40.0, pairs)],
        "original_max_position_embeddings": original,
        "partial_rotary_factor": partial,
    }


def longrope_model(partial, quantize=False, original=ORIGINAL):
    return hf_model(quantize, longrope_params(partial, original), original * MAX_POSITIONS // ORIGINAL, original)


def write_longrope(model, path, scaled=True, **changes):
    """As llama.cpp's converter (Phi3MiniModel) writes a LongRoPE model: both
    factor sets F32 [rope_dim/2], the original context, the attention factor
    sqrt(1 + ln(scale) / ln(original)); rope.dimension_count = the rotated
    dims. scaled=False: the same file without the factors and the factor."""
    rope = model.config.rope_parameters
    original = rope["original_max_position_embeddings"]
    rope_dim = int(HEAD_DIM * rope["partial_rotary_factor"])
    scale = model.config.max_position_embeddings / original
    attn_factor = math.sqrt(1 + math.log(scale) / math.log(original))

    def edit(params):
        if scaled:
            params["rope_factors_long.weight"] = np.array(rope["long_factor"])
            params["rope_factors_short.weight"] = np.array(rope["short_factor"])

    u32 = {"rope.dimension_count": rope_dim, "rope.scaling.original_context_length": original}
    f32 = {"rope.scaling.attn_factor": attn_factor} if scaled else {}
    return write_gguf(model, path, edit=edit, extra_u32=u32, extra_f32=f32, **changes)


@pytest.fixture(scope="module", params=list(LONGROPE_SHAPES))
def longrope(request, tmp_path_factory):
    """(partial rotary factor, transformers model, its GGUF)."""
    partial = LONGROPE_SHAPES[request.param]
    model = longrope_model(partial)
    return partial, model, write_longrope(model, tmp_path_factory.mktemp("longrope") / "longrope.gguf")


def test_longrope_is_read_from_the_file(longrope):
    partial, model, path = longrope
    cfg = read_gguf_config(path)
    assert cfg.rope_freqs and cfg.rope_orig_ctx == ORIGINAL
    assert cfg.rope_attn_factor == pytest.approx(math.sqrt(1 + math.log(32) / math.log(ORIGINAL)), rel=1e-6)
    assert cfg.rope_dim == (0 if partial == 1.0 else int(HEAD_DIM * partial))


def test_longrope_logits_and_every_gradient_match_transformers(longrope, ids):
    """At a sequence within the original context both pick the short
    factors and scale cos and sin by the attention factor; the backward of
    the (partial) rotation gives transformers' gradients."""
    _, model, path = longrope
    assert_toy_matches(model, path, ids, HF_TO_GGUF)


def test_the_files_rope_scaling_matters(tmp_path, longrope, ids):
    """The same weights without the factors and the attention factor: toy's
    logits move far from transformers' (so the scaled file's match is the
    scaling's doing)."""
    _, model, path = longrope
    expected = hf_logits(model, ids[:, :-1])
    plain = toy_logits(write_longrope(model, tmp_path / "plain.gguf", scaled=False), ids[:, :-1])
    assert np.abs(plain - expected).max() > 0.05 * np.abs(expected).max()
    np.testing.assert_allclose(toy_logits(path, ids[:, :-1]), expected, atol=1e-4 * np.abs(expected).max())


def test_past_the_original_context_the_long_factors_run(tmp_path, ids):
    """A file whose original context (32) is below the sequence (48): toy,
    transformers and llama.cpp all switch to the long factors."""
    model = longrope_model(0.75, original=32)
    path = write_longrope(model, tmp_path / "long.gguf")
    expected = hf_logits(model, ids[:, :-1])
    ours = toy_logits(path, ids[:, :-1])
    np.testing.assert_allclose(ours, expected, atol=1e-4 * np.abs(expected).max())
    short = hf_logits(longrope_model(0.75), ids[:, :-1])  # the same weights on the short factors
    assert np.abs(short - ours).max() > 0.05 * np.abs(ours).max()
    theirs = llama_cpp_logits(path, ids[0, :-1], f32_cache=True)  # its context (padded to 256) is past 32 too
    np.testing.assert_allclose(theirs, ours, atol=1e-4 * np.abs(ours).max())


def test_longrope_kv_cache_decoding_matches_transformers(longrope, ids):
    """Decoding runs the factors training ran: the cache's context (48)
    is within the original, as the sequence was."""
    _, model, path = longrope
    tokens = ids[0, :T]
    expected = hf_logits(model, tokens[None])
    assert_cached_decoding_matches(path, tokens, expected, prefill=30, targets=("q", "up"))


def test_longrope_lora_on_a_q8_0_copy_follows_transformers_and_trains(tmp_path, longrope, ids):
    partial, model, _ = longrope
    path = write_longrope(model, tmp_path / "q8_0.gguf", types=q8_0_types(model))
    expected = hf_logits(longrope_model(partial, quantize=True), ids[:, :-1])
    recipe = LoRA("cpu", threads=1)
    recipe.realize(path, None, 4, toy.RecipeOptions(t_seq=T, t_batch=1, seed=0), targets=ALL_TARGETS)
    positions = np.arange(T, dtype=np.int32)[None]
    logits, _ = recipe.evaluate(ids[:, :-1], positions)
    assert np.abs(logits[0] - expected).max() < 1e-2 * np.abs(expected).max()
    hp = toy.adamw_hp
    losses = [recipe.step(ids[:, :-1], positions, ids[:, 1:], hp(step, 1e-2), step == 1) for step in range(1, 11)]
    assert losses[-1] < losses[0] - 0.5, losses


def test_llama_cpp_runs_the_longrope_file_and_our_adapter_as_toy_does(tmp_path, longrope, ids):
    _, _, path = longrope
    ours = toy_logits(path, ids[:, :-1])
    np.testing.assert_allclose(
        llama_cpp_logits(path, ids[0, :-1], f32_cache=True), ours, atol=1e-4 * np.abs(ours).max()
    )
    _, adapted = trained_adapter(path, ids, tmp_path / "adapter.gguf")
    assert np.abs(adapted - ours).max() > 1e-2  # the adapter changed something
    theirs = llama_cpp_logits(path, ids[0, :-1], tmp_path / "adapter.gguf", f32_cache=True)
    np.testing.assert_allclose(theirs, adapted, atol=1e-4 * np.abs(adapted).max())


def test_a_full_fine_tune_keeps_both_factor_sets(tmp_path, longrope, ids):
    """Full fine-tuning holds both sets (uploaded from the file) and writes
    them back: llama.cpp runs the trained model as toy does."""
    _, _, path = longrope
    ours = full_fine_tune(path, ids, tmp_path / "full.gguf")
    names = {t.name for t in gguf.GGUFReader(str(tmp_path / "full.gguf")).tensors}
    assert {"rope_factors_short.weight", "rope_factors_long.weight"} <= names
    np.testing.assert_allclose(toy_logits(tmp_path / "full.gguf", ids[:, :-1]), ours, atol=1e-4 * np.abs(ours).max())
    theirs = llama_cpp_logits(tmp_path / "full.gguf", ids[0, :-1], f32_cache=True)
    np.testing.assert_allclose(theirs, ours, atol=1e-4 * np.abs(ours).max())
