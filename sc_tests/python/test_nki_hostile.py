"""Hostile input to tpbsim.nki, round five (docs/BAD_INPUT.md "NKI front end"):
arrays of the other byte order (their bytes were taken as they lie: silent
wrong values), arguments that reached Python's own errors inside tpbsim
(a traceback from inside the package), an exception of the kernel's own code
shown with tpbsim's frames, and the command line's tracebacks."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tpbsim
import tpbsim.nki as nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl
from conftest import child_env, line_of

HERE = os.path.abspath(__file__)


@nki.jit
def copy(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, nl.load(a))
    return out


@pytest.mark.parametrize("dt", [">f4", ">i2", ">u4", ">f2"])
def test_an_array_of_the_other_byte_order_is_read_by_its_values(dt):
    a = (np.arange(128 * 8).reshape(128, 8) % 300 - 7).astype(dt)
    if dt.startswith(">u"):
        a = np.abs(a.astype(np.int64)).astype(dt)
    got = nki.simulate(copy)(a)
    assert np.array_equal(np.asarray(got), a) and got.dtype.isnative
    bits = nki.simulate(copy)(nki.bits(np.arange(128 * 4, dtype=">u2").reshape(128, 4),
                                       nl.bfloat16))
    assert np.array_equal(bits, np.arange(128 * 4).reshape(128, 4))


A = np.ones((128, 64), np.float32)


@nki.jit
def index_by_array(a):
    return nl.load(a[np.array([1, 2])])   # <- array index


@nki.jit
def engine_seven(a):
    t = nl.load(a)
    u = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=u, data1=t, data2=t, op=nl.add, engine=7)   # <- engine 7
    return a


@nki.jit
def huge_operand(a):
    t = nl.load(a)
    u = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=u, data=t, op0=nl.add, operand0=10 ** 400)   # <- operand
    return a


@nki.jit
def huge_scale(a):
    t = nl.load(a)
    u = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.activation(dst=u, op=nl.exp, data=t, scale=-10 ** 400)   # <- scale
    return a


def iota_kernel(pattern, **kw):
    @nki.jit
    def k(a):
        u = nl.ndarray((128, 64), dtype=nl.int32, buffer=nl.sbuf)
        nisa.iota(u, pattern, **kw)   # <- iota
        return a
    return k


@nki.jit
def float_loop(a):
    for i in nl.affine_range(2.5):   # <- loop
        nl.load(a)
    return a


@nki.jit
def float_ds(a):
    return nl.load(a[nl.ds(0.5, 3), :])   # <- float ds


@nki.jit
def float_slice(a):
    return nl.load(a[0:2.5, :])   # <- float slice


@nki.jit
def float_shape(a):
    t = nl.ndarray((128, 4.5), dtype=nl.float32, buffer=nl.sbuf)   # <- float shape
    return a


def memset_kernel(value):
    @nki.jit
    def k(a):
        u = nl.ndarray((128, 64), dtype=nl.int8, buffer=nl.sbuf)
        nisa.memset(u, value, engine=nisa.vector_engine)   # <- memset
        return a
    return k


@nki.jit
def max_reduce(a):
    t = nl.load(a)
    u = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf)
    r = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.activation_reduce(dst=u, op=nl.exp, data=t, reduce_op=nl.maximum,   # <- v2 max
                           reduce_res=r)
    return a


@nki.jit
def beyond_hbm(a):
    big = nl.ndarray((128, 2 ** 40), dtype=nl.float32, buffer=nl.shared_hbm)   # <- 2^49 B
    nl.store(big[:, 0:64], nl.load(a))
    return big


CASES = [
    (index_by_array, "mariana", "index", "<- array index", "is not an integer"),
    (engine_seven, "mariana", "engine", "<- engine 7", "engine=7 is not an engine"),
    (huge_operand, "mariana", "operand", "<- operand", "past any float"),
    (huge_scale, "mariana", "operand", "<- scale", "past any float"),
    (iota_kernel("xyz"), "mariana", "shape", "<- iota", "not a list of [step, count]"),
    (iota_kernel([[1, 64]], offset=2 ** 31), "mariana", "operand", "<- iota",
     "offset 2147483648 is outside int32"),
    (iota_kernel([[1, 64]], channel_multiplier=-2 ** 31 - 1), "mariana", "operand", "<- iota",
     "channel_multiplier -2147483649 is outside int32"),
    (iota_kernel([[2 ** 32, 64]]), "mariana", "operand", "<- iota", "step 4294967296"),
    (iota_kernel([[1, 0.5]]), "mariana", "operand", "<- iota", "count 0.5 is not an integer"),
    (float_loop, "mariana", "loop", "<- loop", "nl.affine_range(2.5)"),
    (float_shape, "mariana", "shape", "<- float shape", "(128, 4.5) is not a shape"),
    (float_ds, "mariana", "index", "<- float ds", "bound or step 0.5 is not an integer"),
    (float_slice, "mariana", "index", "<- float slice", "bound or step 2.5 is not an integer"),
    (memset_kernel(1000), "mariana", "memset", "<- memset", "value 1000 is not a int8 value"),
    (memset_kernel(float("nan")), "mariana", "memset", "<- memset", "value nan is not"),
    (max_reduce, "sunda", "instruction the generation lacks", "<- v2 max", "add only"),
    (beyond_hbm, "mariana", "HBM exhausted", "<- 2^49 B", "past the"),
]


@pytest.mark.parametrize("kernel, arch, rule, marker, words", CASES,
                         ids=[c[3].strip("<- ") for c in CASES])
def test_bad_arguments_are_nkierrors_naming_the_kernels_line(kernel, arch, rule, marker, words):
    with pytest.raises(nki.NKIError) as e:
        nki.profile(kernel, A, arch=arch, racecheck=False)
    assert e.value.rule == rule, str(e.value)
    assert os.path.abspath(e.value.file) == HERE, str(e.value)
    assert e.value.line == line_of(HERE, marker), str(e.value)
    assert words in str(e.value), str(e.value)


def test_torch_tensors_without_dense_data_are_nkierrors():
    torch = pytest.importorskip("torch")
    for t, words in ((torch.zeros(128, 8).to_sparse(), "sparse_coo tensor"),
                     (torch.zeros(128, 8, device="meta"), "meta device")):
        with pytest.raises(nki.NKIError, match=words):
            nki.simulate(copy)(t)


def test_a_progress_that_is_not_a_function_is_an_argument_error():
    with pytest.raises(tpbsim.ArgumentTypeError, match="progress must be a function"):
        nki.profile(copy, A, progress=5)


def test_an_output_past_the_hosts_memory_is_a_tpbsim_error(monkeypatch):
    from tpbsim.nki import run

    def no_memory(*args):
        raise MemoryError
    monkeypatch.setattr(run, "_read_outputs", no_memory)
    with pytest.raises(tpbsim.OutputError, match="do not fit in this host's memory"):
        nki.simulate(copy)(A)


KERNEL_FILE = """\
import nki
import nki.language as nl

