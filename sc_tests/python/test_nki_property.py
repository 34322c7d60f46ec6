"""Correct by construction (SPEC §17): random small kernels — random sequences
of loads (dtype changes included), copies (strided views included), MX
matmuls (quantize_mx + nc_matmul_mx, accumulating), SPEC §18's element-wise
calls (tensor_tensor, tensor_scalar, activation on the Vector, GpSimd and
Scalar engines), reductions (tensor_reduce, activation's reduce), plain
matmuls (nc_matmul accumulating in PSUM) and stores (overlapping ones
included), in loops of random counts — run on the model with the race check:
no race, and every output bit for bit what the NumPy semantics of the same
calls (tpbsim.nki.reference) give; and the element-wise ones within FP32
rounding of NumPy written by hand."""

import random

import numpy as np
import pytest

import tpbsim.nki as nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl

VALUE_TYPES = (nl.float32, nl.bfloat16, nl.float16)


def make_kernel(seed):
    @nki.jit
    def random_kernel(a, b):
        rnd = random.Random(seed)        # the same choices at every trace
        out = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.shared_hbm)
        tiles = []                       # defined SBUF tiles
        for _ in nl.affine_range(rnd.randint(1, 3)):
            for _ in range(rnd.randint(3, 7)):
                op = rnd.choice(["load", "load", "copy", "store", "mx", "tt", "ts", "act",
                                 "reduce", "mm"])
                if op == "load" or not tiles:
                    tiles.append(load(rnd, a))
                elif op == "copy":
                    tiles.append(copy(rnd, rnd.choice(tiles)))
                elif op == "store":
                    store(rnd, rnd.choice(tiles), out)
                elif op == "mx":
                    tiles.append(mx(rnd, a, b))
                else:
                    tiles.append(OPS[op](rnd, tiles))
            tiles = tiles[-4:]           # older tiles die here (their buffers reused)
        for t in tiles:
            store(rnd, t, out)
        return out
    return random_kernel


def load(rnd, a):
    p, f = rnd.choice([32, 64, 128]), rnd.choice([64, 128, 256])
    r0, c0 = rnd.randrange(0, 256 - p + 1, 8), rnd.randrange(0, 512 - f + 1, 4)
    t = nl.ndarray((p, f), dtype=rnd.choice(VALUE_TYPES), buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a[r0:r0 + p, c0:c0 + f])
    return t


