#!/usr/bin/python3
"""The layer rule (docs/ARCHITECTURE.md), checked on every source file.

Each folder is a layer with a rank; a file may include project headers of
its own rank or lower, never higher. The pure C++ layers (ISA, numerics,
state, timing, traces, file I/O, firmware stubs) include no SystemC or TLM
header. Exits 1 listing every violation as FILE:LINE: what; prints a closing
count.

The same list draws the folder map of docs/ARCHITECTURE.md:
  check_layers.py --map              prints it
  check_layers.py --check-map DOC    exit 1 when DOC's map is not that one
  check_layers.py --write-map DOC    puts it into DOC

The Python package (platform/python/tpbsim) has a rule of its own, checked by
  check_layers.py --python [ROOT]
each module a rank (PY_LAYERS) importing modules of its rank or lower (an
import inside a function counts), no import cycle, and no module using a
module-level private name (one that begins with _) of another: package-internal
modules are named _x, and their public names are what the package uses.
"""
import ast
import pathlib
import re
import sys
import textwrap

# (folder, rank, pure, library, what it holds): a file's layer is the longest
# folder that holds it. Rank None: a heading of the folder map, no layer.
# Library: the CMake target its sources build (tpbsim_layer() in
# CMakeLists.txt, or add_library / pybind11_add_module in the folder's own
# CMakeLists.txt); None: its parent's. The map lists the folders in this
# order, a folder under the one before it indented; each top-level folder is
# one band of ranks (models/ 0-4, firmware_stubs/ 5, platform/ 6-10), so a
# file's folder says its rank.
LAYERS = [
    ("platform", None, False, None, "the cores, and everything that runs them"),
    ("platform/cli", 10, False, "tpb_cli",
     "tpbsim run | sweep | check | asm | disasm | convert (Boost.Program_options)"),
    ("platform/sweep", 9, False, "tpb_sweep",
     "tpbsim sweep: plan, run points, collect, plot (plot_sweep.py); the local, GNU parallel "
     "and Slurm runners over one way to start a process (docs/SWEEPS.md)"),
    ("platform/python", 9, False, "_tpbsim",
     "import tpbsim: the pybind11 extension over the run API, the package (docs/PYTHON.md)"),
    ("platform/dpi", 9, False, "tpbsim_dpi",
     "libtpbsim_dpi: the model behind a C ABI and a DPI-C package (docs/COSIM.md)"),
    ("platform/run", 8, False, "tpb_run",
     "the run API: run options, the one profile load, Session (a device of 1..N cores, any "
     "number per process), memories as arrays and .npy files, a run's outputs (OutputSet), "
     "--load / --dump specs, stop signals"),
    ("platform/cosim", 7, False, "tpb_cosim",
     "co-simulation: the block harness, one driver per RTL block, the RTL (rtl/), testbenches "
     "(tb/), WordScoreboard, MemoryTap"),
    ("platform/core", 6, False, "tpb_core",
     "TpbCore: one NeuronCore, owns and binds every module below; Profile: its checked "
     "configuration; Device: 1..N cores sharing one HBM; DeviceRun: the one way cores run"),
    ("platform/io", 6, True, "tpb_io", "pure C++: NumPy .npy read / write"),
    ("firmware_stubs", 5, True, "tpb_fw",
     "pure C++: the engines' firmware as exact kernels (not stubs: each computes its "
     "instruction's exact result), as bundles {name, VA, issue cycles, trips, step, stream} "
     "on the kernel interface (models/kernel); builtin_kernels(), the registry of them all"),
    ("firmware_stubs/common", 5, True, None,
     "builtin_kernels (the registry of every kernel), resolve_pattern, pattern walks, host "
     "threads, the vector instructions' kernel shape, the nop"),
    ("firmware_stubs/pool", 5, True, None, "TensorDequantize, iota"),
    ("firmware_stubs/act", 5, True, None, "activation (the ACT engine's; SPEC §18)"),
    ("firmware_stubs/dve", 5, True, None,
     "QuantizeMX, tensor_copy, the vector instructions of SPEC §18"),
    ("firmware_stubs/pe", 5, True, None, "ldweights / matmul (MX and plain)"),
    ("firmware_stubs/sfu", 5, True, None, "TQUANT"),
    ("models", None, False, None, "the model: pure C++ below, the SystemC modules (sc/) on top"),
    ("models/sc", 4, False, "tpb_sc", "SystemC / TLM-2.0 modules"),
    ("models/sc/memory", 4, False, None,
     "PartitionedMemory (SBUF quadrant, PSUM), HbmMemory, TileFileTarget, AddressRouter, "
     "SemaphoreBank, EngineRegisterFile, InstructionQueue, MemPort, BandwidthShare, "
     "BandwidthArbiter, mem_access_cost (THE cost of a memory access)"),
    ("models/sc/engine", 4, False, None,
     "Sequencer (one per queue: compute engine or DMA queue; its kernels' view, its DMA "
     "queue role and its clock in files of their own), KernelInfoTable, DmaEngines (the "
     "core's 16 DMA engines), dma_check (a descriptor's run-time checks), timing_config.h "
     "(the profile turned into sc_time: the only place)"),
    ("models/kernel", 3, True, "tpb_kernel",
     "pure C++: the kernel interface: Kernel, Bundle, KernelContext (what a kernel reaches), "
     "EngineState, KernelRegistry (a worker by VA, its bundles' costs, execute)"),
    ("models/state", 2, True, "tpb_state",
     "pure C++: architectural state the kernels and the targets share (the SFU tile file)"),
    ("models/timing", 2, True, "tpb_timing",
     "pure C++: the table of timing fields, the integer timing profile (JSON load / merge / "
     "dump), IssuePipeline (an engine's issue timing: units, interlock), AccessPattern (the "
     "wide-stride cost of a stream's accesses)"),
    ("models/trace", 2, True, "tpb_trace",
     "pure C++: timestamped recorder, VCD / Perfetto / stats writers"),
    ("models/race", 2, True, "tpb_race",
     "pure C++: the race check (SPEC §14): happens-before detector, vector clocks, shadow "
     "memory, the semaphore plan, the report"),
    ("models/numerics", 1, True, "tpb_numerics",
     "pure C++: every numeric format, dequant word streams, MX block quantize (the scale "
     "rule, the DVE's block, the host's quantizers), element conversion and add"),
    ("models/isa", 0, True, "tpb_isa",
     "pure C++: the opcode table, encodings (static_asserted), predicates, checker, name "
     "tables, lexer, encoder, formatter, program reader"),
]
SYSTEMC = re.compile(r'#\s*include\s*[<"](systemc|systemc\.h|tlm|tlm\.h|tlm_utils/[^>"]*|sysc/[^>"]*)[>"]')
PROJECT = re.compile(r'#\s*include\s*"([^"]+)"')
MAP_BEGIN = "<!-- folder map: scripts/check_layers.py --write-map docs/ARCHITECTURE.md -->"
MAP_END = "<!-- end of the folder map -->"


