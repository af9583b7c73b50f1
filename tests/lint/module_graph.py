#!/usr/bin/env python3
"""The module graph of docs/structure.md, checked against the code and CMake.

1. Every project target's link dependencies (target_link_libraries in the CMakeLists) are read;
   a target may include headers of itself and of what it links, directly or through PUBLIC links.
2. Every #include of every source and header is resolved to the target whose include folder (or
   source folder) holds it; an include of a target outside that set is an edge across the graph.
3. The pure cores link no adapter: ibroute_fabric links nothing of the project, ibroute_schedule
   only ibroute_fabric, ibroute_runner only those two (what docs/structure.md draws).
4. No include climbs out of its folder with '..' (which would step past the include folders).
5. The folders stand in layers, executables over the workflow over the adapters over the pure
   cores (LAYERS): no file includes one of a folder above its own, no target links one above its
   own, and every source folder has a layer (a new folder is placed before it is used).
6. The graph drawn in docs/structure.md (a line per target: its folder and what it links, under
   its layer's name) is CMake's: an edge either has and the other does not, a target one of them
   lacks, a folder not the target's or a target under another layer's name is an offence.

Prints each offence as FILE:LINE what, exit 1 if any. With --self-test, also proves that a core
file including an adapter's header is caught (the live scan's, and the file formats')."""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
CMAKE_DIRS = ["fabric", "schedule", "runner", "src"]
PURE = {"ibroute_fabric": set(), "ibroute_schedule": {"ibroute_fabric"},
        "ibroute_runner": {"ibroute_schedule", "ibroute_fabric"}}


# Top to bottom. A folder may use its own layer and those below it.
LAYERS = [
    ("executables", ["src/cli", "src/run"]),
    ("workflow", ["src/workflow"]),
    ("adapters", ["src/store", "fabric/live", "fabric/text", "fabric/dot", "schedule/io", "schedule/peer", "runner/verbs",
                  "runner/mpi", "runner/io"]),
    ("cores", ["fabric/core", "fabric/include", "schedule/core", "schedule/include", "runner/core", "runner/include"]),
]


def layer_of(path):
    """(index, name) of the layer whose folder holds PATH (an absolute path), or None."""
    rel = pathlib.PurePosixPath(path.relative_to(ROOT)).as_posix()
    best = None
    for index, (name, folders) in enumerate(LAYERS):
        for folder in folders:
            if rel.startswith(folder + "/") and (best is None or len(folder) > best[2]):
                best = (index, name, len(folder))
    return best[:2] if best else None


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


def resolve_include(targets, including, header):
    """(target, file) holding HEADER: the including file's own folder, else a target's include
    folder; (None, None) for a system or third-party header."""
    local = including.parent / header
    if local.exists():
        return owner_of_file(targets, local.resolve()), local.resolve()
    for name, t in targets.items():
        for folder in t["includes"]:
            if (folder / header).exists():
                return name, (folder / header).resolve()
    return None, None


def layer_problems(targets, path, no, header, included):
    """An include of a folder above the including file's own (LAYERS)."""
    mine, theirs = layer_of(path), layer_of(included)
    if mine and theirs and theirs[0] < mine[0]:
        return [f"{path.relative_to(ROOT)}:{no} ({mine[1]}) includes '{header}' of {included.parent.relative_to(ROOT)} ({theirs[1]}), a layer above"]
    return []


def target_layers(targets):
    """Every target's folder placed in a layer, and no target linking one above its own."""
    problems, layer = [], {}
    for name, t in targets.items():
        folders = {s.parent for s in t["sources"]}
        if not folders:
            continue  # an interface target (the version)
        places = {layer_of(f / "x") for f in folders}
        if None in places:
            problems.append(f"{name}: sources in a folder with no layer ({', '.join(sorted(str(f.relative_to(ROOT)) for f in folders))}); add it to LAYERS")
            continue
        layer[name] = max(places)  # the lowest layer its sources are in
    for name, t in targets.items():
        for dep in t["public"] | t["private"]:
            if name in layer and dep in layer and layer[dep][0] < layer[name][0]:
                problems.append(f"{name} ({layer[name][1]}) links {dep} ({layer[dep][1]}), a layer above")
    return problems


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
        if layer_of(path) is None:
            problems.append(f"{path.relative_to(ROOT)}: a folder with no layer; add it to LAYERS")
        for no, line in enumerate(text.splitlines(), 1):
            m = re.match(r'\s*#\s*include\s*[<"]([^>"]+)[>"]', line)
            if not m:
                continue
            header = m.group(1)
            rel = path.relative_to(ROOT)
            if ".." in pathlib.PurePosixPath(header).parts:
                problems.append(f"{rel}:{no} includes '{header}' through '..'")
                continue
            provider, included = resolve_include(targets, path, header)
            if provider and provider not in allowed:
                problems.append(f"{rel}:{no} ({owner}) includes '{header}' of {provider}, which it does not link")
            if included:
                problems += layer_problems(targets, path, no, header, included)
    return problems + target_layers(targets)


def project_files():
    for d in CMAKE_DIRS:
        for p in sorted((ROOT / d).rglob("*")):
            if p.suffix in (".cpp", ".hpp") and p.is_file():
                yield p.resolve(), p.read_text(errors="replace")


