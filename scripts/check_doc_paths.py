#!/usr/bin/python3
"""Every path of the tree that the docs name in `code` exists.

Reads README.md, docs/*.md and every README.md below the top folders; a
`code` span that starts with a top folder of the tree (models/, platform/,
docs/, ...) is a path, `{a,b}` alternatives expanded; one holding <...>, *,
or $ is a pattern and not checked. Exits 1 listing each missing path as
DOC:LINE: PATH (a doc that lags a move).
"""
import pathlib
import re
import sys

TOPS = ("models/", "platform/", "firmware_stubs/", "sc_tests/", "scripts/", "traces/", "bench/",
        "cmake/", "docs/", "examples/", ".ci/")


def named_paths(line):
    for m in re.finditer(r"`([^`\s]+)`", line):
        t = re.sub(r"\(.*$", "", m.group(1)).rstrip(".,;:)")
        if not t.startswith(TOPS) or any(c in t for c in "<*$"):
            continue
        t = t.split(":")[0]
        alt = re.search(r"\{([^}]*)\}", t)
        if alt:
            yield from (t[:alt.start()] + a + t[alt.end():] for a in alt.group(1).split(","))
        else:
            yield t


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    docs = [root / "README.md", *sorted((root / "docs").glob("*.md"))]
    docs += sorted(p for p in root.glob("*/**/README.md")
                   if not p.relative_to(root).parts[0].startswith(("build", ".")))
    missing = []
    for doc in docs:
        for n, line in enumerate(doc.read_text().splitlines(), 1):
            missing += [f"{doc.relative_to(root)}:{n}: {p}" for p in named_paths(line)
                        if not (root / p).exists()]
    for m in missing:
        print(m)
    print(f"doc paths: {len(docs)} docs read, {len(missing)} paths that do not exist")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
