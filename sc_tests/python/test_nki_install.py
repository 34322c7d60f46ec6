"""Unchanged kernel files (SPEC §17): tpbsim.nki.install() makes `import nki`
(nki.isa, nki.language, nki.typing) resolve to tpbsim.nki, a jitted kernel
called with arrays runs, NEURON_PLATFORM_TARGET_OVERRIDE picks the generation;
`python3 -m tpbsim.nki profile` writes a profile directory whose rerun.sh (a
`tpbsim run` command line) gives the same outputs and cycles."""

import json
import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tpbsim.nki as nki
from conftest import TPBSIM_BIN, child_env

KERNEL_FILE = textwrap.dedent('''\
    """A kernel file as the vendor's toolchain takes it."""
    import numpy as np
    import nki
    import nki.isa as nisa
    import nki.language as nl
    from nki.typing import tensor


    @nki.jit
    def scale_rows(a: tensor[256, 64], shape2D=(8, 8)):
        out = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
        for i in nl.affine_range(a.shape[0] // 128):
            t = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=t, src=a[i * 128:(i + 1) * 128, :])
            u = nl.ndarray((128, shape2D[1], shape2D[0]), dtype=nl.bfloat16, buffer=nl.sbuf)
            nisa.tensor_copy(dst=u, src=t.reshape((128, *shape2D)).permute((0, 2, 1)))
            nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, :], src=u.reshape((128, 64)))
        return out


    @nki.jit
    def needs_v4(a):
        q = nl.ndarray((128, 16), dtype=nl.float8_e4m3fn_x4, buffer=nl.sbuf)
        return a


    if __name__ == "__main__":
        a = (np.arange(256 * 64) % 200).astype(np.float32).reshape(256, 64)
        out = scale_rows(a)
        want = np.transpose(a.reshape(256, 8, 8), (0, 2, 1)).reshape(256, 64)
        print("match" if np.array_equal(out, want) else "differ")
    ''')


@pytest.fixture
def kernel_file(tmp_path):
    f = tmp_path / "kernel_file.py"
    f.write_text(KERNEL_FILE)
    return f


def run_py(code, cwd, env=None):
    e = child_env(**(env or {}))
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True,
                          env=e)


def test_an_unchanged_kernel_file_runs_under_install(kernel_file):
    code = ("import tpbsim.nki, runpy; tpbsim.nki.install(); "
            f"runpy.run_path({str(kernel_file)!r}, run_name='__main__')")
    p = run_py(code, kernel_file.parent)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "match"


@pytest.mark.parametrize("target,arch", [("trn1", "sunda"), ("trn2", "cayman"),
                                         ("trn3", "mariana")])
def test_the_target_override_picks_the_generation(kernel_file, target, arch):
    code = textwrap.dedent(f"""\
        import numpy as np, tpbsim.nki
        tpbsim.nki.install()
        import sys; sys.path.insert(0, {str(kernel_file.parent)!r})
        import kernel_file as k
        p = tpbsim.nki.profile(k.scale_rows, np.zeros((256, 64), np.float32), racecheck=False)
        print(p.arch)
        try:
            k.needs_v4(np.zeros((4, 4), np.float32))
            print("v4 ok")
        except tpbsim.nki.NKIError as e:
            print(e.rule)
        print(tpbsim.nki.profile(k.scale_rows, np.zeros((256, 64), np.float32),
                                 arch="maverick", racecheck=False).arch)
        """)
    p = run_py(code, kernel_file.parent, {"NEURON_PLATFORM_TARGET_OVERRIDE": target})
    assert p.returncode == 0, p.stderr
    lines = p.stdout.split()
    assert lines[0] == arch
    assert (lines[1] == "v4") == (arch == "mariana")       # "v4 ok" or the dtype rule
    assert lines[-1] == "maverick"                          # an explicit arch wins


def test_the_command_line_writes_a_profile_that_tpbsim_run_reproduces(kernel_file, tmp_path):
    a = np.random.default_rng(0).standard_normal((256, 64)).astype(np.float32)
    np.save(tmp_path / "a.npy", a)
    out = tmp_path / "prof"
    p = subprocess.run([sys.executable, "-m", "tpbsim.nki", "profile", str(kernel_file),
                        "scale_rows", "--arch", "trn2", "--input", str(tmp_path / "a.npy"),
                        "--arg", "shape2D=(4, 16)", "--out", str(out)],
                       capture_output=True, text=True, env=child_env())
    assert p.returncode == 0, p.stderr
    assert "traced 8 isa calls" in p.stderr and "done:" in p.stderr      # progress
    for name in ("program.tpb", "report.json", "rerun.sh", "trace.json", "inputs/a.npy",
                 "outputs/out0.npy"):
        assert (out / name).exists(), name
    report = json.loads((out / "report.json").read_text())
    assert report["arch"] == "cayman" and report["races"] == []
    assert set(report["engines"]) >= {"dve", "dma0", "dma12"}
    got = np.load(out / "outputs" / "out0.npy")
    want = np.transpose(a.reshape(256, 4, 16), (0, 2, 1)).reshape(256, 64)
    bf = ((want.view(np.uint32).astype(np.uint64) + 0x7FFF
           + ((want.view(np.uint32) >> 16) & 1)) >> 16) << 16
    assert np.array_equal(got.view(np.uint32), bf.astype(np.uint32))
    # rerun.sh: `tpbsim run` of the program with its --load / --dump.
    env = child_env(PATH=str(pathlib.Path(TPBSIM_BIN).parent) + os.pathsep + os.environ["PATH"])
    r = subprocess.run(["sh", str(out / "rerun.sh")], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    dumped = np.load(out / "rerun" / "out0.npy")
    assert dumped.dtype == np.float32 and np.array_equal(dumped.view(np.uint32), got.view(np.uint32))
    stats = json.loads((out / "rerun" / "stats.json").read_text())
    assert stats["simulated_ps"] == round(report["simulated_ns"] * 1000)


def test_the_command_line_reports_an_nkierror_with_its_line(kernel_file, tmp_path):
    np.save(tmp_path / "a.npy", np.zeros((64, 64), np.float32))
    p = subprocess.run([sys.executable, "-m", "tpbsim.nki", "profile", str(kernel_file),
                        "scale_rows", "--input", str(tmp_path / "a.npy"), "--out",
                        str(tmp_path / "o")], capture_output=True, text=True, env=child_env())
    assert p.returncode == 1
    assert "input shape: input 'a' has shape (64, 64); the kernel declares (256, 64)" in p.stderr
    assert "Traceback" not in p.stderr


def test_install_resolves_the_module_names():
    mod = nki.install()
    import nki as n2
    import nki.isa as nisa2
    import nki.language as nl2
    from nki.typing import tensor as t2
    assert n2 is mod and nisa2 is nki.isa and nl2 is nki.language and t2 is nki.typing.tensor
    import neuronxcc.nki.language as old
    assert old is nki.language