def layer_of(path):
    best = None
    for folder, rank, pure, _, _ in LAYERS:
        if rank is None:
            continue
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
            if rel.startswith(("models/", "platform/", "firmware_stubs/")):
                problems.append(f"{rel}: its folder has no layer: add it to LAYERS "
                                "(scripts/check_layers.py), with its rank and what it holds")
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
    return files, problems + check_cmake(root)


LAYER_CALL = re.compile(r"^\s*tpbsim_layer\(\s*([\w:]+)\s+([\w/]+)", re.M)


def check_cmake(root):
    """CMake cuts the libraries as the folders are: each layer's library is
    made for its folder (tpbsim_layer(LIB FOLDER) in CMakeLists.txt, or
    add_library / pybind11_add_module in the folder's own CMakeLists.txt), and
    every tpbsim_layer() is a layer's. A tree without CMakeLists.txt: nothing."""
    top = root / "CMakeLists.txt"
    if not top.is_file():
        return []
    calls = set(LAYER_CALL.findall(top.read_text()))
    problems = []
    for folder, _, _, lib, _ in LAYERS:
        if lib is None or (lib, folder) in calls:
            continue
        own = root / folder / "CMakeLists.txt"
        made = re.compile(rf"(add_library|pybind11_add_module)\(\s*{re.escape(lib)}\b")
        if own.is_file() and made.search(own.read_text()):
            continue
        problems.append(f"CMakeLists.txt: no library {lib} for {folder} (its layer in "
                        f"scripts/check_layers.py): tpbsim_layer({lib} {folder})")
    listed = {(lib, folder) for folder, _, _, lib, _ in LAYERS if lib}
    for lib, folder in sorted(calls - listed):
        problems.append(f"CMakeLists.txt: tpbsim_layer({lib} {folder}) is not a layer's folder "
                        "and library in scripts/check_layers.py LAYERS")
    return problems


