"""Correct by construction (SPEC §17): random small kernels — random sequences
of loads (dtype changes included), copies (strided views included), MX
matmuls (quantize_mx + nc_matmul_mx, accumulating) and stores (overlapping
ones included), in loops of random counts — run on the model with the race
check: no race, and every output bit for bit what the NumPy semantics of the
same calls (tpbsim.nki.reference) give. Extend the operations as SPEC §18's
instructions land."""

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
                op = rnd.choice(["load", "load", "copy", "store", "mx"])
                if op == "load" or not tiles:
                    tiles.append(load(rnd, a))
                elif op == "copy":
                    tiles.append(copy(rnd, rnd.choice(tiles)))
                elif op == "store":
                    store(rnd, rnd.choice(tiles), out)
                else:
                    tiles.append(mx(rnd, a, b))
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
