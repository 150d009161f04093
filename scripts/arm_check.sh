#!/usr/bin/env bash
# toy on 64-bit ARM, checked on an x86-64 machine: cross-compile
# libtinynn_cpu (tinynn with ggml's CPU backend) for aarch64 with Debian's
# cross toolchain, run tests/c/train_check.c under qemu-aarch64, and compare
# its figures with the same program built natively for x86-64 and run with
# TNN_CPU_KERNELS=off.
#
#   bash scripts/arm_check.sh
#   ARM_ARCH=armv8-a bash scripts/arm_check.sh      # ggml's -march for aarch64
#   ARM_CHECK_DIR=/tmp/x STEPS=10 bash scripts/arm_check.sh
#   X86_LIB_DIR=/path/to/toy/lib bash scripts/arm_check.sh  # compare with that build
#
# What it shows: the aarch64 build compiles (tinynn's own CPU kernels are
# x86-64 only; there every kernel answers "none" and ggml's NEON code does
# all the work), the kernel layer answers as tests/test_cpu_kernels.py
# expects on such a CPU, and a few AdamW steps of the default tiny llama
# give the x86-64 figures within TOLERANCE (relative): ggml's NEON and AVX
# code add in different orders, so the two agree closely, not bit for bit.
# It does not show speed: qemu emulates, and this machine has no ARM CPU.
#
# Installs gcc-aarch64-linux-gnu, g++-aarch64-linux-gnu and qemu-user-static
# with apt-get when missing (skips, exit 0, only where there is no apt-get).
# Builds go to $ARM_CHECK_DIR (default ${TMPDIR:-/tmp}/toy-arm-check), kept
# between runs: a second run rebuilds only what changed.
#
# Measured on the shared 2-core development machine (other compiles running):
# from an empty build folder 2 to 3.2 minutes (each libtinynn_cpu build 50-90
# s, the qemu run about 10 s, the x86-64 run under a second), about 20 s when
# the builds are there; the first apt-get install about 2 minutes more.
# X86_LIB_DIR names a folder holding an x86-64 libtinynn_cpu.so already built
# natively (CI passes the installed package's native build):
# no second x86-64 build, about a minute less.
# ARM_ARCH=armv8-a and armv8.2-a+dotprod gave the same figures, bit for bit
# (a float32 training step does not reach ggml's int8 dot-product code).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="${ARM_CHECK_DIR:-${TMPDIR:-/tmp}/toy-arm-check}"
arm_arch="${ARM_ARCH:-armv8.2-a+dotprod}"
steps="${STEPS:-6}"
threads="${THREADS:-2}"
tolerance="${TOLERANCE:-1e-4}"
jobs="${CMAKE_BUILD_PARALLEL_LEVEL:-2}"
sysroot=/usr/aarch64-linux-gnu
t_start=$(date +%s)
# a build folder configured from another checkout is CMake's to refuse: start it afresh
for dir in "$work/aarch64" "$work/x86_64"; do
    if [ -f "$dir/CMakeCache.txt" ] && ! grep -qx "CMAKE_HOME_DIRECTORY:INTERNAL=$root" "$dir/CMakeCache.txt"; then
        rm -rf "$dir"
    fi
done

# ---- the cross toolchain and qemu ----------------------------------------
have_tools() {
    command -v aarch64-linux-gnu-gcc >/dev/null && command -v aarch64-linux-gnu-g++ >/dev/null &&
        { command -v qemu-aarch64 >/dev/null || command -v qemu-aarch64-static >/dev/null; }
}
if ! have_tools; then
    if ! command -v apt-get >/dev/null; then
        echo "arm_check: SKIPPED: no apt-get here to install gcc-aarch64-linux-gnu," \
             "g++-aarch64-linux-gnu and qemu-user-static (install them and run again)"
        exit 0
    fi
    sudo=""
    if [ "$(id -u)" != 0 ]; then
        sudo="sudo"
    fi
    echo "arm_check: installing the aarch64 cross compilers and qemu-user-static"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq \
        gcc-aarch64-linux-gnu g++-aarch64-linux-gnu qemu-user-static >/dev/null
fi
qemu="$(command -v qemu-aarch64 || command -v qemu-aarch64-static)"
t_tools=$(date +%s)

# ---- libtinynn_cpu for both targets ----------------------------------------
# aarch64: cross-compiled, ggml for -march=$arm_arch (CMakeLists.txt turns
# GGML_NATIVE off in a cross build); x86-64: the usual native source build.
echo "arm_check: building libtinynn_cpu for aarch64 (-march=$arm_arch) and x86-64 in $work"
mkdir -p "$work"
cmake -S "$root" -B "$work/aarch64" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_TOOLCHAIN_FILE="$root/scripts/aarch64-toolchain.cmake" \
    -DGGML_CPU_ARM_ARCH="$arm_arch" >"$work/aarch64.configure.log" 2>&1 ||
    { tail -30 "$work/aarch64.configure.log"; echo "arm_check: FAILED: aarch64 configure"; exit 1; }
nice -n 10 cmake --build "$work/aarch64" --target tinynn_cpu -j "$jobs" >"$work/aarch64.build.log" 2>&1 ||
    { grep -B2 -A8 -m5 'error' "$work/aarch64.build.log" || tail -30 "$work/aarch64.build.log"
      echo "arm_check: FAILED: aarch64 build"; exit 1; }
