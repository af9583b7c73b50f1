#!/usr/bin/env python3
"""Every C++ source and header of the project as .clang-format lays it out (`clang-format
--dry-run -Werror`), the tests, benchmarks and examples included. The files that were not when
the check came are listed in tests/lint/unformatted.txt: a ratchet, as the function-length lint
keeps one. A listed file leaves the list once formatted (a listed file that conforms, or is gone,
fails the check, so the list only shrinks); a new file, or one taken off, must conform.
Formatting a listed file can lengthen its functions past function_length.py's limit: split them
then. Prints each offender, exit 1 if any; --write-list rewrites the list from today's tree."""
import pathlib
import re
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
LIST = ROOT / "tests" / "lint" / "unformatted.txt"


def sources():
    for path in sorted(ROOT.rglob("*.[ch]pp")):
        rel = path.relative_to(ROOT)
        if not any(p.startswith("build") or p.startswith(".") for p in rel.parts):
            yield rel.as_posix()


def unformatted(tool, files):
    """The files clang-format would change (one run over all of them; it names each file it would)."""
    out = set()
    for i in range(0, len(files), 100):
        run = subprocess.run([tool, "--dry-run", "-Werror", *files[i:i + 100]], cwd=ROOT, capture_output=True, text=True)
        for line in run.stderr.splitlines():
            m = re.match(r"(.+?):\d+:\d+: (error|warning):", line)
            if m:
                out.add((ROOT / m.group(1)).resolve().relative_to(ROOT).as_posix())
        if run.returncode != 0 and not any(f in out for f in files[i:i + 100]):
            raise SystemExit(f"format_check: clang-format failed: {run.stderr.strip()[:300]}")
    return out


def main():
    tool = shutil.which("clang-format")
    if not tool:
        print("format_check: clang-format is not installed (scripts/deps.sh installs it)")
        return 1
    files = list(sources())
    bad = unformatted(tool, files)
    if "--write-list" in sys.argv:
        LIST.write_text("# Not yet as .clang-format lays them out (tests/lint/format_check.py); formatted files leave.\n" +
                        "".join(f + "\n" for f in sorted(bad)))
        print(f"format_check: {len(bad)} of {len(files)} files listed")
        return 0
    listed = {l.strip() for l in LIST.read_text().splitlines() if l.strip() and not l.startswith("#")}
    problems = [f"{f}: not as .clang-format lays it out (clang-format -i {f})" for f in sorted(bad - listed)]
    problems += [f"{f}: listed in {LIST.name} but formatted (or gone): take it out" for f in sorted(listed - bad)]
    for p in problems:
        print(p)
    print(f"format_check: {len(files)} files, {len(bad)} of them listed as not yet formatted, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