# --------------------------------------------------------------- the folder map

def band(folder):
    """The drawing's bands: the top-level folders (platform/, firmware_stubs/, models/)."""
    return folder.split("/", 1)[0]


def folder_map():
    """The map's text: one line per folder (wrapped), a rule between bands,
    then the ranks, lowest first."""
    lines, heads, last_band = [], [], None
    for folder, rank, _, lib, what in LAYERS:
        b = band(folder)
        if last_band is not None and b != last_band:
            lines.append(" " + "\u2500" * 79)
            heads = []
        last_band = b
        heads = [h for h in heads if folder.startswith(h + "/")]
        name = folder[len(heads[-1]) + 1:] if heads else folder
        label = " " + "  " * len(heads) + name + "/"
        body = textwrap.wrap(f"[{lib}] {what}" if lib else what, 80 - 22)
        lines.append(label.ljust(22) + body[0] if len(label) < 22 else label + " " + body[0])
        lines += [" " * 22 + more for more in body[1:]]
        heads.append(folder)
    ranks = {}
    for folder, rank, _, _, _ in LAYERS:
        parent = [f for f, r, _, _, _ in LAYERS if folder.startswith(f + "/") and r == rank]
        if rank is not None and not parent:
            ranks.setdefault(rank, []).append(folder.rsplit("/", 1)[-1])
    order = " < ".join(", ".join(sorted(ranks[r])) for r in sorted(ranks))
    return ("```\n" + "\n".join(lines) + "\n```\n\nRanks, lowest first: " + order + ".\n"
            "[name]: the CMake library the folder's sources build.\n")


def map_in(doc_text):
    if MAP_BEGIN not in doc_text or MAP_END not in doc_text:
        return None
    return doc_text.split(MAP_BEGIN, 1)[1].split(MAP_END, 1)[0].strip("\n") + "\n"


def check_map(doc):
    text = pathlib.Path(doc).read_text()
    have = map_in(text)
    if have is None:
        print(f"{doc}: no folder map (between '{MAP_BEGIN}' and '{MAP_END}')")
        return 1
    if have != folder_map():
        print(f"{doc}: the folder map is not the one scripts/check_layers.py draws from its "
              f"layer list; run scripts/check_layers.py --write-map {doc}")
        return 1
    print(f"{doc}: the folder map is the layer list's")
    return 0


def write_map(doc):
    p = pathlib.Path(doc)
    text = p.read_text()
    if map_in(text) is None:
        print(f"{doc}: no folder map markers to write between")
        return 1
    head, rest = text.split(MAP_BEGIN, 1)
    tail = rest.split(MAP_END, 1)[1]
    p.write_text(head + MAP_BEGIN + "\n" + folder_map() + MAP_END + tail)
    return 0


# --------------------------------------------------------------- Python

