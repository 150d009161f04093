#!/usr/bin/env python3
"""Check that tinynn's C files call each other in one direction only.

    python3 scripts/check_c_layers.py [--graph] [ROOT]

Reads tinynn/**/*.c and csrc/*.c (comments and strings stripped), finds
which file defines each tnn_* function or global (static inline functions in
headers are ignored: they are part of the header's own folder and call
nothing of another file), and which tnn_* names each file uses (calls, or
a function's address taken). That gives a graph of files. It fails (exit 1)
on

  * a cycle between files, printed as a chain  a.c -> b.c (tnn_f) -> a.c (tnn_g);
  * a call from a folder to a folder that is not below it in LAYERS, printed
    as the offending call;
  * a cycle of #include "..." between tinynn's and csrc's headers;
  * a file in a folder LAYERS does not list;
  * an #include of a header of a folder above, printed as the offending
    include: no exception, so a layer below session/ never sees the session
    struct (or the trainer's, or the decoder's) and takes the parts it
    works on as arguments instead.

and otherwise prints a one-line summary and exits 0. --graph prints the file
graph (each file and what it calls, per file). ROOT (default: this
checkout) is the tree to check, holding tinynn/ and csrc/ (the tests check
a made-up one).

A name defined by several files (the backend entry points: every
csrc/backend_<name>.c defines the same calls, one per library) is used
through all of them.
"""

import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Folders from the bottom up: a folder may use the names of the folders
# before it (and its own files' names, without a cycle), never those after.
LAYERS = [
    "tinynn",  # tinynn.h, the public header (declarations only)
    "tinynn/core",  # errors, logging, the tensor table and counted copies
    "tinynn/cpu",  # the CPU kernel layer, and a session's CPU state (state.c)
    "csrc",  # one file per backend (libtinynn_<backend>)
    "tinynn/gguf",  # GGUF files: reading, mapping, writing shared metadata
    "tinynn/models",  # primitives -> blocks -> architectures, families, a frozen base
    "tinynn/graph",  # rewrites of a built training graph
    "tinynn/session",  # the session: new/free/realize, train, generate, save, checks
]

IDENT = re.compile(r"\btnn_[A-Za-z0-9_]+\b")