def copy(rnd, src):
    p, f = src.shape
    d = nl.ndarray((p, f), dtype=rnd.choice(VALUE_TYPES), buffer=nl.sbuf)
    if rnd.random() < 0.5:
        f1 = rnd.choice([2, 4, 8])
        nisa.tensor_copy(dst=d.reshape((p, f // f1, f1)),
                         src=src.reshape((p, f1, f // f1)).permute((0, 2, 1)))
    else:
        nisa.tensor_copy(dst=d, src=src)
    return d


def store(rnd, t, out):
    p, f = t.shape
    r0, c0 = rnd.randrange(0, 128 - p + 1), rnd.randrange(0, 1024 - f + 1)
    nisa.dma_copy(dst=out[r0:r0 + p, c0:c0 + f], src=t)


def mx(rnd, a, b):
    k = rnd.choice([32, 64, 128])
    m, n = rnd.choice([16, 32, 64]), rnd.choice([64, 128])
    acc = nl.ndarray((m, n), dtype=nl.float32, buffer=nl.psum)
    for step in range(rnd.randint(1, 2)):
        r0 = rnd.randrange(0, 256 - k + 1, 32)
        qs = []
        for src, cols, c0 in ((a, m, rnd.randrange(0, 512 - 4 * m + 1, 4)),
                              (b, n, rnd.randrange(0, 512 - 4 * n + 1, 4))):
            raw = nl.ndarray((k, 4 * cols), dtype=nl.bfloat16, buffer=nl.sbuf)
            nisa.dma_copy(dst=raw, src=src[r0:r0 + k, c0:c0 + 4 * cols])
            q = nl.ndarray((k, cols), dtype=nl.float8_e4m3fn_x4, buffer=nl.sbuf)
            s = nl.ndarray((k, cols), dtype=nl.uint8, buffer=nl.sbuf)
            nisa.quantize_mx(dst=q, src=raw, dst_scale=s)
            qs.append((q, s))
        nisa.nc_matmul_mx(dst=acc, stationary=qs[0][0], moving=qs[1][0],
                          stationary_scale=qs[0][1], moving_scale=qs[1][1])
    res = nl.ndarray((m, n), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=res, src=acc)
    return res


def _pick(rnd, tiles, x, f=None):
    """A defined tile of x's partitions (and f elements), else x."""
    same = [t for t in tiles if t.shape[0] == x.shape[0] and (f is None or t.shape[1] == f)]
    return rnd.choice(same) if same else x


def tensor_tensor(rnd, tiles):
    x = rnd.choice(tiles)
    y = _pick(rnd, tiles, x, x.shape[1])
    d = nl.ndarray(x.shape, dtype=rnd.choice(VALUE_TYPES), buffer=nl.sbuf)
    op, eng = rnd.choice([(nl.add, nisa.vector_engine), (nl.subtract, nisa.gpsimd_engine),
                          (nl.multiply, nisa.vector_engine), (nl.maximum, nisa.gpsimd_engine),
                          (nl.minimum, nisa.vector_engine), (nl.divide, nisa.vector_engine)])
    nisa.tensor_tensor(dst=d, data1=x, data2=y, op=op, engine=eng)
    return d


def tensor_scalar(rnd, tiles):
    x = rnd.choice(tiles)
    d = nl.ndarray(x.shape, dtype=rnd.choice(VALUE_TYPES), buffer=nl.sbuf)
    if rnd.random() < 0.5:
        nisa.tensor_scalar(dst=d, data=x, op0=nl.multiply, operand0=rnd.uniform(-2, 2),
                           op1=nl.add, operand1=rnd.uniform(-1, 1),
                           engine=rnd.choice([nisa.vector_engine, nisa.scalar_engine]))
    else:
        v = nl.ndarray((x.shape[0], 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_reduce(dst=v, op=nl.maximum, data=x, axis=1)
        nisa.tensor_scalar(dst=d, data=x, op0=nl.subtract, operand0=v,
                           reverse0=rnd.random() < 0.5)
    return d


def activation(rnd, tiles):
    x = rnd.choice(tiles)
    d = nl.ndarray(x.shape, dtype=rnd.choice(VALUE_TYPES), buffer=nl.sbuf)
    func = rnd.choice([nl.exp, nl.tanh, nl.sigmoid, nl.relu, nl.square, nl.gelu, nl.silu])
    if rnd.random() < 0.5:
        r = nl.ndarray((x.shape[0], 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation(dst=d, op=func, data=x, scale=rnd.uniform(-0.5, 0.5), reduce_op=nl.add,
                        reduce_res=r)
    else:
        nisa.activation(dst=d, op=func, data=x, scale=rnd.uniform(-0.5, 0.5))
    return d


def reduce(rnd, tiles):
    x = rnd.choice(tiles)
    p, f = x.shape
    f1 = rnd.choice([1, 2, 4])
    d = nl.ndarray((p, f // f1 if f1 > 1 else 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_reduce(dst=d, op=rnd.choice([nl.add, nl.maximum, nl.minimum]),
                       data=x.reshape((p, f // f1, f1)) if f1 > 1 else x, axis=2 if f1 > 1 else 1)
    return d


def matmul(rnd, tiles):
    st = rnd.choice(tiles)
    k, m = st.shape
    m = min(m, 128)
    mv = _pick(rnd, tiles, st)
    n = min(mv.shape[1], 512)
    dt = rnd.choice([nl.bfloat16, nl.float16])
    s2 = nl.ndarray((k, m), dtype=dt, buffer=nl.sbuf)
    nisa.tensor_copy(dst=s2, src=st[:, 0:m])
    m2 = nl.ndarray((k, n), dtype=dt, buffer=nl.sbuf)
    nisa.tensor_copy(dst=m2, src=mv[:, 0:n], engine=nisa.gpsimd_engine)
    acc = nl.ndarray((m, n), dtype=nl.float32, buffer=nl.psum)
    for _ in range(rnd.randint(1, 2)):
        nisa.nc_matmul(dst=acc, stationary=s2, moving=m2)
    res = nl.ndarray((m, n), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=res, src=acc, engine=nisa.scalar_engine)
    return res


OPS = {"tt": tensor_tensor, "ts": tensor_scalar, "act": activation, "reduce": reduce,
       "mm": matmul}


@pytest.mark.parametrize("seed", range(16))
def test_a_random_kernel_has_no_race_and_its_numpy_semantics(seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((256, 512)).astype(np.float32)
    b = rng.standard_normal((256, 512)).astype(np.float32)
    k = make_kernel(seed)
    prof = nki.profile(k, a, b, racecheck=True)
    assert prof.races == [], prof.races[0]["message"]
    want = nki.reference(k)(a, b)
    assert np.array_equal(prof.outputs.view(np.uint32), want.view(np.uint32))
    assert prof.stats["calls"] >= 4


@nki.jit
def elementwise(a, b):
    """tensor_tensor, tensor_scalar, activation, tensor_reduce and nc_matmul
    once each, for the hand NumPy below."""
    out = nl.ndarray((128, 5 * 256), dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.load(a[0:128, 0:256])
    y = nl.load(b[0:128, 0:256])
    t = nl.ndarray((128, 256), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=t, data1=x, data2=y, op=nl.multiply)
    nl.store(out[:, 0:256], t)
    nisa.tensor_scalar(dst=t, data=x, op0=nl.multiply, operand0=0.5, op1=nl.add, operand1=-1.0)
    nl.store(out[:, 256:512], t)
    r = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.activation(dst=t, op=nl.exp, data=x, scale=0.25, reduce_op=nl.add, reduce_res=r)
    nl.store(out[:, 512:768], t)
    nisa.tensor_reduce(dst=r, op=nl.maximum, data=y, axis=1)
    nisa.tensor_scalar(dst=t, data=y, op0=nl.subtract, operand0=r)
    nl.store(out[:, 768:1024], t)
    ps = nl.ndarray((128, 256), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=ps, stationary=x[:, 0:128], moving=y)
    nisa.tensor_copy(dst=t, src=ps)
    nl.store(out[:, 1024:1280], t)
    return out


def test_elementwise_calls_match_numpy_by_hand():
    """The same calls against NumPy written here: FP32 operations exact (one
    rounding each), exp within an FP32 ulp or two, the matmul within its FP32
    summation error."""
    rng = np.random.default_rng(11)
    a = rng.standard_normal((256, 512)).astype(np.float32)
    b = rng.standard_normal((256, 512)).astype(np.float32)
    prof = nki.profile(elementwise, a, b, racecheck=True)
    assert prof.races == []
    o = prof.outputs
    x, y = a[:128, :256], b[:128, :256]
    assert np.array_equal(o[:, 0:256], x * y)
    assert np.array_equal(o[:, 256:512], (x * np.float32(0.5)) + np.float32(-1.0))
    e = np.exp(x.astype(np.float64) * 0.25)
    assert np.allclose(o[:, 512:768], e, rtol=2e-7, atol=0)
    assert np.array_equal(o[:, 768:1024], y - y.max(axis=1, keepdims=True))
    mm = x[:, :128].T.astype(np.float64) @ y
    bound = 128 * 2.0**-23 * (np.abs(x[:, :128]).T.astype(np.float64) @ np.abs(y))
    assert np.all(np.abs(o[:, 1024:1280] - mm) <= bound)
