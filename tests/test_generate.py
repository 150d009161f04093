"""Generation over the KV cache, toy.generate and toy-generate."""
import subprocess
import sys

import numpy as np
import pytest

import toy
from toy.recipes import LoRA

from gguf_fixtures import write_llama_gguf

import reference_llama as ref


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    cfg = ref.Config(vocab=50, d_model=32, n_layers=2, n_heads=4, n_kv_heads=2, d_ff=64, untied=True)
    params = ref.init_params(cfg, np.random.default_rng(0), scale=0.3)
    path = write_llama_gguf(tmp_path_factory.mktemp("g") / "tiny.gguf", params, cfg)
    return path, params, cfg


def trained_tiny_lora(path):
    """A LoRA session on the tiny model after 3 steps: (recipe, ids, its logits)."""
    recipe = LoRA("cpu", threads=1)
    recipe.realize(path, None, 4, toy.RecipeOptions(t_seq=6, t_batch=1), targets=("q", "v", "down"))
    ids = np.array([[3, 7, 11, 2, 9, 4, 5]], dtype=np.int32)
    for step in range(1, 4):
        recipe.step(ids[:, :-1], np.arange(6)[None], ids[:, 1:], toy.adamw_hp(step, 5e-2), step == 1)
    trained, _ = recipe.evaluate(ids[:, :-1], np.arange(6)[None])
    return recipe, ids, trained


def test_kv_cache_decoding_matches_the_reference_forward(tiny):
    path, params, cfg = tiny
    ids = list(np.random.default_rng(1).integers(0, 50, 9))
    full = ref.forward(params, cfg, np.array([ids]), np.arange(9)[None])[0]
    model = toy.load_model(path, threads=1)
    model.session.kv_init(64)
    np.testing.assert_allclose(model.session.decode(ids[:5], 0, 50), full[4], atol=1e-4)
    for i in range(5, 9):      # one token at a time, reading the cache
        np.testing.assert_allclose(model.session.decode(ids[i:i + 1], i, 50), full[i], atol=1e-4)


def test_decode_refuses_what_does_not_fit(tiny):
    model = toy.load_model(tiny[0], threads=1)
    with pytest.raises(toy.ToyError, match="before kv_init"):
        model.session.decode([1], 0, 50)
    model.session.kv_init(8)
    with pytest.raises(toy.ToyError, match="does not fit"):
        model.session.decode(list(range(9)), 0, 50)
    with pytest.raises(toy.ToyError, match="outside the vocabulary"):
        model.session.decode([50], 0, 50)


def test_greedy_is_deterministic_and_sampling_is_seeded(smollm2):
    model = toy.load_model(smollm2, threads=2)
    greedy = toy.generate(model, "Once upon a time", 12)
    assert greedy == toy.generate(model, "Once upon a time", 12) and len(greedy) > 10
    a = toy.generate(model, "Once upon a time", 12, temperature=0.9, top_k=40, seed=5)
    assert a == toy.generate(model, "Once upon a time", 12, temperature=0.9, top_k=40, seed=5)


def test_stop_strings_end_the_text(smollm2):
    model = toy.load_model(smollm2, threads=2)
    text = toy.generate(model, "Count: one, two, three,", 20)
    stop = text.strip()[:3]
    cut = toy.generate(model, "Count: one, two, three,", 20, stop=(stop,))
    assert stop not in cut and text.startswith(cut)


def test_an_adapter_file_loads_into_the_same_logits_as_its_session(tiny, tmp_path):
    path = tiny[0]
    recipe, ids, trained = trained_tiny_lora(path)
    recipe.save_adapter(tmp_path / "adapter.gguf")
    loaded = toy.load_model(path, tmp_path / "adapter.gguf", threads=1)
    loaded.session.kv_init(16)
    np.testing.assert_allclose(loaded.session.decode(ids[0, :-1], 0, 50), trained[0, -1], atol=1e-4)


def test_toy_generate_cli(smollm2):
    run = lambda *a: subprocess.run([sys.executable, "-m", "toy.generate_cli", *a], capture_output=True,
                                    text=True)
    result = run("Once upon a time", "--max-new-tokens", "8")
    assert result.returncode == 0 and len(result.stdout.strip()) > 5
    bad = run("hi", "--adapter", "/nonexistent/adapter.gguf")
    assert bad.returncode == 2 and "--adapter file not found" in bad.stderr


@pytest.mark.parametrize("attention", ["flash", "matmul"])
def test_one_reused_graph_decodes_across_windows_and_rewinds(tiny, monkeypatch, attention):
    """The decode graph is built once per shape and reused at every position:
    its cache rows, mask and positions are inputs. Both attention paths
    (flash attention, and mul_mat + softmax for backends without it) must
    match the reference across the 256-position window where the graph is
    rebuilt, and after rewinding to position 0 over a cache that still holds
    a longer sequence."""
    path, params, cfg = tiny
    if attention == "matmul":
        monkeypatch.setenv("TNN_DECODE_ATTENTION", "matmul")
    ids = list(np.random.default_rng(2).integers(0, 50, 300))
    full = ref.forward(params, cfg, np.array([ids]), np.arange(300)[None])[0]
    model = toy.load_model(path, threads=1)
    model.session.kv_init(320)
    np.testing.assert_allclose(model.session.decode(ids[:250], 0, 50), full[249], atol=1e-4)
    for i in range(250, 300):
        np.testing.assert_allclose(model.session.decode(ids[i:i + 1], i, 50), full[i], atol=1e-4,
                                   err_msg=f"position {i}")
    other = list(np.random.default_rng(3).integers(0, 50, 7))
    want = ref.forward(params, cfg, np.array([other]), np.arange(7)[None])[0]
    np.testing.assert_allclose(model.session.decode(other[:3], 0, 50), want[2], atol=1e-4)
    for i in range(3, 7):
        np.testing.assert_allclose(model.session.decode(other[i:i + 1], i, 50), want[i], atol=1e-4)


