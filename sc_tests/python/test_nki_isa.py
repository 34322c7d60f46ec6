"""Each of SPEC §18's isa calls lowered (tpbsim.nki, docs/NKI.md "Lowering")
and run on the model: against the NumPy semantics of the same calls
(tpbsim.nki.reference) bit for bit, against NumPy written here, with the
race check; on the engine NKI names, with NKI's operator names; the
language calls that lower to them (nl.matmul, nl.transpose, nl.mean,
broadcast_to, zeros in PSUM)."""

import numpy as np
import pytest

import tpbsim
import tpbsim.nki as nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl
from conftest import drop_wait

RNG = np.random.default_rng(17)
A = RNG.standard_normal((128, 512)).astype(np.float32)
B = RNG.standard_normal((128, 512)).astype(np.float32)


def run(kernel, *args, arch="mariana", **kw):
    """The model's outputs; the same bits as the NumPy semantics; no race."""
    prof = nki.profile(kernel, *args, arch=arch, **kw)
    assert prof.races == []
    want = nki.reference(kernel, arch=arch)(*args, **kw)
    got = prof.outputs
    assert np.array_equal(np.asarray(got).view(np.uint32), np.asarray(want).view(np.uint32))
    return prof


def out_of(shape):
    return nl.ndarray(shape, dtype=nl.float32, buffer=nl.shared_hbm)


