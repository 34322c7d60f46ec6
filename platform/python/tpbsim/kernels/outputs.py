"""--out of a GEMM (docs/KERNELS.md "Files")."""

import json
import os

import numpy as np

from .plan import GemmError, arg

# Every file a GEMM command writes into --out (docs/KERNELS.md "Files").
OUTPUT_FILES = ("report.json", "report.png", "out.npy", "a_used.npy", "w_used.npy", "program.tpb",
                "stats.json", "retire.txt", "trace.perfetto.json", "cmd.txt", "hbm_inputs.npy",
                "expected.npy")


class OutputDir:
    """--out, holding only this run's files: opening it removes every file of
    OUTPUT_FILES an earlier run left there (what this run does not write must not
    look like its own); each file is written whole under a temporary name and
    renamed into place. `written` lists this run's files, `removed` the earlier
    run's, `others` the entries that are no GEMM output (left alone)."""

    def __init__(self, path):
        self.path, self.written, self.removed, self.others = path, [], [], []
        if path is None:
            return
        try:
            os.makedirs(path, exist_ok=True)
        except FileExistsError:
            raise GemmError(f"{arg('out', path, r=False)}: is a file, not a directory") from None
        except OSError as e:
            raise GemmError(f"{arg('out', path, r=False)}: cannot make the directory "
                            f"({e.strerror})") from None
        if not os.path.isdir(path):
            raise GemmError(f"{arg('out', path, r=False)}: is not a directory")
        for name in sorted(os.listdir(path)):
            full = os.path.join(path, name)
            if name in OUTPUT_FILES or name.startswith(".gemm-tmp"):
                try:
                    os.remove(full)
                except IsADirectoryError:
                    raise GemmError(f"{arg('out', path, r=False)}: {name} is a directory, where "
                                    "this command "
                                    "writes a file") from None
                except OSError as e:
                    raise GemmError(f"{arg('out', path, r=False)}: cannot remove the earlier "
                                    f"{name} "
                                    f"({e.strerror})") from None
                if name in OUTPUT_FILES:
                    self.removed.append(name)
            else:
                self.others.append(name)

    def __bool__(self):
        return self.path is not None

    def file(self, name):
        return os.path.join(self.path, name)

    def _write(self, name, write):
        tmp = os.path.join(self.path, f".gemm-tmp{os.getpid()}.{name}")
        try:
            write(tmp)
            os.replace(tmp, self.file(name))
        except BaseException:
            if os.path.exists(tmp):
                os.remove(tmp)
            raise
        self.written.append(name)

    def text(self, name, text):
        def w(p):
            with open(p, "w") as f:
                f.write(text)
        self._write(name, w)

    def npy(self, name, array):
        def w(p):
            with open(p, "wb") as f:
                np.save(f, array)
        self._write(name, w)

    def json(self, name, obj):
        self.text(name, json.dumps(obj, indent=2) + "\n")

    def png(self, name, plot):
        def w(p):
            plot(p)
        self._write(name, w)

    def made(self, name):
        """A file the core wrote itself (its outputs are staged and renamed too)."""
        if os.path.exists(self.file(name)):
            self.written.append(name)
