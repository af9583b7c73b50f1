#!/usr/bin/env python3
"""The module graph of docs/structure.md, checked against the code and CMake.

1. Every project target's link dependencies (target_link_libraries in the CMakeLists) are read;
   a target may include headers of itself and of what it links, directly or through PUBLIC links.
2. Every #include of every source and header is resolved to the target whose include folder (or
   source folder) holds it; an include of a target outside that set is an edge across the graph.
3. The pure cores link no adapter: ibroute_fabric links nothing of the project, ibroute_schedule
   only ibroute_fabric, ibroute_runner only those two (what docs/structure.md draws).
4. No include climbs out of its folder with '..' (which would step past the include folders).

Prints each offence as FILE:LINE what, exit 1 if any. With --self-test, also proves that a core
file including an adapter's header is caught (the live scan's, and the file formats')."""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
CMAKE_DIRS = ["fabric", "schedule", "runner", "src"]
PURE = {"ibroute_fabric": set(), "ibroute_schedule": {"ibroute_fabric"},
        "ibroute_runner": {"ibroute_schedule", "ibroute_fabric"}}


def cmake_commands(text, name):
    """The argument lists of every NAME(...) call, comments dropped."""
    text = re.sub(r"#[^\n]*", "", text)
    for m in re.finditer(r"\b" + name + r"\s*\(", text):
        depth, i = 1, m.end()
        while depth and i < len(text):
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        yield text[m.end():i - 1].split()


def read_targets():
    """target -> {"dir", "sources", "includes", "public", "private"} from the CMakeLists."""
    targets = {}
    for d in CMAKE_DIRS:
        base = ROOT / d
        text = (base / "CMakeLists.txt").read_text()
        for kind in ("add_library", "add_executable"):
            for args in cmake_commands(text, kind):
                if len(args) < 2 or args[1] == "ALIAS":
                    continue
                srcs = [base / a for a in args[1:] if a.endswith(".cpp")]
                targets[args[0]] = {"dir": base, "sources": srcs, "includes": [], "public": set(), "private": set()}
        for args in cmake_commands(text, "target_include_directories"):
            for a in args[1:]:
                m = re.match(r"\$<BUILD_INTERFACE:\$\{CMAKE_CURRENT_SOURCE_DIR\}/(.*)>$", a)
                if m:
                    a = m.group(1)
                if a in ("PUBLIC", "PRIVATE", "INTERFACE") or a.startswith("$<"):
                    continue
                targets[args[0]]["includes"].append(base / a)
        for args in cmake_commands(text, "target_link_libraries"):
            scope = "public"
            for a in args[1:]:
                if a in ("PUBLIC", "INTERFACE"):
                    scope = "public"
                elif a == "PRIVATE":
                    scope = "private"
                elif a.startswith("ibroute"):
                    targets[args[0]][scope].add(a)
    return targets


def reachable(targets, name):
    """What NAME may include: itself, its direct links, and what they pass on PUBLIC."""
    seen = {name}
    todo = list(targets[name]["public"] | targets[name]["private"])
    while todo:
        t = todo.pop()
        if t in seen or t not in targets:
            continue
        seen.add(t)
        todo.extend(targets[t]["public"])
    return seen


def owner_of_file(targets, path):
    """The target a source or header belongs to: by its source list, else by the deepest folder
    among the targets' include folders and the folders of their sources."""
    for name, t in targets.items():
        if path in t["sources"]:
            return name
    best, depth = None, -1
    for name, t in targets.items():
        for folder in set(t["includes"]) | {s.parent for s in t["sources"]}:
            if folder.resolve() in path.parents and len(folder.parts) > depth:
                best, depth = name, len(folder.parts)
    return best


def provider_of_include(targets, including, header):
    """The target whose include folder (or the including file's own folder) holds HEADER."""
    local = including.parent / header
    if local.exists():
        return owner_of_file(targets, local.resolve())
    for name, t in targets.items():
        for folder in t["includes"]:
            if (folder / header).exists():
                return name
    return None  # a system or third-party header


def check(targets, files):
    """FILES: (path, text) pairs."""
    problems = []
    for name, deps in PURE.items():
        linked = (targets[name]["public"] | targets[name]["private"])
        if linked - deps:
            problems.append(f"{name}: a pure core links {', '.join(sorted(linked - deps))}")
    for path, text in files:
        owner = owner_of_file(targets, path)
        if owner is None:
            continue
        allowed = reachable(targets, owner)
        for no, line in enumerate(text.splitlines(), 1):
            m = re.match(r'\s*#\s*include\s*[<"]([^>"]+)[>"]', line)
            if not m:
                continue
            header = m.group(1)
            rel = path.relative_to(ROOT)
            if ".." in pathlib.PurePosixPath(header).parts:
                problems.append(f"{rel}:{no} includes '{header}' through '..'")
                continue
            provider = provider_of_include(targets, path, header)
            if provider and provider not in allowed:
                problems.append(f"{rel}:{no} ({owner}) includes '{header}' of {provider}, which it does not link")
    return problems


def project_files():
    for d in CMAKE_DIRS:
        for p in sorted((ROOT / d).rglob("*")):
            if p.suffix in (".cpp", ".hpp") and p.is_file():
                yield p.resolve(), p.read_text(errors="replace")


def self_test(targets):
    """A core file (not written: its path and text only) that includes an adapter's header must be
    caught: the live scan's from the fabric core, the file formats' (format.hpp, schedule_io's,
    spelt as the core's own headers are) from the planner core."""
    live = next((ROOT / "fabric/live/include").rglob("*.hpp")).relative_to(ROOT / "fabric/live/include")
    cases = [("ibroute_fabric", ROOT / "fabric" / "core", live.as_posix()), ("ibroute_schedule", ROOT / "schedule" / "core", "ibroute/schedule/format.hpp")]
    for target, folder, header in cases:
        probe = (folder / "zz_module_graph_probe.cpp").resolve()
        targets[target]["sources"].append(probe)
        try:
            found = check(targets, [(probe, f'#include "{header}"\n')])
        finally:
            targets[target]["sources"].pop()
        if not any("zz_module_graph_probe" in p for p in found):
            return False
    return True


def main():
    targets = read_targets()
    for name in PURE:
        if name not in targets:
            print(f"module_graph: target {name} not found in the CMakeLists")
            return 1
    problems = check(targets, list(project_files()))
    for p in problems:
        print(p)
    if "--self-test" in sys.argv and not self_test(targets):
        print("module_graph: the self-test's core file including a live-scan header was not caught")
        return 1
    print(f"module_graph: {len(targets)} targets, {len(problems)} includes across the graph")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