PY_PACKAGE = "platform/python/tpbsim"
# (module path under the package, rank, what it is): a module imports modules
# of its rank or lower. A module not listed has no rank: the cycle and
# private-name rules still hold for it.
PY_LAYERS = [
    ("_tpbsim", 0, "the extension (pybind11, platform/python/_tpbsim.cpp)"),
    ("errors", 0, "the exceptions"),
    ("_args", 1, "argument conversions shared by the modules"),
    ("result", 1, "Result: what a run did"),
    ("isa", 1, "assemble, disassemble, check"),
    ("numerics", 1, "convert, encode, decode"),
    ("_machine", 2, "a device of 1..32 cores: lifecycle, the process's turn, run keywords"),
    ("core", 3, "Core: a device of one core, or a view of one core of a Device"),
    ("device", 4, "Device: several cores sharing one HBM"),
    ("__init__", 5, "import tpbsim"),
    ("kernels/quant", 6, "the host's quantizers"),
    ("kernels/plan", 8, "the tiling and every size, GemmError"),
    ("kernels/operands", 9, "operands, Weights, prepare, the check"),
    ("kernels/outputs", 9, "--out"),
    ("kernels/placement", 9, "where a GEMM's data lives: layouts, memory images, C read back"),
    ("kernels/program", 10, "the Kernel: the program on tpbsim.program's builder"),
    ("kernels/request", 10, "Gemm: the request, checked whole"),
    ("kernels/grid", 10, "C over the cores of a device"),
    ("kernels/report", 10, "the report and report.png"),
    ("kernels/gemm", 11, "the run of a GEMM over a device, one core or many"),
    ("kernels/gemm_cores", 12, "run_cores, kept for scripts"),
    ("kernels/__init__", 12, "tpbsim.kernels"),
    ("kernels/__main__", 13, "python3 -m tpbsim.kernels"),
    ("torch", 13, "tpbsim.torch"),
    ("program/regions", 6, "byte footprints of instructions, the index of live accesses"),
    ("program/operands", 6, "operands and fields in the program syntax"),
    ("program/instructions", 7, "the model's instructions with their byte footprints"),
    ("program/builder", 7, "the program builder: waits and semaphores from the footprints"),
    ("program/__init__", 8, "tpbsim.program"),
    ("nki/errors", 6, "NKIError, the kernel's line"),
    ("nki/patterns", 6, "access patterns walked in step"),
    ("nki/dtypes", 7, "NKI's dtypes and the model's names"),
    ("nki/alloc", 7, "SBUF / PSUM allocation by liveness"),
    ("nki/tensor", 8, "storages and views (NkiTensor)"),
    ("nki/host", 8, "host arrays in and out"),
    ("nki/typing", 8, "nki.typing"),
    ("nki/trace", 9, "the trace of a kernel call"),
    ("nki/isa", 10, "nki.isa: checked, recorded calls"),
    ("nki/language", 11, "nki.language: tensors and tile-level calls"),
    ("nki/lower", 12, "isa calls to the model's instructions"),
    ("nki/run", 13, "trace, lower, run: Profile"),
    ("nki/numpy_ref", 14, "the NumPy semantics of the calls"),
    ("nki/__init__", 15, "tpbsim.nki: jit, simulate, profile, install"),
    ("nki/__main__", 16, "python3 -m tpbsim.nki"),
]


def _py_module(root, rel):
    """'kernels/gemm' of root/kernels/gemm.py; 'kernels/__init__' of its package."""
    return rel[:-3] if rel.endswith(".py") else rel


def _py_target(root, me, level, module):
    """The module path (under the package) a relative or tpbsim.* import names,
    or None (another package)."""
    if level == 0:
        if module != "tpbsim" and not (module or "").startswith("tpbsim."):
            return None
        parts = module.split(".")[1:]
    else:
        base = me.split("/")[:-1]              # the package of `me`
        base = base[:len(base) - (level - 1)] if level > 1 else base
        parts = base + (module.split(".") if module else [])
    return "/".join(parts) if parts else "__init__"


