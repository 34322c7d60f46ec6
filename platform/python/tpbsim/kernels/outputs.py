"""--out of a GEMM (docs/KERNELS.md "Files"): a directory that holds one run's
files and nothing that looks like one.

* Checked whole before anything is touched (OutputDir): a file, a directory
  that cannot be made or written, a directory where this run writes a file,
  or GEMM output names that no GEMM run wrote there (a workload directory's
  cmd.txt, expected.npy, program.tpb) are refused, naming them.
* Then (``open``) the files an earlier GEMM run wrote are removed, and only
  those: the manifest ``.gemm-files`` lists what a run wrote (an older run's
  report.json lists them too).
* Each file is written whole in a staging directory of this run's
  (``.gemm-staging-XXXXXXXX``: made by mkdtemp, mode 0700, a name nobody can
  predict or plant a link at) and renamed into place; a link at a final name is
  replaced, never followed.
* A process killed outright can leave the staging directory and a part of the
  files it listed; the manifest names both, and the next run into the
  directory removes them.
"""

import json
import os
import re
import tempfile

import numpy as np

from .plan import GemmError, arg

# Every file a GEMM command writes into --out (docs/KERNELS.md "Files"), and
# the manifest of those a run wrote.
MANIFEST = ".gemm-files"
OUTPUT_FILES = ("report.json", "report.png", "out.npy", "a_used.npy", "w_used.npy", "program.tpb",
                "stats.json", "retire.txt", "trace.perfetto.json", "cmd.txt", "hbm_inputs.npy",
                "expected.npy", MANIFEST)
# A device's programs, one per core.
PROGRAM_FILE = re.compile(r"program_(0|[1-9][0-9]{0,3})\.tpb")
STAGING = re.compile(r"\.gemm-staging-[A-Za-z0-9_]{8}")
# What an interrupted run of an older version, or the core's own staging of
# a file in a staging directory, may have left.
OLD_STAGED = re.compile(r"\.gemm-tmp\d+\.(.+)")
CORE_STAGED = re.compile(r"\.(.+)\.tpbsim-[A-Za-z0-9]{8}")


def is_output(name):
    """Whether ``name`` is a file a GEMM run writes into --out."""
    return name in OUTPUT_FILES or PROGRAM_FILE.fullmatch(name) is not None


def program_files(cores):
    """The program file(s) of a GEMM over ``cores`` cores."""
    return ["program.tpb"] if cores == 1 else [f"program_{i}.tpb" for i in range(cores)]


def _out(path):
    return arg("out", os.fsdecode(path), r=False)


def _read_json(path):
    """The JSON object in ``path``, or None (none there, not one)."""
    try:
        with open(path) as f:
            obj = json.load(f)
    except (OSError, ValueError):
        return None
    return obj if isinstance(obj, dict) else None


def _names(obj, key, pattern):
    return {n for n in obj.get(key) or [] if isinstance(n, str) and pattern(n)}


def _written_before(path, names):
    """(files, staging directories) an earlier GEMM run wrote into ``path``: its
    manifest's, else an older run's report.json's "files", plus what an older
    run's interrupted staging left. GemmError when that run is still writing."""
    files, staging = set(), set()
    m = _read_json(os.path.join(path, MANIFEST))
    if m is not None:
        files = _names(m, "files", is_output)
        staging = _names(m, "staging", STAGING.fullmatch)
        if any(os.path.isdir(os.path.join(path, n)) for n in staging) and _running(m):
            raise GemmError(f"{_out(path)}: another GEMM run (process {m['pid']}) is writing "
                            f"into it: wait for it, or another {arg('out')}")
    else:
        rep = _read_json(os.path.join(path, "report.json"))
        if rep is not None and rep.get("command") == "gemm":
            files = _names(rep, "files", is_output) | {"report.json"}
    for name in names:
        old = OLD_STAGED.fullmatch(name)
        if old and is_output(old.group(1)):
            files.add(name)
    return files, staging


