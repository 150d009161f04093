#!/usr/bin/env python3
"""Check the import graph of python/toy: no import circles, no upward imports.

    python3 scripts/check_py_imports.py [PACKAGE_DIR]      (default python/toy)

Every import between toy's modules counts: absolute (`toy.x`) and relative,
at the top of a file or inside a function. The subpackages of toy are layered
(RANKS below, lowest first): a module may import its own subpackage's modules
and those of the subpackages below its own, never one above or beside it.
Inside a subpackage the modules must not import each other in a circle.

Exit 0 with a one-line summary when the graph is clean; exit 1 naming each
upward import (importer -> imported, with the line) and each circle as a
chain (a -> b -> c -> a). Standard library only.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

# toy's layers, lowest first: a subpackage may import only those ranked below it.
RANKS = {
    "core": 0,  # errors and status codes, the C header's declarations (ffi), bounds, configs, memory plan
    "native": 1,  # the loaded C library and the Session over its calls
    "formats": 2,  # GGUF files: reading, writing, adapters, merging, donors
    "text": 3,  # tokenizers, chat templates, rendering conversations
    "datasets": 4,  # data readers: corpora, instruct and preference JSONL, images, batches, samples
    "recipes": 5,  # the training recipes over a Session
    "generation": 6,  # loading a model to generate with, sampling, streaming, generate, chat
    "options": 7,  # each recipe's options (typed), their checks, and their wiring to recipe and data
    "training": 8,  # a training run: run directory, checkpoints, events, plots, the step loop, resume, finetune()
    "cli": 9,  # the command lines: toy-train, toy-generate, toy-train plot
    "": 10,  # toy/__init__.py (and any module directly in toy/): the public names
}


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(["toy", *parts])


def layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and parts[1] in RANKS) else ""


def imports_of(path: Path, module: str, modules: set[str]) -> list[tuple[str, int]]:
    """(imported toy module, line) for every import in the file."""
    is_package = path.name == "__init__.py"
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names if alias.name.split(".")[0] == "toy"]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            elif (node.module or "").split(".")[0] == "toy":
                source = node.module
            else:
                continue
            for alias in node.names:
                target = f"{source}.{alias.name}"
                found.append((target if target in modules else source, node.lineno))
    return [(target, line) for target, line in found if target in modules and target != module]


def find_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One circle (a chain ending where it starts) per strongly connected
    group of modules (Tarjan's algorithm, iterative)."""
    index, low, on_stack, stack, groups = {}, {}, set(), [], []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(set(group))
    return [circle_in(graph, group) for group in groups]


def circle_in(graph: dict[str, set[str]], group: set[str]) -> list[str]:
    """A shortest circle through the group's first module (breadth-first)."""
    start = min(group)
    paths = {start: [start]}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for child in sorted(graph[node] & group):
            if child == start:
                return paths[node] + [start]
            if child not in paths:
                paths[child] = paths[node] + [child]
                queue.append(child)
    return [start, start]


def main(argv: list[str]) -> int:
    root = Path(argv[0]) if argv else Path(__file__).resolve().parent.parent / "python" / "toy"
    files = {module_name(p, root): p for p in sorted(root.rglob("*.py"))}
    modules = set(files)
    graph: dict[str, set[str]] = {m: set() for m in modules}
    problems = []
    for module, path in files.items():
        mine = layer(module)
        if mine not in RANKS:
            problems.append(f"{module}: subpackage {mine!r} has no rank in RANKS (scripts/check_py_imports.py)")
            continue
        for target, line in imports_of(path, module, modules):
            graph[module].add(target)
            theirs = layer(target)
            if theirs != mine and RANKS.get(theirs, -1) >= RANKS[mine]:
                where = f"{path.relative_to(root.parent.parent) if root.is_absolute() else path}:{line}"
                problems.append(
                    f"upward import: {module} -> {target} ({where}: {mine or 'toy'} may import only {below(mine)})"
                )
    for circle in find_circles(graph):
        problems.append("import circle: " + " -> ".join(circle))
    if problems:
        problems = list(dict.fromkeys(problems))
        print("\n".join(problems))
        print(f"check_py_imports: {len(problems)} problem(s) in {len(modules)} modules")
        return 1
    edges = sum(len(targets) for targets in graph.values())
    print(f"check_py_imports: {len(modules)} modules, {edges} imports, no circles, none upward")
    return 0


def below(layer_name: str) -> str:
    names = [name or "toy" for name, rank in sorted(RANKS.items(), key=lambda kv: kv[1]) if rank < RANKS[layer_name]]
    return ", ".join(names) if names else "its own modules"


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
