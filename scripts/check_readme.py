#!/usr/bin/env python3
"""Fails when a C++ block of README.md is not, line for line, a snippet of an example program
(examples/*.cpp, or *.cu for the GPU example).

Examples mark each snippet the README shows with `// README: <name>` ... `// README: end`; the
programs run in CI (scripts/examples.sh) and check their results, so a README block that matches
a snippet shows code that compiles and numbers that are true. Indentation is ignored; everything
else must match. Python 3 standard library only.

    scripts/check_readme.py     exit 0 when every ```cpp block of README.md is a snippet
"""

import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
BLOCK = re.compile(r"^```cpp\n(.*?)^```", re.MULTILINE | re.DOTALL)
START = re.compile(r"^\s*// README: (\S+)\s*$")
END = re.compile(r"^\s*// README: end\s*$")


def normalise(lines):
    return [line.strip() for line in lines if line.strip()]


def snippets():
    found = {}
    examples = ROOT / "examples"
    for path in sorted([*examples.glob("*.cpp"), *examples.glob("*.cu")]):
        name, body = None, []
        for number, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
            if END.match(line):
                if name is None:
                    sys.exit(f"check_readme.py: {path.name}:{number}: README: end without a start")
                found[f"{path.name}:{name}"] = normalise(body)
                name = None
            elif START.match(line):
                name, body = START.match(line).group(1), []
            elif name is not None:
                body.append(line)
        if name is not None:
            sys.exit(f"check_readme.py: {path.name}: snippet '{name}' has no README: end")
    return found


def main():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    known = snippets()
    bad = 0
    blocks = BLOCK.findall(readme)
    for block in blocks:
        lines = normalise(block.split("\n"))
        if not any(lines == body for body in known.values()):
            first = lines[0] if lines else "(empty)"
            print(f"check_readme.py: README.md has a C++ block (starting '{first}') that is not "
                  "a snippet of examples/*.cpp or *.cu; copy it from one (between // README: markers)",
                  file=sys.stderr)
            bad += 1
    if bad:
        return 1
    print(f"check_readme.py: all {len(blocks)} C++ blocks of README.md are snippets of "
          "examples/ that run in CI")
    return 0


if __name__ == "__main__":
    sys.exit(main())
