"""A transformers model as llama.cpp itself would ship it: the model (random
weights, float32) is saved with a small tokenizer and turned into a GGUF by
llama.cpp's own convert_hf_to_gguf.py (from scripts/fetch_references.py, so
offline), then quantized by llama.cpp (llama-cpp-python's
llama_model_quantize). For the families toy has no released file to check
against (LFM2, Qwen3.5, Granite 4): the tensor names, layouts and metadata
are llama.cpp's, not toy's own writer's. llama.cpp's logits on such a file:
hf_compare.llama_cpp_logits.

The tokenizer is GPT-2's (byte-level BPE), read from llama.cpp's
models/ggml-vocab-gpt-2.gguf, cut to the model's vocab_size: its first
vocab_size - 1 tokens and the merges among them, and <|endoftext|> last.
The converter names a BPE tokenizer's pre-tokenizer by hashing its ids for
a fixed text (get_vocab_base_pre) and refuses one it does not know; any
real tokenizer's ids for that text reach tens of thousands (GPT-2's up to
48101), so only the whole of GPT-2 (vocab_size >= 50257, padded by the
converter beyond) passes unchanged. A smaller one is GPT-2's pre-tokenizer
all the same, and the converter runs under a shim (SHIM) that says so for
that one directory: "gpt-2", which the hash would have given. vocab_size:
at least 258 (256 bytes, one merge, which llama.cpp requires, and
<|endoftext|>); a multiple of 16 suits every family (Mamba-2 and Granite 4
pad the vocabulary to 16 and 8).

Q4_K and the other k-quants pack 256 values a block: a matrix whose rows
(its input width: hidden_size, intermediate_size, head widths) are not a
multiple of 256 is quietly stored in a fallback type (Q5_0, Q8_0...), so
check tensor_types.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

# where scripts/fetch_references.py puts llama.cpp's files ($TOY_LLAMA_CPP_MODELS: its models/)
MODELS = Path(__file__).parent / ".references" / "llama.cpp" / "models"
LLAMA_CPP = Path(os.environ.get("TOY_LLAMA_CPP_MODELS", MODELS)).parent
# conftest's own reason, so that under TOY_REQUIRE_REFERENCES=1 (CI) the skip fails
MISSING = "llama.cpp's reference files are not here (python scripts/fetch_references.py): its converter"
GPT2_VOCAB = 50257  # GPT-2's tokens, <|endoftext|> the last
EOT = "<|endoftext|>"

# Run as `python -c SHIM convert_hf_to_gguf.py ARGS...`: the converter as its
# own script would run (its folder first on sys.path, for conversion/ and
# models/), except that the tokenizer saved in $TOY_GPT2_PRETOKENIZER (GPT-2's,
# cut short, so its hash is in no list) has GPT-2's pre-tokenizer.
SHIM = """
import os, runpy, sys
from pathlib import Path
script = sys.argv[1]
sys.argv = sys.argv[1:]
sys.path[0] = str(Path(script).resolve().parent)
from conversion.base import TextModel
known = TextModel.get_vocab_base_pre
ours = Path(os.environ["TOY_GPT2_PRETOKENIZER"]).resolve()
def get_vocab_base_pre(self, tokenizer):
    return "gpt-2" if Path(self.dir_model).resolve() == ours else known(self, tokenizer)
TextModel.get_vocab_base_pre = get_vocab_base_pre
runpy.run_path(script, run_name="__main__")
"""

# llama.h's file type for each of quantize's kinds. There is no plain "Q4_K"
# file type: Q4_K_S stores nearly every matrix as Q4_K, Q4_K_M puts Q6_K in
# some (attn_v, half of ffn_down, the output or tied embedding).
FTYPES = {"Q8_0": "Q8_0", "Q4_K": "Q4_K_S", "Q4_K_S": "Q4_K_S", "Q4_K_M": "Q4_K_M", "MXFP4_MOE": "MXFP4_MOE"}


def llama_cpp_dir() -> Path:
    """llama.cpp's tree (convert_hf_to_gguf.py, conversion/, gguf-py/, models/); skips the test without it."""
    if not (LLAMA_CPP / "convert_hf_to_gguf.py").is_file() or not (LLAMA_CPP / "gguf-py").is_dir():
        pytest.skip(MISSING)
    return LLAMA_CPP