@nki.jit
def transposes(a):
    out = out_of((64, 96 + 32))
    x = nl.load(a[0:96, 0:64])
    ps = nl.ndarray((64, 96), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_transpose(dst=ps, data=x)                         # the Tensor engine
    t = nl.ndarray((64, 96), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=t, src=ps)
    nl.store(out[:, 0:96], t)
    small = nl.ndarray((32, 32), dtype=nl.float32, buffer=nl.sbuf)
    nisa.nc_transpose(dst=small, data=x[0:32, 0:32], engine=nisa.vector_engine)
    nl.store(out[0:32, 96:128], small)
    return out


def test_nc_transpose_on_the_tensor_and_the_vector_engine():
    prof = run(transposes, A)
    o = prof.outputs
    assert np.array_equal(o[:, 0:96], A[0:96, 0:64].T)
    assert np.array_equal(o[0:32, 96:128], A[0:32, 0:32].T)
    assert prof.engines["pe"]["instructions"] == 2           # LDWEIGHTS + MATMUL transpose=1


@nki.jit
def matmuls(a, b):
    out = out_of((64, 1024 + 64))
    x = nl.load(a)
    y = nl.load(b)
    ps = nl.ndarray((64, 1024), dtype=nl.float32, buffer=nl.psum)
    xb = nl.ndarray((128, 64), dtype=nl.bfloat16, buffer=nl.sbuf)
    nisa.tensor_copy(dst=xb, src=x[:, 0:64])
    yb = nl.ndarray((128, 1024), dtype=nl.bfloat16, buffer=nl.sbuf)
    nisa.tensor_copy(dst=yb[:, 0:512], src=y)
    nisa.tensor_copy(dst=yb[:, 512:1024], src=x)
    nisa.nc_matmul(dst=ps, stationary=xb, moving=yb)           # two PSUM banks (v4)
    nisa.nc_matmul(dst=ps, stationary=xb, moving=yb)           # accumulate (NKI's rule)
    t = nl.ndarray((64, 1024), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=t, src=ps)
    nl.store(out[:, 0:1024], t)
    p2 = nl.matmul(x[:, 0:64], y[:, 0:64], transpose_x=True)    # language matmul
    t2 = nl.copy(p2)
    nl.store(out[:, 1024:1088], t2)
    return out


def test_plain_matmul_across_psum_banks_accumulating_and_nl_matmul():
    prof = run(matmuls, A, B)
    o = prof.outputs
    xb = A[:, 0:64].astype(np.float64)
    yb = np.concatenate([B, A], axis=1)
    want = 2 * (xb.T @ yb)
    bound = 2 * 128 * 2.0**-7 * (np.abs(xb).T @ np.abs(yb))    # BF16 inputs
    assert np.all(np.abs(o[:, 0:1024] - want) <= bound)
    mm = A[:, 0:64].T.astype(np.float64) @ B[:, 0:64]
    err = 128 * 2.0**-23 * (np.abs(A[:, :64]).T @ np.abs(B[:, :64]))
    assert np.all(np.abs(o[:, 1024:] - mm) <= err)
    # 2 x (LDWEIGHTS + one MATMUL per bank) + the nl.matmul's pair
    assert prof.engines["pe"]["instructions"] == 2 * 3 + 2


@nki.jit
def fp8_matmuls(a, b):
    out = out_of((32, 64 + 64))
    x8 = nl.ndarray((128, 2, 32), dtype=nl.float8_e5m2, buffer=nl.sbuf)
    y8 = nl.ndarray((128, 2, 64), dtype=nl.float8_e5m2, buffer=nl.sbuf)
    x = nl.load(a[:, 0:64])
    y = nl.load(b[:, 0:128])
    nisa.tensor_copy(dst=x8, src=x)
    nisa.tensor_copy(dst=y8, src=y)
    ps = nl.ndarray((32, 64), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=ps, stationary=x8, moving=y8, perf_mode=nisa.matmul_perf_mode.double_row)
    t = nl.ndarray((32, 64), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=t, src=ps)
    nl.store(out[:, 0:64], t)
    xl = nl.ndarray((128, 32), dtype=nl.float8_e4m3, buffer=nl.sbuf)     # legacy E4M3
    nisa.tensor_copy(dst=xl, src=x[:, 0:32])
    ps2 = nl.ndarray((32, 64), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=ps2, stationary=xl, moving=y8.reshape((128, 128))[:, 0:64])
    nisa.tensor_copy(dst=t, src=ps2)
    nl.store(out[:, 64:128], t)
    return out


@pytest.mark.parametrize("arch", ["cayman", "mariana"])
def test_fp8_matmul_double_row_and_the_legacy_e4m3(arch):
    prof = run(fp8_matmuls, A, B, arch=arch)
    assert prof.outputs.shape == (32, 128)
    assert np.isfinite(prof.outputs).all()


@nki.jit
def vector_calls(a, b):
    out = out_of((128, 8 * 64))
    x = nl.load(a[:, 0:64])
    y = nl.load(b[:, 0:64])
    t = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_tensor_scan(dst=t, data0=x, data1=y, initial=0.5, op0=nl.multiply, op1=nl.add)
    nl.store(out[:, 0:64], t)
    nisa.iota(t, [[1, 64]], offset=3, channel_multiplier=64)
    nl.store(out[:, 64:128], t)
    nisa.reciprocal(dst=t, data=y)
    nl.store(out[:, 128:192], t)
    nisa.memset(dst=t, value=2.5, engine=nisa.gpsimd_engine)
    nl.store(out[:, 192:256], t)
    st = nl.ndarray((128, 6), dtype=nl.float32, buffer=nl.sbuf)
    nisa.bn_stats(dst=st, data=x)
    ag = nl.ndarray((128, 2), dtype=nl.float32, buffer=nl.sbuf)
    nisa.bn_aggr(dst=ag, data=st)
    nisa.tensor_scalar(dst=t, data=x, op0=nl.subtract, operand0=ag[:, 0:1])
    nl.store(out[:, 256:320], t)
    nisa.tensor_tensor(dst=t, data1=nl.abs(x), data2=y, op=nl.power)   # GpSimd's power
    nl.store(out[:, 320:384], t)
    m = nl.mean(x, axis=1)
    z = nl.zeros((128, 64), dtype=nl.float32, buffer=nl.psum)
    nisa.tensor_scalar(dst=z, data=y, op0=nl.add, operand0=m, engine=nisa.vector_engine)
    nisa.tensor_copy(dst=t, src=z, engine=nisa.scalar_engine)
    nl.store(out[:, 384:448], t)
    nisa.activation(dst=t, op=nl.exp, data=x, bias=ag[:, 0:1], scale=ag[:, 1:2])
    nl.store(out[:, 448:512], t)
    return out


@pytest.mark.parametrize("arch", ["cayman", "mariana"])
def test_the_vector_gpsimd_and_scalar_calls_against_numpy(arch):
    prof = run(vector_calls, A, B, arch=arch)
    o = prof.outputs
    x, y = A[:, 0:64], B[:, 0:64]
    h, scan = np.full(128, 0.5, np.float32), []
    for i in range(64):
        h = (x[:, i] * h) + y[:, i]
        scan.append(h)
    assert np.array_equal(o[:, 0:64], np.stack(scan, axis=1))
    assert np.array_equal(o[:, 64:128], 3 + 64 * np.arange(128)[:, None] + np.arange(64))
    assert np.array_equal(o[:, 128:192], np.float32(1) / y)
    assert np.all(o[:, 192:256] == 2.5)
    mean = x.astype(np.float64).mean(axis=1, keepdims=True)
    assert np.allclose(o[:, 256:320], x - mean, atol=1e-6)
    assert np.allclose(o[:, 320:384], np.abs(x).astype(np.float64) ** y, rtol=1e-6,
                       equal_nan=True)
    assert np.allclose(o[:, 384:448], y + mean, atol=1e-6)
    var = x.astype(np.float64).var(axis=1, keepdims=True)
    assert np.allclose(o[:, 448:512], np.exp(x * var + mean), rtol=1e-5)
    pool = prof.program.split(".engine pool")[1].split(".engine")[0]
    act = prof.program.split(".engine act")[1].split(".engine")[0]
    assert [ln.split()[0] for ln in pool.splitlines() if ln and ln.split()[0] != "nop"] == \
        ["iota", "memset", "tensor_tensor"]                   # power on the GpSimd engine
    assert [ln.split()[0] for ln in act.splitlines() if ln and ln.split()[0] != "nop"] == \
        ["activation", "tensor_copy", "activation"]           # abs, the copy, exp


def test_the_scalar_engine_is_the_vector_engine_on_maverick():
    prof = run(vector_calls, A, B, arch="maverick")
    assert "act" not in prof.engines or prof.engines["act"]["instructions"] == 0


@nki.jit
def reduce_registers(a):
    out = out_of((128, 2))
    x = nl.load(a)
    t = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
    r = nl.ndarray((128, 2), dtype=nl.float32, buffer=nl.sbuf)
    nisa.activation(dst=t[:, 0:256], op=nl.exp, data=x[:, 0:256], reduce_op=nl.add,
                    reduce_cmd=nisa.reduce_cmd.reset_reduce)
    nisa.activation(dst=t[:, 256:512], op=nl.exp, data=x[:, 256:512], reduce_op=nl.add,
                    reduce_res=r[:, 0:1], reduce_cmd=nisa.reduce_cmd.reduce)
    nisa.activation_reduce(dst=t, op=nl.tanh, data=x, reduce_op=nl.maximum,
                           reduce_res=r[:, 1:2])
    nl.store(out, r)
    return out


def test_activation_reduce_registers_across_calls():
    o = run(reduce_registers, A).outputs
    e = np.exp(A.astype(np.float64)).astype(np.float32)
    assert np.allclose(o[:, 0], e.astype(np.float64).sum(axis=1), rtol=1e-5)
    assert np.array_equal(o[:, 1], np.tanh(A.astype(np.float64)).astype(np.float32).max(axis=1))


@nki.jit
def language_calls(a):
    out = out_of((128, 3 * 64 + 2 + 64))
    x = nl.load(a[:, 0:64])
    w = nl.load(a[0:1, 64:128])
    nl.store(out[:, 0:64], nl.multiply(x, nl.broadcast_to(w, (128, 64))))
    nl.store(out[:, 64:128], nl.exp(nl.negative(x)))
    tt = nl.transpose(x[0:64, :])
    nl.store(out[0:64, 128:192], nl.copy(tt))
    nl.store(out[:, 192:193], nl.sum(x, axis=1, keepdims=True))
    nl.store(out[:, 193:194], nl.max(x, axis=1, keepdims=True))
    nl.store(out[:, 194:258], nl.copy(nl.matmul(x, x[0:64, :])))     # x @ x[:64]: a transpose
    return out


def test_language_calls_lower_to_the_isa_calls():
    o = run(language_calls, A).outputs
    x = A[:, 0:64]
    assert np.array_equal(o[:, 0:64], x * A[0:1, 64:128])
    assert np.array_equal(o[:, 64:128], np.exp(-x.astype(np.float64)).astype(np.float32))
    assert np.array_equal(o[0:64, 128:192], x[0:64].T)
    s = x[:, 0].copy()
    for j in range(1, 64):
        s = s + x[:, j]
    assert np.array_equal(o[:, 192], s)
    assert np.array_equal(o[:, 193], x.max(axis=1))
    mm = x.astype(np.float64) @ x[0:64]
    assert np.all(np.abs(o[:, 194:258] - mm) <= 64 * 2.0**-23 * (np.abs(x) @ np.abs(x[0:64])))


@pytest.mark.parametrize("kernel", [vector_calls, matmuls, transposes])
def test_every_wait_of_a_lowered_kernel_is_needed(kernel):
    """The footprints of SPEC §18's instructions are exact: leaving out any one
    wait of the lowered program makes a race."""
    args = (A, B)[:kernel.func.__code__.co_argcount]
    prof = nki.profile(kernel, *args)
    text = prof.program.splitlines()
    lines = [k for k, ln in enumerate(text) if " wait=" in ln]
    assert len(lines) >= 3
    core = tpbsim.Core("mariana")
    try:
        for k in lines:
            for _, addr, raw in prof.hbm_loads:
                core.write("hbm", 0, addr, raw)
            r = core.run("\n".join(drop_wait(text, k)) + "\n", racecheck=True)
            assert r.races, f"line {k} ({text[k]}) waits for nothing needed"
    finally:
        core.close()
