#!/usr/bin/env python3
"""No function longer than LIMIT lines in any source file outside the tests (the executables, the
workflow, the adapters, the pure cores, the benchmarks and the examples): a function is a brace
block opened at namespace or class level after a parameter list; lambdas and blocks inside count
towards it. Comments and literals are blanked first so that their braces do not count. The
functions that were longer when the lint came to cover them are listed in KNOWN with the length
they may not exceed (a ratchet: they may shrink, never grow, and a new one may not join them).
Prints each offender as FILE:LINE NAME (N lines), exit 1 if any."""
import pathlib
import re
import sys

LIMIT = 80
ROOT = pathlib.Path(__file__).resolve().parents[2]
SKIP = ("tests", "build", ".git")  # tests may be long: a scenario reads best in one piece

# Not yet split (issue 55): "file:function" -> its length when the lint came to cover the cores.
KNOWN = {
    "fabric/core/links.cpp:MaxMinFill::rates": 97,
    "fabric/core/shift_refine.cpp:refine_for_shift": 132,
    "fabric/core/structure.cpp:analyze_structure": 169,
    "fabric/core/tree_routing.cpp:route_tree": 121,
    "fabric/core/tree_routing.cpp:check_tree_routing": 99,
    "fabric/dot/dot_writer.cpp:to_dot": 152,
    "fabric/dot/matrix_svg.cpp:matrix_svg": 160,
    "fabric/text/ibnetdiscover_parser.cpp:parse_ibnetdiscover": 157,
    "runner/verbs/rank_send.cpp:Rank::timed_sends": 136,
    "runner/verbs/rank_setup.cpp:Rank::exchange_and_connect": 132,
}


def sources():
    for path in sorted(ROOT.rglob("*.[ch]pp")):
        rel = path.relative_to(ROOT)
        if rel.parts[0] not in SKIP and not any(p.startswith("build") for p in rel.parts):
            yield path, rel


def blank(text):
    """Comments, string and char literals replaced by spaces (newlines kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i)); i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j])); i = j
        elif text.startswith('R"', i):
            m = re.match(r'R"([^(]*)\(', text[i:])
            end = text.find(")" + m.group(1) + '"', i) if m else -1
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j])); i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + re.sub(r"[^\n]", " ", text[i + 1:j]) + c); i = j + 1
        else:
            out.append(c); i += 1
    return "".join(out)


def functions(text):
    """(name, first line, line count) of every function body at namespace or class level."""
    code = blank(text)
    stack = []  # per open brace: 'scope' (namespace/class/enum/extern) or 'function' or 'other'
    start = {}
    found = []
    last = 0  # where the text before the current brace begins
    for i, c in enumerate(code):
        if c in ";}":
            if c == "}" and stack:
                kind, at, name = stack.pop()
                if kind == "function":
                    first = code.count("\n", 0, at) + 1
                    found.append((name, first, code.count("\n", 0, i) + 1 - first + 1))
            last = i + 1
        elif c == "{":
            head = code[last:i].strip()
            inside_function = any(k != "scope" for k, _, _ in stack)
            if inside_function:
                kind = "other"
            elif re.search(r"\b(namespace|class|struct|union|enum)\b[^()]*$", head) or head.startswith('extern'):
                kind = "scope"
            elif re.search(r"\)\s*(const|noexcept|override|final|mutable|->\s*[\w:<>,\s*&]+|\s)*$", head) or \
                    re.search(r"\)\s*:\s*[\s\S]*$", head):
                kind = "function"
            else:
                kind = "other"  # an initializer list, an array
            name = re.findall(r"([~\w:]+)\s*\(", head)
            stack.append((kind, i, name[0] if name else "?"))
            last = i + 1
    return found


def main():
    bad = 0
    still = set()
    for path, rel in sources():
        for name, line, count in functions(path.read_text()):
            key = f"{rel}:{name}"
            most = KNOWN.get(key, LIMIT)
            if count > most:
                print(f"{rel}:{line} {name} ({count} lines, at most {most})")
                bad += 1
            elif key in KNOWN and count > LIMIT:
                still.add(key)
    for key in sorted(set(KNOWN) - still):  # split, renamed or gone: the list says only what is true
        print(f"{key}: listed in KNOWN but no longer over {LIMIT} lines (or gone): take it out")
        bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