def gpt2_tokenizer(vocab_size: int):
    """GPT-2's tokenizer cut to vocab_size tokens (all of it from 50257 on),
    from llama.cpp's copy of its vocabulary: a transformers fast tokenizer."""
    import gguf
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    if vocab_size < 258:
        raise ValueError(f"vocab_size {vocab_size}: GPT-2's tokenizer needs at least 258 (256 bytes, a merge, {EOT})")
    fields = gguf.GGUFReader(llama_cpp_dir() / "models" / "ggml-vocab-gpt-2.gguf").fields
    tokens = [fields["tokenizer.ggml.tokens"].contents(i) for i in range(GPT2_VOCAB - 1)]
    tokens = tokens[: min(vocab_size, GPT2_VOCAB) - 1]
    vocab = {token: i for i, token in enumerate(tokens)}
    # only the merges whose parts and result are all kept: GPT-2's merge i makes token 256 + i
    merges = [tuple(m.split(" ")) for m in fields["tokenizer.ggml.merges"].contents()]
    merges = [(a, b) for a, b in merges if a in vocab and b in vocab and a + b in vocab]
    tokenizer = Tokenizer(models.BPE(vocab=vocab, merges=merges))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)  # GPT-2's regex
    tokenizer.decoder = decoders.ByteLevel()
    return PreTrainedTokenizerFast(tokenizer_object=tokenizer, bos_token=EOT, eos_token=EOT, unk_token=None)


def convert(model_dir: Path, out_path: Path, outtype: str, gpt2_cut: bool, extra=()) -> None:
    """llama.cpp's convert_hf_to_gguf.py on model_dir, in a subprocess; raises
    with the end of its output when it fails."""
    root = llama_cpp_dir()
    script = str(root / "convert_hf_to_gguf.py")
    args = [str(model_dir), "--outfile", str(out_path), "--outtype", outtype, *extra]
    env = dict(os.environ)
    # the converter's own gguf-py, newer than the installed gguf package (it puts it
    # on sys.path too, after the script's folder; first here so nothing shadows it)
    env["PYTHONPATH"] = os.pathsep.join([str(root / "gguf-py"), *filter(None, [env.get("PYTHONPATH")])])
    env["HF_HUB_OFFLINE"] = "1"  # everything is in model_dir
    if gpt2_cut:
        env["TOY_GPT2_PRETOKENIZER"] = str(model_dir)
        command = [sys.executable, "-c", SHIM, script, *args]
    else:
        command = [sys.executable, script, *args]
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    if done.returncode != 0 or not out_path.is_file():
        tail = "\n".join((done.stdout + done.stderr).splitlines()[-30:])
        raise RuntimeError(f"convert_hf_to_gguf.py failed ({done.returncode}) on {model_dir}:\n{tail}")


def hf_to_gguf(
    model, out_path, tokenizer=None, outtype: str = "f32", converter_args=(), chat_template=None, config_json=None
) -> Path:
    """The transformers model as llama.cpp's converter writes it (outtype:
    f32, f16, bf16 or q8_0) at out_path. tokenizer: a transformers tokenizer
    of model.config.vocab_size tokens at most; by default GPT-2's, cut to that
    size (see the module's docstring). converter_args: more of
    convert_hf_to_gguf.py's options; Qwen3.5 needs ("--no-mtp",), as its
    converter expects the released checkpoints' multi-token-prediction
    layers, which transformers does not build. chat_template: Jinja the
    tokenizer carries (written as tokenizer.chat_template). config_json:
    keys to write over the saved config.json, where transformers saves a
    field otherwise than the released checkpoints the converter reads
    (Granite 4's layer_types); a key given None is removed (Nemotron-H's
    num_experts_per_tok, which makes the converter write the MoE family)."""
    out_path = Path(out_path)
    vocab_size = model.config.get_text_config().vocab_size
    gpt2_cut = tokenizer is None and vocab_size < GPT2_VOCAB
    tokenizer = tokenizer if tokenizer is not None else gpt2_tokenizer(vocab_size)
    if chat_template is not None:
        tokenizer.chat_template = chat_template
    with tempfile.TemporaryDirectory() as tmp:
        model_dir = Path(tmp) / "model"
        # float32 safetensors: the converter keeps f32 as it is
        model.float().save_pretrained(model_dir, safe_serialization=True)
        if config_json:
            saved = json.loads((model_dir / "config.json").read_text())
            merged = {k: v for k, v in {**saved, **config_json}.items() if v is not None or k not in config_json}
            (model_dir / "config.json").write_text(json.dumps(merged))
        tokenizer.save_pretrained(model_dir)
        convert(model_dir, out_path, outtype, gpt2_cut, converter_args)
    return out_path


def quantize(src, dst, kind: str) -> Path:
    """The GGUF at src quantized by llama.cpp into dst: kind Q8_0, Q4_K (its
    Q4_K_S file type) or Q4_K_M, with llama.cpp's default options."""
    import ctypes

    llama_cpp = pytest.importorskip("llama_cpp")
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = getattr(llama_cpp, f"LLAMA_FTYPE_MOSTLY_{FTYPES[kind]}")
    status = llama_cpp.llama_model_quantize(str(src).encode(), str(dst).encode(), ctypes.byref(params))
    if status != 0:
        raise RuntimeError(f"llama_model_quantize({src}, {kind}) failed: {status}")
    return Path(dst)


def tensor_types(path) -> dict[str, str]:
    """Each tensor's type in the GGUF at path, by name ("Q4_K", "F32"...):
    what a quantization really chose (k-quants fall back on narrow rows)."""
    import gguf

    return {t.name: t.tensor_type.name for t in gguf.GGUFReader(path).tensors}