STRUCTURE = ROOT / "docs" / "structure.md"


def drawn_graph(text):
    """{target: (layer, folder, {links})} from the graph's code block after '## The module graph'."""
    block = text.split("## The module graph", 1)[-1].split("```text", 1)[-1].split("```", 1)[0]
    graph, layer = {}, None
    for line in block.splitlines():
        if line and not line.startswith(" "):
            layer = line.strip()
        elif "→" in line:
            left, right = line.split("→", 1)
            name, folder = left.split()
            graph[name] = (layer, folder, set() if right.strip() == "—" else set(right.split()))
    return graph


def drawing_problems(targets, text):
    """Where the drawn graph and CMake's differ (interface targets, with no sources, left out)."""
    real = {n: t for n, t in targets.items() if t["sources"]}
    drawn = drawn_graph(text)
    problems = [f"{STRUCTURE.name}: {n} is drawn but is no target in the CMakeLists" for n in sorted(set(drawn) - set(real))]
    problems += [f"{STRUCTURE.name}: target {n} is not drawn" for n in sorted(set(real) - set(drawn))]
    for name in sorted(set(drawn) & set(real)):
        layer, folder, links = drawn[name]
        t = real[name]
        linked = {d for d in t["public"] | t["private"] if d in real}
        for d in sorted(links - linked):
            problems.append(f"{STRUCTURE.name}: {name} → {d} is drawn, CMake has no such link")
        for d in sorted(linked - links):
            problems.append(f"{STRUCTURE.name}: {name} links {d} in CMake, not drawn")
        folders = {s.parent.relative_to(ROOT).as_posix() for s in t["sources"]}
        if folder not in folders:
            problems.append(f"{STRUCTURE.name}: {name} is drawn in {folder}, its sources are in {', '.join(sorted(folders))}")
        place = layer_of(ROOT / folder / "x")
        if not place or place[1] != layer:
            problems.append(f"{STRUCTURE.name}: {name} is drawn under '{layer}', its folder {folder} is in {place[1] if place else 'no layer'}")
    return problems


def self_test(targets):
    """Files (not written: their path and text only) and links that break the graph must be
    caught: a core file including an adapter's header (the live scan's from the fabric core, the
    file formats' format.hpp, spelt as the core's own headers are, from the planner core); a
    workflow file including a header of the executables above it (the layer rule alone: the link
    rule is given that link); the run's executable code back in runner/ (the old src <-> runner
    cycle: a folder with no layer); the workflow linking the executables' library."""
    live = next((ROOT / "fabric/live/include").rglob("*.hpp")).relative_to(ROOT / "fabric/live/include")
    cases = [("ibroute_fabric", ROOT / "fabric" / "core", live.as_posix(), "which it does not link"),
             ("ibroute_schedule", ROOT / "schedule" / "core", "ibroute/schedule/format.hpp", "which it does not link"),
             ("ibroute_workflow", ROOT / "src" / "workflow", "dispatch.hpp", "a layer above"),
             ("ibroute_runner_verbs", ROOT / "runner" / "app", "dispatch.hpp", "no layer")]
    for target, folder, header, words in cases:
        probe = (folder / "zz_module_graph_probe.cpp").resolve()
        targets[target]["sources"].append(probe)
        targets[target]["private"].add("ibroute_cli")  # so that only the layers can object
        linked = target != "ibroute_fabric" and target != "ibroute_schedule"
        if not linked:
            targets[target]["private"].discard("ibroute_cli")
        try:
            found = check(targets, [(probe, f'#include "{header}"\n')])
        finally:
            targets[target]["sources"].pop()
            targets[target]["private"].discard("ibroute_cli")
        if not any("zz_module_graph_probe" in p and words in p or words == "no layer" and words in p for p in found):
            print(f"module_graph: self-test: {folder.relative_to(ROOT)} including '{header}' was not caught ({words})")
            return False
    targets["ibroute_workflow"]["public"].add("ibroute_cli")
    try:
        found = check(targets, [])
    finally:
        targets["ibroute_workflow"]["public"].discard("ibroute_cli")
    if not any(p.startswith("ibroute_workflow (workflow) links ibroute_cli") for p in found):
        print("module_graph: self-test: the workflow linking ibroute_cli was not caught")
        return False
    text = STRUCTURE.read_text()
    extra = text.replace("→ ibroute_schedule_io\n", "→ ibroute_schedule_io ibroute_runner_verbs\n", 1)
    moved = text.replace("ibroute_fabric_dot    fabric/dot ", "ibroute_fabric_dot    src/cli    ", 1)
    if extra == text or moved == text or not drawing_problems(targets, extra) or not drawing_problems(targets, moved):
        print("module_graph: self-test: an edge CMake does not have, or a target drawn in the wrong folder, was not caught")
        return False
    return True


def main():
    targets = read_targets()
    for name in PURE:
        if name not in targets:
            print(f"module_graph: target {name} not found in the CMakeLists")
            return 1
    problems = check(targets, list(project_files())) + drawing_problems(targets, STRUCTURE.read_text())
    for p in problems:
        print(p)
    if "--self-test" in sys.argv and not self_test(targets):
        return 1
    print(f"module_graph: {len(targets)} targets, {len(problems)} offences against the graph")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