t_arm=$(date +%s)
x86_lib="${X86_LIB_DIR:-}"
if [ -n "$x86_lib" ]; then
    [ -f "$x86_lib/libtinynn_cpu.so" ] || { echo "arm_check: FAILED: no libtinynn_cpu.so in X86_LIB_DIR=$x86_lib"; exit 1; }
    echo "arm_check: x86-64: the build in $x86_lib"
else
    x86_lib="$work/x86_64"
    cmake -S "$root" -B "$work/x86_64" -DCMAKE_BUILD_TYPE=Release >"$work/x86_64.configure.log" 2>&1 ||
        { tail -30 "$work/x86_64.configure.log"; echo "arm_check: FAILED: x86-64 configure"; exit 1; }
    nice -n 10 cmake --build "$work/x86_64" --target tinynn_cpu -j "$jobs" >"$work/x86_64.build.log" 2>&1 ||
        { grep -B2 -A8 -m5 'error' "$work/x86_64.build.log" || tail -30 "$work/x86_64.build.log"
          echo "arm_check: FAILED: x86-64 build"; exit 1; }
fi
t_x86=$(date +%s)
# the compilers' warnings, if any, from tinynn's own files (ggml's are its own)
if grep -q 'tinynn/.*warning:\|csrc/.*warning:' "$work/aarch64.build.log"; then
    echo "arm_check: warnings in tinynn's code on aarch64:"
    grep 'tinynn/.*warning:\|csrc/.*warning:' "$work/aarch64.build.log" | sort -u | head -20
fi

# ---- the check program, for each ----------------------------------------------
cflags=(-O2 -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror -I"$root/tinynn")
aarch64-linux-gnu-gcc "${cflags[@]}" "$root/tests/c/train_check.c" -o "$work/train_check.aarch64" \
    -L"$work/aarch64" -ltinynn_cpu -lm -Wl,-rpath,"$work/aarch64" ||
    { echo "arm_check: FAILED: tests/c/train_check.c does not compile for aarch64"; exit 1; }
gcc "${cflags[@]}" "$root/tests/c/train_check.c" -o "$work/train_check.x86_64" \
    -L"$x86_lib" -ltinynn_cpu -lm -Wl,-rpath,"$x86_lib" ||
    { echo "arm_check: FAILED: tests/c/train_check.c does not compile for x86-64"; exit 1; }
file "$work/train_check.aarch64" "$work/aarch64/libtinynn_cpu.so" 2>/dev/null | sed 's/^/arm_check: /' || true

# ---- run both ------------------------------------------------------------------
echo "arm_check: aarch64 under $(basename "$qemu") (qemu $("$qemu" --version | head -1 | awk '{print $3}'))"
t0=$(date +%s.%N)
status=0
env -u TNN_CPU_KERNELS -u TNN_CPU_VARIANT \
    "$qemu" -L "$sysroot" "$work/train_check.aarch64" "$steps" "$threads" >"$work/aarch64.out" 2>&1 || status=$?
t1=$(date +%s.%N)
sed 's/^/  aarch64 | /' "$work/aarch64.out"
if [ "$status" != 0 ]; then
    echo "arm_check: FAILED: the aarch64 check exited $status"
    exit 1
fi
echo "arm_check: x86-64, TNN_CPU_KERNELS=off"
status=0
env -u TNN_CPU_VARIANT TNN_CPU_KERNELS=off \
    "$work/train_check.x86_64" "$steps" "$threads" >"$work/x86_64.out" 2>&1 || status=$?
t2=$(date +%s.%N)
sed 's/^/  x86-64  | /' "$work/x86_64.out"
if [ "$status" != 0 ]; then
    echo "arm_check: FAILED: the x86-64 check exited $status"
    exit 1
fi

# ---- compare: every figure within the relative tolerance -------------------
echo "arm_check: figures, aarch64 vs x86-64 (relative tolerance $tolerance)"
if ! awk -v tol="$tolerance" '
    function abs(x) { return x < 0 ? -x : x }
    function key(line,  f) { split(line, f, " "); return f[1] == "loss" ? f[1] " " f[2] : f[1] }
    function val(line,  f) { n = split(line, f, " "); return f[n] }
    FNR == NR { if ($1 ~ /^(loss|eval_loss|update_l1)$/) { a[key($0)] = val($0); order[++k] = key($0) } next }
    $1 ~ /^(loss|eval_loss|update_l1)$/ { b[key($0)] = val($0) }
    END {
        bad = 0
        if (k == 0) { print "  no figures from aarch64"; exit 1 }
        for (i = 1; i <= k; ++i) {
            name = order[i]
            if (!(name in b)) { printf "  %-10s missing on x86-64\n", name; bad = 1; continue }
            d = abs(a[name] - b[name]); r = d / (abs(b[name]) > 0 ? abs(b[name]) : 1)
            flag = r <= tol ? "" : "  <-- over tolerance"
            if (r > tol) bad = 1
            printf "  %-10s %15.9g %15.9g   rel diff %.2e%s\n", name, a[name], b[name], r, flag
        }
        exit bad
    }' "$work/aarch64.out" "$work/x86_64.out"; then
    echo "arm_check: FAILED: aarch64 and x86-64 disagree beyond $tolerance"
    exit 1
fi

t_end=$(date +%s)
printf 'arm_check: times: tools %ds, aarch64 build %ds, x86-64 build %ds, aarch64 run (qemu) %.1fs, x86-64 run %.1fs, total %ds\n' \
    $((t_tools - t_start)) $((t_arm - t_tools)) $((t_x86 - t_arm)) \
    "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" \
    "$(awk -v a="$t1" -v b="$t2" 'BEGIN { print b - a }')" $((t_end - t_start))
echo "arm_check: OK"