# Modules of the package that are not .py files (the extension, built).
PY_EXTENSIONS = {"_tpbsim"}


def _py_resolve(root, path):
    """A module path's file: path.py, or path/__init__.py for a package."""
    if path in PY_EXTENSIONS or (root / (path + ".py")).is_file():
        return path
    if (root / path / "__init__.py").is_file():
        return (path + "/__init__") if path != "__init__" else path
    return None


def _private(name):
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def py_imports(root, rel, tree):
    """[(line, imported module, private names it takes from it)] of one module."""
    me = _py_module(root, rel)
    out = []
    aliases = {}   # local name -> module bound by an import
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                t = _py_target(root, me, 0, a.name)
                mod = _py_resolve(root, t) if t else None
                if mod:
                    out.append((node.lineno, mod, []))
                    aliases[a.asname or a.name.split(".")[0]] = mod
        elif isinstance(node, ast.ImportFrom):
            t = _py_target(root, me, node.level, node.module)
            if t is None:
                continue
            base = _py_resolve(root, t)
            for a in node.names:
                sub = _py_resolve(root, f"{t}/{a.name}" if t != "__init__" else a.name)
                if sub:                       # a module: from . import core
                    out.append((node.lineno, sub, []))
                    aliases[a.asname or a.name] = sub
                elif base:
                    out.append((node.lineno, base, [a.name] if _private(a.name) else []))
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and node.value.id in aliases and _private(node.attr):
            out.append((node.lineno, aliases[node.value.id], [node.attr]))
    return out


def check_python(root):
    """(modules checked, problems) of the Python package's layer rule."""
    pkg = pathlib.Path(root) / PY_PACKAGE
    rank = {m: r for m, r, _ in PY_LAYERS}
    problems, graph = [], {}
    files = sorted(p for p in pkg.rglob("*.py") if "__pycache__" not in p.parts)
    for p in files:
        rel = p.relative_to(pkg).as_posix()
        me = _py_module(pkg, rel)
        tree = ast.parse(p.read_text(), str(p))
        graph.setdefault(me, set())
        for line, mod, privates in py_imports(pkg, rel, tree):
            where = f"{PY_PACKAGE}/{rel}:{line}"
            if mod == me:
                continue
            graph[me].add(mod)
            for name in privates:
                problems.append(f"{where}: {me} uses {name}, a private of {mod}")
            if me in rank and mod in rank and rank[mod] > rank[me]:
                problems.append(f"{where}: {me} (rank {rank[me]}) imports the higher {mod} "
                                f"(rank {rank[mod]})")
    for m in rank:
        if m not in graph and m != "_tpbsim":
            problems.append(f"{PY_PACKAGE}/{m}.py: listed in PY_LAYERS, not in the package")
    problems += [f"{PY_PACKAGE}: an import cycle: {' -> '.join(c)}" for c in _cycles(graph)]
    return len(files), problems