class OutputDir:
    """--out (None: no files), inspected when made: GemmError, before anything is
    touched, for anything that would stop this run writing ``planned`` (its
    files) or make it remove a file no GEMM run wrote. ``open`` then removes
    the earlier run's files and stages this run's. ``written`` lists this run's
    files, ``removed`` the earlier run's, ``others`` the entries left alone."""

    def __init__(self, path, planned=()):
        self.path, self.planned = path, list(planned)
        self.written, self.removed, self.others = [], [], []
        self.earlier = []   # the files of an earlier GEMM run found there
        self._ours, self._old_staging, self._stage = set(), set(), None
        self._made = False   # this run made the directory
        if path is None:
            return
        if os.path.lexists(path) and not os.path.isdir(path):
            raise GemmError(f"{_out(path)}: is a file, not a directory")
        if not os.path.isdir(path):
            self._check_creatable(path)
            self._made = True
            return
        if not os.access(path, os.W_OK | os.X_OK):
            raise GemmError(f"{_out(path)}: cannot write in it (permission denied)")
        names = sorted(os.listdir(path))
        ours, self._old_staging = _written_before(path, names)
        # A directory is never removed as an earlier file (it is left alone).
        self._ours = {n for n in ours if not _is_dir(os.path.join(path, n))}
        self.earlier = sorted(n for n in self._ours if n in names and is_output(n)
                              and n != MANIFEST)
        for name in self.planned + [MANIFEST]:
            if _is_dir(os.path.join(path, name)):
                raise GemmError(f"{_out(path)}: {name} is a directory, where this command writes "
                                "a file")
        foreign = [n for n in names if is_output(n) and n not in self._ours and n != MANIFEST
                   and not _is_dir(os.path.join(path, n))]
        if foreign:
            raise GemmError(
                f"{_out(path)}: holds {' '.join(foreign[:8])}{' ...' if len(foreign) > 8 else ''}"
                ", which no GEMM run wrote there (its .gemm-files does not list them): another "
                f"{arg('out')}, or remove them")
        self.others = [n for n in names if n not in self._ours and n not in self._old_staging
                       and n != MANIFEST]

    @staticmethod
    def _check_creatable(path):
        """A directory that does not exist: its nearest existing parent must be a
        directory this process can write in."""
        parent = os.path.dirname(os.path.abspath(os.fsdecode(path)))
        while not os.path.lexists(parent):
            parent = os.path.dirname(parent)
        if not os.path.isdir(parent):
            raise GemmError(f"{_out(path)}: cannot make the directory ({parent} is not a "
                            "directory)")
        if not os.access(parent, os.W_OK | os.X_OK):
            raise GemmError(f"{_out(path)}: cannot make the directory (permission denied in "
                            f"{parent})")

    def __bool__(self):
        return self.path is not None

    def open(self):
        """After every check: makes the directory, notes this run in the manifest,
        removes the earlier run's files and staging, and makes this run's staging
        directory."""
        if self.path is None or self._stage is not None:
            return
        try:
            os.makedirs(self.path, exist_ok=True)
            self._stage = tempfile.mkdtemp(prefix=".gemm-staging-", dir=self.path)
        except OSError as e:
            raise GemmError(f"{_out(self.path)}: cannot make the directory "
                            f"({e.strerror})") from None
        # Listed before anything is removed or written: a run killed from here on
        # leaves nothing the next run cannot tell for a GEMM run's.
        self._manifest(sorted(self._ours | set(self.planned)),
                       sorted(self._old_staging) + [os.path.basename(self._stage)])
        for name in sorted(self._ours):
            if name != MANIFEST and self._remove(name) and is_output(name):
                self.removed.append(name)
        for name in sorted(self._old_staging):
            _remove_staging(os.path.join(self.path, name))

    def _remove(self, name):
        try:
            os.remove(os.path.join(self.path, name))
            return True
        except FileNotFoundError:
            return False
        except OSError as e:
            raise GemmError(f"{_out(self.path)}: cannot remove the earlier {name} "
                            f"({e.strerror})") from None

    def _manifest(self, files, staging):
        tmp = os.path.join(self._stage, MANIFEST)
        with open(tmp, "w") as f:
            json.dump({"written by": "python3 -m tpbsim.kernels gemm (docs/KERNELS.md)",
                       "files": files, "staging": staging,
                       "pid": os.getpid() if staging else None}, f, indent=1)
            f.write("\n")
        os.replace(tmp, os.path.join(self.path, MANIFEST))

    def staged(self, name):
        """Where the core writes ``name`` (its --stats, --retire, --perfetto): in
        the staging directory; ``made`` puts it in place."""
        return os.path.join(self._stage, name)

    def made(self, name):
        """A file the core wrote into the staging directory, put in place."""
        if self.path is not None and os.path.exists(self.staged(name)):
            os.replace(self.staged(name), os.path.join(self.path, name))
            self.written.append(name)

    def _write(self, name, write):
        if self.path is None:   # no --out: nothing is written
            return
        tmp = self.staged(name)
        try:
            write(tmp)
            if os.path.exists(tmp):   # a picture without matplotlib is not made
                os.replace(tmp, os.path.join(self.path, name))
                self.written.append(name)
        except BaseException:
            if os.path.lexists(tmp):
                os.remove(tmp)
            raise

    def text(self, name, text):
        def w(p):
            with open(p, "x") as f:
                f.write(text)
        self._write(name, w)

    def npy(self, name, array):
        def w(p):
            with open(p, "xb") as f:
                np.save(f, array)
        self._write(name, w)

    def json(self, name, obj):
        self.text(name, json.dumps(obj, indent=2) + "\n")

    def png(self, name, plot):
        self._write(name, plot)

    def close(self):
        """This run is done: the manifest lists its files; the staging is gone."""
        if self._stage is None:
            return
        self._manifest(sorted(self.written), [])
        _remove_staging(self._stage)
        self._stage = None

    def abort(self, keep_written=True):
        """This run stopped (an error, Ctrl-C): its staging is removed, and its
        files too unless ``keep_written`` (Ctrl-C keeps the ones it finished and
        names them; the manifest keeps listing them for the next run). With no
        GEMM file left, the manifest goes too, and the directory if this run
        made it: an error leaves nothing behind."""
        if self._stage is None:
            return
        _remove_staging(self._stage)
        self._stage = None
        if keep_written:
            return
        for name in self.written:
            self._remove(name)
        self.written = []
        if any(is_output(n) and n != MANIFEST for n in os.listdir(self.path)):
            return
        self._remove(MANIFEST)
        if self._made:
            try:
                os.rmdir(self.path)
            except OSError:
                pass


def _is_dir(path):
    """A directory itself (a link to one is a file's name here: replaced)."""
    return os.path.isdir(path) and not os.path.islink(path)


def _running(manifest):
    """Whether the run a manifest notes is still writing: its staging directory
    there and its process alive."""
    pid = manifest.get("pid")
    if not isinstance(pid, int) or pid <= 0 or pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:   # alive, another user's
        return True
    return True


def _remove_staging(path):
    """A staging directory (never through a link): the files a run staged in it,
    then the directory; anything else in it is left, and so is it."""
    if not os.path.isdir(path) or os.path.islink(path):
        return
    for name in os.listdir(path):
        core = CORE_STAGED.fullmatch(name)
        if is_output(name) or (core and is_output(core.group(1))):
            try:
                os.remove(os.path.join(path, name))
            except IsADirectoryError:
                pass
    try:
        os.rmdir(path)
    except OSError:
        pass
