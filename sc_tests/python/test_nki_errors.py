"""tpbsim.nki's errors before any run (SPEC §17): an NKIError (a
tpbsim.Error) naming the kernel's file and line and the rule, for each rule;
an uncaught one shows no frame from inside tpbsim."""

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
from conftest import line_of
from tpbsim.nki.typing import tensor

HERE = os.path.abspath(__file__)


def fails(kernel, *args, arch="mariana", **kw):
    with pytest.raises(nki.NKIError) as e:
        nki.profile(kernel, *args, arch=arch, racecheck=False, **kw)
    return e.value


def check(e, rule, marker, *words):
    assert isinstance(e, tpbsim.Error)
    assert e.rule == rule, str(e)
    assert os.path.abspath(e.file) == HERE and e.line == line_of(HERE, marker), str(e)
    for w in words:
        assert w in str(e), str(e)
    assert str(e).startswith(f"{e.file}:{e.line}: {rule}: ")


A = np.zeros((128, 512), dtype=np.float32)


@nki.jit
def too_many_partitions(a):
    t = nl.ndarray((256, 4), dtype=nl.float32, buffer=nl.sbuf)   # <- pdim
    return t


def test_a_partition_dimension_over_128():
    check(fails(too_many_partitions, A), "partition dimension over 128", "<- pdim", "256")


@nki.jit
def slice_outside(a):
    t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a[0:128, 256:768])   # <- slice
    return a


def test_a_slice_outside_its_tensor():
    check(fails(slice_outside, A), "slice outside its tensor", "<- slice", "256:768")


@nki.jit
def psum_too_large(a):
    ps = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.psum)
    st = nl.ndarray((128, 128), dtype=nl.bfloat16, buffer=nl.sbuf)
    mv = nl.ndarray((128, 1024), dtype=nl.bfloat16, buffer=nl.sbuf)
    nisa.nc_matmul(ps, st, mv)   # <- psum
    return a


def test_a_psum_tile_larger_than_the_generations_matmul_may_write():
    check(fails(psum_too_large, A, arch="cayman"), "PSUM tile larger than the matmul may write",
          "<- psum", "1024 columns", "one 2 KiB PSUM bank")


@nki.jit
def mx_psum_too_large(a):
    ps = nl.ndarray((32, 8192), dtype=nl.float32, buffer=nl.psum)
    st = nl.ndarray((32, 32), dtype=nl.float8_e4m3fn_x4, buffer=nl.sbuf)
    mv = nl.ndarray((32, 8192), dtype=nl.float8_e4m3fn_x4, buffer=nl.sbuf)
    sc = nl.ndarray((32, 32), dtype=nl.uint8, buffer=nl.sbuf)
    mc = nl.ndarray((32, 8192), dtype=nl.uint8, buffer=nl.sbuf)
    nisa.nc_matmul_mx(ps, st, mv, sc, mc)   # <- mxpsum
    return a


def test_a_psum_tile_larger_than_v4s_eight_banks():
    check(fails(mx_psum_too_large, A), "PSUM tile larger than the matmul may write",
          "<- mxpsum", "8192 columns", "the 8 PSUM banks")


@nki.jit
def matmul_shapes(a):
    ps = nl.ndarray((64, 512), dtype=nl.float32, buffer=nl.psum)
    st = nl.ndarray((64, 64), dtype=nl.float8_e4m3fn_x4, buffer=nl.sbuf)
    mv = nl.ndarray((32, 512), dtype=nl.float8_e4m3fn_x4, buffer=nl.sbuf)
    s1 = nl.ndarray((64, 64), dtype=nl.uint8, buffer=nl.sbuf)
    s2 = nl.ndarray((32, 512), dtype=nl.uint8, buffer=nl.sbuf)
    nisa.nc_matmul_mx(dst=ps, stationary=st, moving=mv, stationary_scale=s1,   # <- mm
                      moving_scale=s2)
    return a


def test_matmul_shapes_that_do_not_fit():
    check(fails(matmul_shapes, A), "matmul shapes", "<- mm", "(64, 64)", "(32, 512)")


@nki.jit
def fp8_on_v3(a):
    nl.ndarray((128, 64), dtype=nl.float8_e4m3fn, buffer=nl.sbuf)   # <- dtype
    return a


def test_a_dtype_the_generation_lacks():
    check(fails(fp8_on_v3, A, arch="cayman"), "dtype the generation lacks", "<- dtype",
          "float8_e4m3fn", "NeuronCore-v3")


@nki.jit
def quantize_on_v3(a):
    t = nl.ndarray((128, 64), dtype=nl.bfloat16, buffer=nl.sbuf)
    q = nl.ndarray((128, 16), dtype=nl.uint32, buffer=nl.sbuf)
    s = nl.ndarray((128, 16), dtype=nl.uint8, buffer=nl.sbuf)
    nisa.quantize_mx(dst=q, src=t, dst_scale=s)   # <- qmx
    return a


def test_an_instruction_the_generation_lacks():
    check(fails(quantize_on_v3, A, arch="cayman"), "instruction the generation lacks", "<- qmx",
          "quantize_mx needs NeuronCore-v4", "cayman")


@nki.jit
def sin_of_a_tile(a):
    t = nl.load(a)
    u = nl.sin(t)   # <- sin
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, u)
    return out


@nki.jit
def bitwise_and_of_tiles(a):
    t = nl.load(a)
    u = nl.bitwise_and(t, t)   # <- and
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, u)
    return out


