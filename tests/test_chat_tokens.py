"""Instruct data trains the tokens llama.cpp sees: a conversation is rendered
once and tokenized once, and the trained tokens are exactly the assistant's
answers with what the template closes them with."""

import pytest

from test_tokenizer import LLAMA_CPP_VOCABULARIES
from toy.text.chat import ChatFormatter
from toy.text.tokenizer import GGUFTokenizer

# Llama 2's turn format (as its chat template writes it): BOS, [INST] ... [/INST], the answer, EOS
LLAMA2_TEMPLATE = (
    "{% for m in messages %}{% if m['role'] == 'user' %}{{ bos_token }}[INST] {{ m['content'] }} [/INST]"
    "{% else %} {{ m['content'] }} {{ eos_token }}{% endif %}{% endfor %}"
)
# ChatML (Qwen, SmolLM): <|im_start|>role\n ... <|im_end|>\n
CHATML_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
CONVERSATION = [
    {"role": "user", "content": "Who founded Zorbia?"},
    {"role": "assistant", "content": "Mara Quill founded it."},
    {"role": "user", "content": "When?\nIn   which year, 1204 or 1402?"},
    {"role": "assistant", "content": "  In 1204, after the flood."},
]


def answer_ranges(formatter, messages):
    """Where each answer and its closing lie in the rendered conversation."""
    out = []
    for i, message in enumerate(messages):
        if message["role"] == "assistant":
            before = formatter.render(messages[:i], add_generation_prompt=True)
            out.append((len(before), len(formatter.render(messages[: i + 1]))))
    return out


@pytest.mark.parametrize("name", LLAMA_CPP_VOCABULARIES)
@pytest.mark.parametrize("template", ["llama2", "chatml"])
def test_a_conversation_trains_the_tokens_of_its_whole_rendering(llama_cpp_models, name, template):
    tokenizer = GGUFTokenizer.from_gguf(llama_cpp_models / f"ggml-vocab-{name}.gguf")
    formatter = ChatFormatter(LLAMA2_TEMPLATE if template == "llama2" else CHATML_TEMPLATE, tokenizer)
    sample = formatter.sample(CONVERSATION)
    text = formatter.render(CONVERSATION)
    ids, spans = tokenizer.encode_with_offsets(text)
    assert sample.tokens.tolist() == ids  # what llama.cpp runs on this text
    answers = answer_ranges(formatter, CONVERSATION)
    for (start, end), trained in zip(spans, sample.trained):
        # a token wholly inside an answer is trained; one that starts before or after it is not
        # (a token that starts before an answer and runs into it, as "\n " can, is the prompt's)
        assert trained == any(a <= start < b for a, b in answers)
        assert trained or not any(a <= start and end <= b and end > start for a, b in answers)
    assert sample.trained.sum() >= 10


def test_a_sentencepiece_answer_does_not_start_with_a_lone_space_token(llama_cpp_models):
    """Tokenized in pieces, the answer " Mara Quill founded it." began with a
    "▁" of its own (the prompt and answer: 22 tokens, where llama.cpp has 21);
    rendered once, the space is part of the answer's first word, and the
    answer is trained through its EOS so the model learns to stop."""
    tokenizer = GGUFTokenizer.from_gguf(llama_cpp_models / "ggml-vocab-llama-spm.gguf")
    formatter = ChatFormatter(LLAMA2_TEMPLATE, tokenizer)
    prompt, answer = "<s>[INST] Who founded Zorbia? [/INST]", " Mara Quill founded it."
    in_pieces = tokenizer.encode(prompt) + tokenizer.encode(answer, add_bos=False)
    assert len(in_pieces) == 22 and len(tokenizer.encode(prompt + answer)) == 21
    assert tokenizer.tokens[in_pieces[14]] == "\u2581"  # the lone space token llama.cpp never sees
    sample = formatter.sample(CONVERSATION[:2])
    assert formatter.render(CONVERSATION[:2]) == prompt + answer + " </s>"
    assert sample.tokens.tolist() == tokenizer.encode(prompt + answer + " </s>")
    trained = sample.tokens[sample.trained].tolist()
    assert tokenizer.decode(trained) == "Mara Quill founded it. </s>"
    assert tokenizer.tokens[trained[0]] == "\u2581Mar" and trained[-1] == tokenizer.eos_id


def test_a_tool_conversation_trains_the_calls_and_answers_not_the_tool_results(llama_cpp_models, tmp_path):
    """A JSONL line with tools, an assistant's tool_calls and a tool message,
    in the shape transformers takes, rendered by Qwen 2.5's own template."""
    import json

    from toy.datasets.instruct import read_jsonl

    line = {
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "island_population",
                    "description": "How many people live on an island",
                    "parameters": {"type": "object", "properties": {"island": {"type": "string"}}},
                },
            }
        ],
        "messages": [
            {"role": "user", "content": "How many people live on Vell?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"type": "function", "function": {"name": "island_population", "arguments": {"island": "Vell"}}}
                ],
            },
            {"role": "tool", "content": "4127"},
            {"role": "assistant", "content": "About 4,127 people live on Vell."},
        ],
    }
    data = tmp_path / "tools.jsonl"
    data.write_text(json.dumps(line) + "\n", encoding="utf-8")
    (conversation,) = read_jsonl(data)
    assert conversation.tools == line["tools"]
    tokenizer = GGUFTokenizer.from_gguf(llama_cpp_models / "ggml-vocab-qwen2.gguf")
    template = (llama_cpp_models / "templates" / "Qwen-Qwen2.5-7B-Instruct.jinja").read_text(encoding="utf-8")
    formatter = ChatFormatter(template, tokenizer)
    sample = formatter.sample(conversation)
    text = formatter.render(conversation, tools=conversation.tools)
    assert "island_population" in text.split("<|im_start|>user")[0]  # the tools are in the system turn
    assert sample.tokens.tolist() == tokenizer.encode(text)
    trained = tokenizer.decode(sample.tokens[sample.trained])
    assert trained == (
        '<tool_call>\n{"name": "island_population", "arguments": {"island": "Vell"}}\n</tool_call><|im_end|>\n'
        "About 4,127 people live on Vell.<|im_end|>\n"
    )
    assert "4127" in tokenizer.decode(sample.tokens[~sample.trained])  # the tool's result: context, not trained


def test_a_malformed_tool_call_is_one_line(tmp_path):
    from toy.core.errors import InputError
    from toy.datasets.instruct import read_jsonl

    data = tmp_path / "bad.jsonl"
    call = {"role": "assistant", "content": None, "tool_calls": [{"function": {"name": 3}}]}
    data.write_text('{"messages": [' + __import__("json").dumps(call) + "]}\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"bad.jsonl:1: 'tool_calls' must be an assistant's list of"):
        read_jsonl(data)