def strip(text):
    """Text without comments, string and char literals, or preprocessor lines."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        elif c == "#" and (i == 0 or text[i - 1] == "\n"):
            # a preprocessor line (with its continuations)
            j = i
            while True:
                k = text.find("\n", j)
                if k < 0:
                    k = n
                    break
                if text[k - 1] != "\\":
                    break
                j = k + 1
            out.append("\n")
            i = k + 1 if k < n else n
        else:
            out.append(c)
            i += 1
    return "".join(out)


def top_level(text):
    """(head, body) pairs: each top-level declaration's text before its first
    brace (or its whole text) and what its braces hold."""
    items, depth, start, brace = [], 0, 0, None
    for i, c in enumerate(text):
        if c == "{":
            if depth == 0:
                brace = i
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                j = i + 1
                # a definition ends at its brace; an initializer at its ';'
                rest = text[j : j + 200].lstrip()
                if rest.startswith(";") or text[start:brace].rstrip().endswith("="):
                    continue
                items.append((text[start:brace], text[brace:j]))
                start, brace = j, None
        elif c == ";" and depth == 0:
            if brace is not None:
                items.append((text[start:brace], text[brace:i]))
            else:
                items.append((text[start:i], ""))
            start, brace = i + 1, None
    return items


def defined_names(head):
    """The tnn_* name a top-level declaration defines, or None."""
    if re.search(r"\b(extern|typedef)\b", head):
        return None
    m = re.search(r"\b(tnn_[A-Za-z0-9_]+)\s*\(", head)
    if m and "=" not in head[: m.start()]:
        return m.group(1)
    m = re.search(r"\b(tnn_[A-Za-z0-9_]+)\s*(\[[^\]]*\])?\s*=", head)
    if m:
        return m.group(1)
    return None


def sources(root):
    files = []
    for top in ("tinynn", "csrc"):
        for d, _, names in os.walk(os.path.join(root, top)):
            for name in sorted(names):
                if name.endswith((".c", ".h")):
                    files.append(os.path.relpath(os.path.join(d, name), root))
    return sorted(files)


def layer_of(path):
    folder = os.path.dirname(path)
    for i, layer in enumerate(LAYERS):
        if folder == layer:
            return i
    return None


def find_cycle(graph):
    """One cycle of graph (a list of nodes, first == last), or None."""
    color, stack = {}, []

    def visit(u):
        color[u] = 1
        stack.append(u)
        for v in sorted(graph.get(u, ())):
            if color.get(v) == 1:
                return stack[stack.index(v) :] + [v]
            if v not in color:
                found = visit(v)
                if found:
                    return found
        stack.pop()
        color[u] = 2
        return None

    sys.setrecursionlimit(10000)
    for u in sorted(graph):
        if u not in color:
            found = visit(u)
            if found:
                return found
    return None


def main():
    args = sys.argv[1:]
    show = "--graph" in args
    roots = [a for a in args if a != "--graph"]
    root = os.path.abspath(roots[0]) if roots else ROOT
    files = sources(root)
    errors = []
    c_files = [f for f in files if f.endswith(".c")]
    headers = [f for f in files if f.endswith(".h")]

    definers, uses = {}, {}
    for f in c_files:
        with open(os.path.join(root, f), encoding="utf-8") as fh:
            text = strip(fh.read())
        used = set()
        for head, body in top_level(text):
            name = defined_names(head)
            if name and not re.search(r"\bstatic\b", head):
                definers.setdefault(name, set()).add(f)
            for m in IDENT.finditer(head + body):
                if m.group(0) != name:
                    used.add(m.group(0))
        uses[f] = used

    # file graph: f -> g, labelled with the names f uses that g defines
    graph, labels = {}, {}
    for f in c_files:
        graph[f] = set()
        for name in sorted(uses[f]):
            for g in definers.get(name, ()):
                if g != f and f not in definers[name]:
                    graph[f].add(g)
                    labels.setdefault((f, g), []).append(name)

    for f in files:
        if layer_of(f) is None:
            errors.append(f"{f}: in a folder that LAYERS (scripts/check_c_layers.py) does not list")

    cycle = find_cycle(graph)
    if cycle:
        chain = cycle[0]
        for a, b in zip(cycle, cycle[1:]):
            chain += f" -> {b} ({', '.join(labels[(a, b)][:3])})"
        errors.append("a cycle of calls between files: " + chain)

    for (f, g), names in sorted(labels.items()):
        lf, lg = layer_of(f), layer_of(g)
        if lf is not None and lg is not None and lg > lf:
            errors.append(f"{f} calls up into {g} ({', '.join(names)}): {LAYERS[lf]} may use only the folders below it")

    # #include "..." between our headers and files
    inc_graph = {}
    for f in files:
        with open(os.path.join(root, f), encoding="utf-8") as fh:
            text = fh.read()
        inc_graph[f] = set()
        for m in re.finditer(r'^\s*#\s*include\s*"([^"]+)"', text, re.M):
            target = None
            for base in (os.path.dirname(f), "tinynn"):
                cand = os.path.normpath(os.path.join(base, m.group(1)))
                if cand in files:
                    target = cand
                    break
            if target:
                inc_graph[f].add(target)
                lf, lg = layer_of(f), layer_of(target)
                if lf is not None and lg is not None and lg > lf:
                    errors.append(f"{f} includes {target}: {LAYERS[lf]} may include only the folders below it")
    hcycle = find_cycle({h: inc_graph[h] for h in headers})
    if hcycle:
        errors.append("a cycle of #include between headers: " + " -> ".join(hcycle))

    if show:
        for f in c_files:
            print(f)
            for g in sorted(graph[f]):
                print(f"    -> {g} ({', '.join(labels[(f, g)])})")
    if errors:
        for e in errors:
            print("check_c_layers: " + e)
        return 1
    n_edges = sum(len(v) for v in graph.values())
    order = " < ".join(os.path.basename(layer) for layer in LAYERS)
    print(
        f"check_c_layers: ok: {len(c_files)} C files, {len(headers)} headers, {n_edges} calls between files, "
        f"no cycles, every call and include downward ({order})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
