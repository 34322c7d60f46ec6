"""Fixtures of the tpbsim Python tests (run by ctest: PYTHONPATH=build/python,
TPBSIM_BIN = the tpbsim binary, TPB_SOURCE_DIR = the repository)."""

import os
import pathlib
import subprocess

import pytest

import tpbsim

SOURCE_DIR = pathlib.Path(os.environ.get("TPB_SOURCE_DIR",
                                         pathlib.Path(__file__).resolve().parents[2]))
TPBSIM_BIN = os.environ.get("TPBSIM_BIN", str(SOURCE_DIR / "build" / "tpbsim"))
WORKLOADS = SOURCE_DIR / "traces" / "workloads"
EXAMPLES = SOURCE_DIR / "traces" / "examples"


@pytest.fixture
def core():
    """A fresh mariana core, closed after the test (one Core at a time)."""
    c = tpbsim.Core("mariana")
    try:
        yield c
    finally:
        c.close()


@pytest.fixture
def make_core():
    """Makes cores (closing the previous one) and closes the last after the test."""
    made = []

    def make(*args, **kwargs):
        for c in made:
            c.close()
        made.append(tpbsim.Core(*args, **kwargs))
        return made[-1]

    try:
        yield make
    finally:
        for c in made:
            c.close()


def cli(*args, cwd=None, check=True):
    """Runs the tpbsim binary; returns the CompletedProcess (text)."""
    p = subprocess.run([TPBSIM_BIN, *map(str, args)], cwd=cwd, capture_output=True, text=True)
    if check and p.returncode != 0:
        raise AssertionError(f"tpbsim {' '.join(map(str, args))}: exit {p.returncode}\n{p.stderr}")
    return p


def workload_args(name):
    """The arguments of traces/workloads/NAME/cmd.txt (comments dropped)."""
    lines = (WORKLOADS / name / "cmd.txt").read_text().splitlines()
    return [tok for line in lines if line.strip() and not line.startswith("#")
            for tok in line.split()]


def drop_wait(lines, k):
    """Program lines with line k's semaphore wait removed (a nop left with
    no wait is a bare nop): to show that a generated wait is needed."""
    out = list(lines)
    head, _, rest = out[k].partition(" wait=ge(")
    out[k] = head + rest.partition(")")[2]
    if out[k].split("#")[0].strip() == "nop":
        out[k] = "nop"
    return out


def line_of(path, marker):
    """The line of the file at `path` that holds `marker` (in a comment), for
    tests that check an error names the kernel's line."""
    with open(path) as f:
        for k, line in enumerate(f, 1):
            if marker in line and "line_of(" not in line:
                return k
    raise AssertionError(marker)


def child_env(**extra):
    """This process's environment for a child run elsewhere (PYTHONPATH made
    absolute), with `extra` over it."""
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join(os.path.abspath(p) for p in
                                      os.environ.get("PYTHONPATH", "").split(os.pathsep) if p)
    e.update(extra)
    return e