@nki.jit
def add(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, nl.add(nl.load(a), nl.load(b)))
    return out

@nki.jit
def broken(a):
    return a.shape[0] / 0

VALUE = 3
"""


def test_an_exception_of_the_kernels_own_code_shows_its_frames_only(tmp_path):
    f = tmp_path / "kern.py"
    f.write_text("import tpbsim.nki\ntpbsim.nki.install()\n" + KERNEL_FILE
                 + "import numpy as np\nbroken(np.zeros((4, 4), np.float32))\n")
    p = subprocess.run([sys.executable, str(f)], capture_output=True, text=True, env=child_env())
    assert p.returncode == 1
    assert "ZeroDivisionError" in p.stderr and "line 14, in broken" in p.stderr, p.stderr
    assert "tpbsim/" not in p.stderr.replace(str(f), ""), p.stderr


def cli(tmp_path, *args):
    return subprocess.run([sys.executable, "-m", "tpbsim.nki", "profile", *map(str, args)],
                          capture_output=True, text=True, env=child_env(), cwd=tmp_path)


def test_the_command_line_shows_no_traceback_from_inside_tpbsim(tmp_path):
    (tmp_path / "k.py").write_text(KERNEL_FILE)
    (tmp_path / "syntax.py").write_text("def x(:\n")
    (tmp_path / "raises.py").write_text("import nonexistent_module_of_tests\n")
    a = np.ones((128, 64), np.float32)
    np.save(tmp_path / "a.npy", a)
    np.savez(tmp_path / "z.npz", a=a)
    (tmp_path / "bad.npy").write_text("garbage")
    runs = [
        (("syntax.py", "add"), "SyntaxError", "the kernel file raised"),
        (("raises.py", "add"), "line 1, in <module>", "No module named"),
        (("k.py", "broken", "--input", "a.npy"), "line 12, in broken", "ZeroDivisionError"),
        (("k.py", "VALUE", "--input", "a.npy"), "VALUE is not a kernel (it is int 3)", ""),
        (("k.py", "add", "--input", "z.npz", "--input", "a.npy"), "z.npz: a .npz archive", ""),
        (("k.py", "add", "--input", "bad.npy", "--input", "a.npy"), "--input: bad.npy:", ""),
        (("k.py", "add", "--input", "a.npy", "--input", "a.npy", "--arch", ""),
         "--arch: '': an empty value", ""),
    ]
    for args, w1, w2 in runs:
        p = cli(tmp_path, *args, "--out", tmp_path / "o")
        assert p.returncode == 1, (args, p.stderr)
        assert w1 in p.stderr and w2 in p.stderr, (args, p.stderr)
        assert "tpbsim/" not in p.stderr, (args, p.stderr)
    # A big-endian .npy input is read by its values.
    np.save(tmp_path / "b.npy", (a * 3).astype(">f4"))
    p = cli(tmp_path, "k.py", "add", "--input", "a.npy", "--input", "b.npy", "--out", "o")
    assert p.returncode == 0, p.stderr
    assert np.array_equal(np.load(tmp_path / "o" / "outputs" / "out0.npy"), a * 4)
