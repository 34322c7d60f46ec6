#!/usr/bin/python3
"""The layer rule (docs/ARCHITECTURE.md), checked on every source file.

Each folder is a layer with a rank; a file may include project headers of
its own rank or lower, never higher. The pure C++ layers (ISA, numerics,
timing, traces, file I/O, firmware stubs) include no SystemC or TLM header.
Exits 1 listing every violation as FILE:LINE: what; prints a closing count.
"""
import pathlib
import re
import sys

# (folder, rank, pure): the longest matching folder decides.
LAYERS = [
    ("models/isa", 0, True),
    ("models/numerics", 1, True),
    ("models/state", 2, True),
    ("models/timing", 2, True),
    ("models/trace", 2, True),
    ("platform/io", 2, True),
    ("firmware_stubs", 3, True),
    ("models/sc", 4, False),
    ("platform/core", 5, False),
    ("platform/cosim", 6, False),
    ("platform/run", 7, False),
    ("platform/dpi", 8, False),
    ("platform/sweep", 8, False),
    ("platform/cli", 9, False),
    ("platform/python", 8, False),
]
SYSTEMC = re.compile(r'#\s*include\s*[<"](systemc|systemc\.h|tlm|tlm\.h|tlm_utils/[^>"]*|sysc/[^>"]*)[>"]')
PROJECT = re.compile(r'#\s*include\s*"([^"]+)"')


def layer_of(path):
    best = None
    for folder, rank, pure in LAYERS:
        if path == folder or path.startswith(folder + "/"):
            if best is None or len(folder) > len(best[0]):
                best = (folder, rank, pure)
    return best


def check(root):
    problems = []
    files = 0
    for p in sorted(root.rglob("*")):
        if p.suffix not in (".h", ".hpp", ".cpp", ".cc") or not p.is_file():
            continue
        rel = p.relative_to(root).as_posix()
        if rel.startswith(("build", ".git")):
            continue
        me = layer_of(rel)
        if me is None:
            continue
        files += 1
        for n, line in enumerate(p.read_text(errors="replace").splitlines(), 1):
            if me[2] and SYSTEMC.search(line):
                problems.append(f"{rel}:{n}: {me[0]} is pure C++ but includes SystemC/TLM: {line.strip()}")
            m = PROJECT.search(line)
            if not m:
                continue
            dep = layer_of(m.group(1))
            if dep is not None and dep[1] > me[1]:
                problems.append(
                    f"{rel}:{n}: {me[0]} (rank {me[1]}) includes the higher layer {dep[0]} "
                    f"(rank {dep[1]}): {m.group(1)}")
    return files, problems


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    files, problems = check(root)
    for p in problems:
        print(p)
    print(f"layer rule: {files} files checked, {len(problems)} violations")
    return 1 if problems else 0


def self_test():
    """The checker itself catches each kind of violation (a test that can fail)."""
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        root = pathlib.Path(d)
        cases = {
            "firmware_stubs/a.h": "#include <systemc>\n",
            "models/trace/b.cpp": "#include <tlm_utils/simple_target_socket.h>\n",
            "models/isa/c.h": '#include "models/sc/memory/mem_port.h"\n',
            "models/sc/d.h": '#include "platform/core/tpb_core.h"\n',
            "models/sc/ok.h": '#include <systemc>\n#include "models/isa/encodings.h"\n',
            "platform/cli/ok.cpp": '#include "platform/core/tpb_core.h"\n',
        }
        for rel, text in cases.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text)
        files, problems = check(root)
        bad = sorted(p.split(":")[0] for p in problems)
        want = ["firmware_stubs/a.h", "models/isa/c.h", "models/sc/d.h", "models/trace/b.cpp"]
        if files != 6 or bad != want:
            print(f"self-test FAILED: {files} files, violations in {bad}, wanted {want}")
            return 1
    print("layer rule self-test: 4 violations found in 6 files, as planted")
    return 0


if __name__ == "__main__":
    sys.exit(main())
