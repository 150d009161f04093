#!/usr/bin/env bash
# The form CI holds the code to (.ci/run runs this after the tests):
#
#   bash scripts/lint.sh [--install]
#
#   ruff check, ruff format --check   python/, tests/, benchmarks/, scripts/ ([tool.ruff])
#   mypy                              the public Python API ([tool.mypy]: files)
#   clang-format --dry-run -Werror    tinynn/ and csrc/ (.clang-format)
#   scripts/check_c_layers.py         no call or include circle in C, every call downward
#   scripts/check_py_imports.py       no import circle in python/toy, every import downward
#   scripts/check_commit_subjects.py  commit subjects of at most 72 characters (from issue 66 on)
#
# --install first installs the pinned tools: pyproject.toml's "lint" extra,
# read from there so that the pins live in one place.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if [ "${1:-}" = "--install" ]; then
    tools=$(python3 -c 'import tomllib; print(" ".join(tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["lint"]))')
    # shellcheck disable=SC2086
    pip install -q $tools
fi

status=0
run() {
    echo "== $*"
    "$@" || status=1
}
run ruff check python tests benchmarks scripts
run ruff format --check python tests benchmarks scripts
run mypy
# shellcheck disable=SC2046
run clang-format --dry-run -Werror $(git ls-files 'tinynn/*.c' 'tinynn/*.h' 'csrc/*.c' 'csrc/*.h')
run python3 scripts/check_c_layers.py
run python3 scripts/check_py_imports.py
run python3 scripts/check_commit_subjects.py
if [ "$status" -ne 0 ]; then
    echo "lint: failed (the checks above marked ==); ruff format and clang-format -i fix the form" >&2
fi
exit "$status"