def test_the_tokenizer_and_chat_template_are_read_once_per_model(smollm2, monkeypatch):
    from toy.instruct import ChatFormatter
    from toy.tokenizer import GGUFTokenizer

    calls = {"tokenizer": 0, "chat": 0}
    read_tokenizer, read_chat = GGUFTokenizer.from_gguf.__func__, ChatFormatter.from_gguf.__func__

    def counted_tokenizer(cls, path):
        calls["tokenizer"] += 1
        return read_tokenizer(cls, path)

    def counted_chat(cls, path, tokenizer):
        calls["chat"] += 1
        return read_chat(cls, path, tokenizer)

    monkeypatch.setattr(GGUFTokenizer, "from_gguf", classmethod(counted_tokenizer))
    monkeypatch.setattr(ChatFormatter, "from_gguf", classmethod(counted_chat))
    model = toy.load_model(smollm2, threads=2)
    first = toy.generate(model, "What is the capital of France?", 10, chat=True)
    second = toy.generate(model, "What is the capital of France?", 10, chat=True)
    plain = toy.generate(model, "Once upon a time", 6)
    assert calls == {"tokenizer": 1, "chat": 1}
    assert first == second and len(first) > 5 and len(plain) > 3
    # the same answer as with a tokenizer and template read afresh
    tokenizer = read_tokenizer(GGUFTokenizer, smollm2)
    fresh = toy.load_model(smollm2, threads=2)
    assert toy.generate(fresh, "What is the capital of France?", 10, chat=True, tokenizer=tokenizer) == first


def test_a_stop_string_spanning_several_tokens_cuts_at_its_first_occurrence(smollm2):
    model = toy.load_model(smollm2, threads=2)
    text = toy.generate(model, "Once upon a time", 24)
    words = text.split()
    stop = " ".join(words[2:5])          # several tokens, well inside the text
    assert len(stop) > 6 and stop in text
    cut = toy.generate(model, "Once upon a time", 24, stop=(stop, "never-generated"))
    assert cut == text[: text.index(stop)]


def test_decoding_without_the_adapters_runs_the_base_alone(tiny):
    path, params, cfg = tiny
    recipe, ids, trained = trained_tiny_lora(path)
    base = ref.forward(params, cfg, ids[:, :-1], np.arange(6)[None])[0]
    assert np.abs(trained[0, -1] - base[-1]).max() > 1e-2        # the adapters changed the logits
    e = recipe.session
    e.kv_init(16)
    np.testing.assert_allclose(e.decode(ids[0, :-1], 0, 50), trained[0, -1], atol=1e-4)
    e.decode_adapters(False)
    np.testing.assert_allclose(e.decode(ids[0, :-1], 0, 50), base[-1], atol=1e-4)
    e.decode_adapters(True)
    np.testing.assert_allclose(e.decode(ids[0, :-1], 0, 50), trained[0, -1], atol=1e-4)
    with pytest.raises(toy.ToyError, match="takes 0"):
        e._check(e.lib.tnn_decode_adapters(e._session, 2))


def test_a_prompt_past_the_models_context_is_refused_before_decoding(smollm2):
    model = toy.load_model(smollm2, threads=2)
    with pytest.raises(toy.InputError, match="more than the model's context of 8,192 tokens"):
        toy.generate(model, "word " * 9000, 4)


def test_a_long_prompt_prefilled_in_pieces_continues_as_in_one(smollm2, monkeypatch):
    import importlib
    generation = importlib.import_module("toy.generate")
    prompt = "The quick brown fox jumps over the lazy dog. " * 70        # about 700 tokens
    in_pieces = toy.generate(toy.load_model(smollm2, threads=2), prompt, 8)
    monkeypatch.setattr(generation, "PREFILL_CHUNK", 100_000)
    assert toy.generate(toy.load_model(smollm2, threads=2), prompt, 8) == in_pieces


def test_llama_cpp_spellings_of_the_prompt_and_options(smollm2):
    ours = subprocess.run([sys.executable, "-m", "toy.generate_cli", "The capital of France is",
                           "--max-new-tokens", "4", "--threads", "2"], capture_output=True, text=True)
    theirs = subprocess.run([sys.executable, "-m", "toy.generate_cli", "-p", "The capital of France is",
                             "-n", "4", "-t", "2", "-m", str(smollm2)], capture_output=True, text=True)
    assert ours.returncode == 0 and theirs.stdout == ours.stdout, theirs.stderr
    twice = subprocess.run([sys.executable, "-m", "toy.generate_cli", "hi", "-p", "hi"],
                           capture_output=True, text=True)
    assert twice.returncode == 2 and "give the prompt once" in twice.stderr