@nki.jit
def subtract_on_the_scalar_engine(a):
    t = nl.load(a)
    u = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    nisa.tensor_scalar(u, t, nl.subtract, 1.0, engine=nisa.scalar_engine)   # <- act
    return a


@nki.jit
def copy_on_the_v2_scalar_engine(a):
    t = nl.load(a)
    u = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    nisa.tensor_copy(u, t, engine=nisa.scalar_engine)   # <- v2act
    return a


def test_what_the_model_lacks_names_the_call_and_the_language_call():
    check(fails(sin_of_a_tile, A), "operator the model lacks", "<- sin",
          "activation: activation function sin is not in the model's table")
    check(fails(bitwise_and_of_tiles, A), "operator the model lacks", "<- and",
          "tensor_tensor: operator bitwise_and is not one of the model's ALU operators")
    check(fails(subtract_on_the_scalar_engine, A), "engine", "<- act",
          "the Scalar engine runs (multiply, add), (multiply, -), (add, -), not (subtract, "
          "bypass)")
    check(fails(copy_on_the_v2_scalar_engine, A, arch="sunda"),
          "instruction the generation lacks", "<- v2act",
          "tensor_copy: the NeuronCore-v2 Scalar engine has no tensor_copy")


@nki.jit
def typed(a: tensor[128, 512]):
    return a


def test_an_input_of_the_wrong_shape_or_dtype():
    e = fails(typed, np.zeros((64, 512), dtype=np.float32))
    assert e.rule == "input shape" and "(64, 512)" in str(e) and "(128, 512)" in str(e)
    assert os.path.abspath(e.file) == HERE
    e = fails(typed, np.zeros((128, 512), dtype=np.float64))
    assert e.rule == "input dtype" and "float64" in str(e)


@nki.jit
def exhaust(a):
    keep = []
    for i in nl.affine_range(40):
        t = nl.ndarray((128, 2048), dtype=nl.float32, buffer=nl.sbuf)   # <- sbuf
        nisa.dma_copy(dst=t[:, 0:512], src=a)
        keep.append(t)
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for t in keep:
        nisa.dma_copy(dst=out, src=t[:, 0:512])
    return out


def test_sbuf_exhausted_names_the_line_and_the_live_tiles():
    e = fails(exhaust, A)
    check(e, "SBUF exhausted", "<- sbuf", "needs 8192 bytes per partition",
          "32 live tiles", "tile0 [128, 2048] float32 in sbuf (line")


@nki.jit
def psum_exhaust(a):
    st = nl.ndarray((32, 32), dtype=nl.float8_e4m3fn_x4, buffer=nl.sbuf)
    mv = nl.ndarray((32, 512), dtype=nl.float8_e4m3fn_x4, buffer=nl.sbuf)
    s1 = nl.ndarray((4, 32), dtype=nl.uint8, buffer=nl.sbuf)
    s2 = nl.ndarray((4, 512), dtype=nl.uint8, buffer=nl.sbuf)
    for t in (st, mv, s1, s2):
        nisa.memset(dst=t, value=0)
    tiles = []
    for i in range(9):
        ps = nl.ndarray((32, 512), dtype=nl.float32, buffer=nl.psum)   # <- psum9
        nisa.nc_matmul_mx(ps, st, mv, s1, s2)
        tiles.append(ps)
    out = nl.ndarray((32, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    for t in tiles:
        s = nl.ndarray((32, 512), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_copy(dst=s, src=t)
        nisa.dma_copy(dst=out, src=s)
    return out


def test_psum_exhausted():
    check(fails(psum_exhaust, A), "PSUM exhausted", "<- psum9", "8 live tiles")


def test_an_uncaught_nkierror_shows_no_frame_inside_tpbsim(tmp_path):
    f = tmp_path / "kern.py"
    f.write_text(textwrap.dedent("""\
        import numpy as np
        import tpbsim.nki as nki
        import tpbsim.nki.language as nl

        @nki.jit
        def k(a):
            return nl.ndarray((300, 4), dtype=nl.float32)

        k(np.zeros((4, 4), dtype=np.float32))
        """))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        os.path.abspath(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p))
    p = subprocess.run([sys.executable, str(f)], capture_output=True, text=True, env=env)
    assert p.returncode == 1
    assert f"{f}:7: partition dimension over 128" in p.stderr, p.stderr
    assert "tpbsim/nki" not in p.stderr and "tpbsim/" not in p.stderr.replace(str(f), ""), \
        p.stderr
    assert 'line 9, in <module>' in p.stderr and 'line 7, in k' in p.stderr


@nki.jit
def tf32_matmul(a):
    t = nl.ndarray((128, 64), dtype=nl.tfloat32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a[:, 0:64])   # <- tf32 (the conversion is the first use)
    ps = nl.ndarray((64, 64), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=ps, stationary=t, moving=t)
    return a


@nki.jit
def scalar_bias(a):
    t = nl.load(a)
    nisa.activation(dst=t, op=nl.exp, data=t, bias=0.5)   # <- bias
    return a


def test_a_dtype_or_operand_form_the_model_lacks():
    check(fails(tf32_matmul, A), "dtype the model lacks", "<- tf32",
          "tensor_copy dst is tfloat32, which the model has no DTYPE for")
    check(fails(scalar_bias, A), "not modelled", "<- bias",
          "activation: a scalar bias other than 0")
