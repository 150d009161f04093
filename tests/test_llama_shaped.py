"""Families built on the llama block that toy runs as llama.cpp does, each a
small random-weight model built in transformers and written to GGUF as
llama.cpp's converter writes one (q/k rows permuted as for llama):

- SmolLM3 (GGUF architecture `smollm3`): every fourth layer applies no RoPE
  to q and k (transformers' no_rope_layers, llama.cpp's
  n_no_rope_layer_step = 4); a byte-level BPE vocabulary, tied embeddings.
- Mistral 7B (GGUF architecture `llama`, transformers' MistralForCausalLM):
  4:1 grouped-query attention, a SentencePiece vocabulary, an untied head.

Each is run by toy: logits and every gradient against transformers, cached
decoding, LoRA on a Q8_0 copy, and llama.cpp running the file and an
adapter trained on it; SmolLM3's file read as plain llama must differ."""

import numpy as np
import pytest

import toy
from gguf_fixtures import tiny_sentencepiece, tiny_tokenizer, write_llama_gguf
from hf_compare import (
    ALL_SEVEN,
    LLAMA_LIKE_NAMES,
    assert_cached_decoding_matches,
    assert_toy_matches,
    full_fine_tune,
    gguf_name,
    hf_logits,
    llama_cpp_logits,
    llama_cpp_rows,
    q8_0_copy,
    randomize,
    toy_logits,
    trained_adapter,
)
from toy.native.session import read_gguf_config
from toy.recipes import LoRA

gguf = pytest.importorskip("gguf")
torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

T, D_MODEL, D_FF, N_LAYERS = 24, 64, 128, 4
HF_TO_GGUF = {
    **LLAMA_LIKE_NAMES,
    "lm_head.weight": "output.weight",
    "model.layers.{i}.post_attention_layernorm.weight": "blk.{i}.ffn_norm.weight",
}


class Family:
    """A family's transformers model, its GGUF architecture and tokenizer."""

    def __init__(self, name):
        self.name = name
        if name == "smollm3":
            self.arch, self.tokenizer, self.n_heads, self.n_kv_heads = "smollm3", tiny_tokenizer(300), 4, 2
        else:
            self.arch, self.tokenizer, self.n_heads, self.n_kv_heads = "llama", tiny_sentencepiece(), 8, 2
        self.vocab = len(self.tokenizer["tokens"])
        shape = dict(
            vocab_size=self.vocab,
            hidden_size=D_MODEL,
            intermediate_size=D_FF,
            num_hidden_layers=N_LAYERS,
            num_attention_heads=self.n_heads,
            num_key_value_heads=self.n_kv_heads,
            max_position_embeddings=256,
            rope_parameters={"rope_type": "default", "rope_theta": 5e4},
            rms_norm_eps=1e-6,
        )
        if name == "smollm3":
            config = transformers.SmolLM3Config(
                **shape, no_rope_layer_interval=4, tie_word_embeddings=True, pad_token_id=None, bos_token_id=None
            )
            assert config.no_rope_layers == [1, 1, 1, 0]  # 1: the layer uses RoPE
            self.model = randomize(transformers.SmolLM3ForCausalLM(config))
        else:
            config = transformers.MistralConfig(**shape, sliding_window=None, tie_word_embeddings=False)
            self.model = randomize(transformers.MistralForCausalLM(config))

    def rows(self, name, rows):
        return llama_cpp_rows(name, rows, self.n_heads, self.n_kv_heads)

    def write_gguf(self, path, arch=None, types=None):
        params = {}
        for name, p in self.model.named_parameters():
            key = gguf_name(name, HF_TO_GGUF)
            params[key] = self.rows(key, p.detach().numpy().astype(np.float64))
        spec = toy.ModelConfig(
            vocab=self.vocab,
            d_model=D_MODEL,
            n_layers=N_LAYERS,
            n_heads=self.n_heads,
            n_kv_heads=self.n_kv_heads,
            d_ff=D_FF,
            rope_base=5e4,
            norm_eps=1e-6,
        )
        return write_llama_gguf(path, params, spec, arch=arch or self.arch, types=types, tokenizer=self.tokenizer)


@pytest.fixture(scope="module", params=["smollm3", "mistral"])
def family(request):
    return Family(request.param)


@pytest.fixture(scope="module")
def ids(family):
    return np.random.default_rng(5).integers(0, family.vocab, (1, T + 1)).astype(np.int32)