def _cycles(graph):
    """One cycle per strongly connected set of modules (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp) + [sorted(comp)[0]])

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def report(files, problems, rule, what):
    """Prints each violation and the count; the exit status."""
    for p in problems:
        print(p)
    print(f"{rule}: {files} {what} checked, {len(problems)} violations")
    return 1 if problems else 0


def self_test_python():
    """The Python rule catches each kind of violation in a planted package."""
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        pkg = pathlib.Path(d) / PY_PACKAGE
        cases = {
            "errors.py": "",
            "result.py": "from .errors import Error\n",
            "_args.py": "",
            "isa.py": "", "numerics.py": "", "_machine.py": "", "device.py": "",
            "__init__.py": "", "torch.py": "",
            "core.py": "from .device import Device\n",              # higher
            "kernels/__init__.py": "", "kernels/quant.py": "", "kernels/placement.py": "",
            "kernels/request.py": "", "kernels/plan.py": "", "kernels/operands.py": "",
            "kernels/outputs.py": "", "kernels/program.py": "", "kernels/report.py": "",
            "kernels/gemm_cores.py": "", "kernels/__main__.py": "",
            "kernels/grid.py": "from . import gemm\n",              # a cycle with gemm
            "kernels/gemm.py": "from .grid import split\nfrom .plan import _ceil\n"
                               "from .. import core\nx = core._load\n",   # two privates
            "extra/__init__.py": "from ..kernels import gemm\n",   # unranked: fine
        }
        for m, _, _ in PY_LAYERS:      # every other listed module, empty
            if m != "_tpbsim" and f"{m}.py" not in cases:
                cases[f"{m}.py"] = ""
        for rel, text in cases.items():
            (pkg / rel).parent.mkdir(parents=True, exist_ok=True)
            (pkg / rel).write_text(text)
        _, problems = check_python(d)
        kinds = sorted(("higher" in p, "private" in p, "cycle" in p) for p in problems)
        want = sorted([(True, False, False), (True, False, False), (False, True, False),
                       (False, True, False), (False, False, True)])
        if kinds != want:
            print("self-test FAILED (Python):\n  " + "\n  ".join(problems))
            return 1
    print("Python layer rule self-test: two higher imports, two privates and a cycle found")
    return 0


def main():
    args = sys.argv[1:]
    if args == ["--self-test"]:
        return self_test() or self_test_python()
    if args[:1] == ["--python"]:
        root = pathlib.Path(args[1] if len(args) > 1 else ".").resolve()
        return report(*check_python(root), "Python layer rule", "modules")
    if args == ["--map"]:
        sys.stdout.write(folder_map())
        return 0
    if len(args) == 2 and args[0] in ("--check-map", "--write-map"):
        return check_map(args[1]) if args[0] == "--check-map" else write_map(args[1])
    root = pathlib.Path(args[0] if args else ".").resolve()
    return report(*check(root), "layer rule", "files")


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
            "models/sc/f.cpp": '#include "firmware_stubs/pe/matmul.h"\n',
            "platform/cli/ok.cpp": '#include "platform/core/tpb_core.h"\n',
            "models/nolayer/e.h": "",
        }
        for rel, text in cases.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text)
        files, problems = check(root)
        bad = sorted(p.split(":")[0] for p in problems)
        want = ["firmware_stubs/a.h", "models/isa/c.h", "models/nolayer/e.h", "models/sc/d.h",
                "models/sc/f.cpp", "models/trace/b.cpp"]
        if files != 7 or bad != want:
            print(f"self-test FAILED: {files} files, violations in {bad}, wanted {want}")
            return 1
        # The map check fails on a map that differs from the list.
        doc = root / "doc.md"
        doc.write_text(f"{MAP_BEGIN}\n" + folder_map().replace("pure C++", "pure C") + f"{MAP_END}\n")
        if check_map(doc) != 1 or write_map(doc) != 0 or check_map(doc) != 0:
            print("self-test FAILED: the folder map check")
            return 1
        # The CMake cut: a layer without its library, a library on no layer.
        (root / "CMakeLists.txt").write_text(
            "tpbsim_layer(tpb_isa models/isa)\ntpbsim_layer(tpb_numbers models/numerics)\n")
        bad = check_cmake(root)
        if len(bad) < 2 or "tpbsim_layer(tpb_numbers models/numerics) is not" not in bad[-1] \
                or not any("no library tpb_numerics for models/numerics" in b for b in bad):
            print("self-test FAILED: the CMake cut check:\n  " + "\n  ".join(bad))
            return 1
    print("layer rule self-test: 6 violations found in 8 files (one in a folder without a "
          "layer, one a SystemC module including a kernel), as planted; a wrong map and a "
          "wrong CMake cut found")
    return 0


if __name__ == "__main__":
    sys.exit(main())