def test_the_config_is_read_from_the_file(tmp_path, family):
    cfg = read_gguf_config(family.write_gguf(tmp_path / "model.gguf"))
    assert (cfg.n_heads, cfg.n_kv_heads, cfg.rope_neox) == (family.n_heads, family.n_kv_heads, False)
    assert cfg.no_rope_period == (4 if family.name == "smollm3" else 0)


def test_logits_and_every_gradient_match_transformers(tmp_path, family, ids):
    path = family.write_gguf(tmp_path / "model.gguf")
    assert_toy_matches(family.model, path, ids, HF_TO_GGUF, to_gguf=family.rows)


def test_smollm3_read_as_plain_llama_gives_other_logits(tmp_path):
    """SmolLM3's tensors under `llama`: every layer rotates, which
    transformers' SmolLM3 does not compute (so the test above can fail)."""
    smollm3 = Family("smollm3")
    ids = np.random.default_rng(5).integers(0, smollm3.vocab, (1, T)).astype(np.int32)
    expected = hf_logits(smollm3.model, ids)
    plain = toy_logits(smollm3.write_gguf(tmp_path / "llama.gguf", arch="llama"), ids)
    assert np.abs(plain - expected).max() > 1e-2 * np.abs(expected).max()


def test_kv_cache_decoding_matches_transformers(tmp_path, family, ids):
    path = family.write_gguf(tmp_path / "model.gguf")
    tokens = ids[0, :T]
    assert_cached_decoding_matches(path, tokens, hf_logits(family.model, tokens[None]), prefill=10)


def test_lora_on_a_q8_0_copy_follows_transformers_and_trains(tmp_path, family, ids):
    q8_0 = gguf.GGMLQuantizationType.Q8_0
    types = {gguf_name(n, HF_TO_GGUF): q8_0 for n, p in family.model.named_parameters() if p.ndim == 2}
    path = family.write_gguf(tmp_path / "q8_0.gguf", types=types)
    positions = np.arange(T, dtype=np.int32)[None]
    expected = hf_logits(q8_0_copy(family.model), ids[:, :-1])
    recipe = LoRA("cpu", threads=1)
    recipe.realize(path, None, 4, toy.RecipeOptions(t_seq=T, t_batch=1, seed=0), targets=ALL_SEVEN)
    logits, _ = recipe.evaluate(ids[:, :-1], positions)
    # the int8 activations' rounding (measured 0.004 of the largest logit)
    assert np.abs(logits[0] - expected).max() < 2e-2 * np.abs(expected).max()
    hp = toy.adamw_hp
    losses = [recipe.step(ids[:, :-1], positions, ids[:, 1:], hp(step, 1e-2), step == 1) for step in range(1, 11)]
    assert losses[-1] < losses[0] - 0.5, losses


def test_llama_cpp_runs_the_file_as_toy_does(tmp_path, family, ids):
    path = family.write_gguf(tmp_path / "model.gguf")
    ours = toy_logits(path, ids[:, :-1])
    theirs = llama_cpp_logits(path, ids[0, :-1])
    np.testing.assert_allclose(theirs, ours, atol=1e-3 * np.abs(ours).max())


def test_llama_cpp_loads_our_adapter_with_our_logits(tmp_path, family, ids):
    """An adapter on all seven projections, trained on the file, runs in
    llama.cpp with toy's logits."""
    pytest.importorskip("llama_cpp")
    path = family.write_gguf(tmp_path / "model.gguf")
    _, ours = trained_adapter(path, ids, tmp_path / "adapter.gguf")
    assert np.abs(ours - toy_logits(path, ids[:, :-1])).max() > 1e-2  # the adapter changed something
    assert gguf.GGUFReader(str(tmp_path / "adapter.gguf")).fields["general.architecture"].contents() == family.arch
    theirs = llama_cpp_logits(path, ids[0, :-1], tmp_path / "adapter.gguf")
    np.testing.assert_allclose(theirs, ours, atol=1e-3 * np.abs(ours).max())


def test_full_fine_tuning_writes_a_model_llama_cpp_runs_with_our_logits(tmp_path, family, ids):
    pytest.importorskip("llama_cpp")
    path = family.write_gguf(tmp_path / "model.gguf")
    ours = full_fine_tune(path, ids, tmp_path / "tuned.gguf")
    np.testing.assert_allclose(
        llama_cpp_logits(tmp_path / "tuned.gguf", ids[0, :-1]), ours, atol=1e-3 * np.abs(ours).max()
    )
