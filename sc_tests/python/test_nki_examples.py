"""The NKI kernels of examples/nki/ (docs/NKI.md), each run on the model and
checked against a NumPy reference of its own math (tolerances per file) and
bit for bit against the NumPy semantics of the same calls, with no race
(TPBSIM_NKI_LONG=1: larger shapes, the long form)."""

import importlib
import os
import sys

import numpy as np
import pytest

import tpbsim.nki as nki
import tpbsim.nki.language as nl
from conftest import SOURCE_DIR

sys.path.insert(0, str(SOURCE_DIR / "examples" / "nki"))


@pytest.mark.parametrize("arch", ["mariana", "maverick"])
def test_mx_matmul(arch):
    m = importlib.import_module("mx_matmul")
    rng = np.random.default_rng(7)
    a = rng.standard_normal((1024, 128)).astype(np.float32)
    b = rng.standard_normal((1024, 512)).astype(np.float32)
    prof = nki.profile(m.mx_matmul, a, b, arch=arch)
    assert prof.races == []
    assert m.within_tolerance(prof.outputs, a, b)
    assert np.array_equal(prof.outputs, nki.reference(m.mx_matmul, arch=arch)(a, b))
    # The tolerance fails a result 10% off everywhere, or rows swapped.
    assert not m.within_tolerance(prof.outputs * 1.1, a, b)
    assert not m.within_tolerance(prof.outputs[::-1], a, b)
    assert prof.engines["pe"]["instructions"] == 2 * 2       # LS + MM per K-tile
    assert prof.simulated_ns > 0


def test_mx_matmul_on_a_generation_without_mx():
    m = importlib.import_module("mx_matmul")
    a = np.zeros((512, 128), dtype=np.float32)
    b = np.zeros((512, 512), dtype=np.float32)
    with pytest.raises(nki.NKIError, match=r"float8_e4m3fn_x4, which NeuronCore-v3 \(cayman\) "
                       "does not have"):
        nki.simulate(m.mx_matmul, arch="cayman")(a, b)


def test_tiled_copy_is_bfloat16_rounding_bit_for_bit():
    m = importlib.import_module("tiled_copy")
    x = np.random.default_rng(2).standard_normal((256, 1024)).astype(np.float32)
    x[0, :4] = [np.inf, -np.inf, 0.0, -0.0]
    x[1, 0] = 3.4e38            # rounds up past BF16's largest: saturates (convert's rule)
    prof = nki.profile(m.tiled_cast, nki.bits(x.view(np.uint32), nl.float32))
    ref = m.reference(x)
    ref[1, 0] = 0x7F7F            # the model saturates to the largest finite BF16
    assert prof.races == []
    assert prof.outputs.dtype == np.uint16
    assert np.array_equal(prof.outputs, ref)


def test_transpose2d():
    m = importlib.import_module("transpose2d")
    a = np.random.default_rng(3).integers(-100, 100, (64, 12 * 20)).astype(np.int8)
    prof = nki.profile(m.transpose2d, a, (12, 20))
    assert prof.races == []
    assert np.array_equal(prof.outputs, m.reference(a, (12, 20)))
    assert prof.engines["dve"]["instructions"] == 1       # one strided tensor_copy


KERNELS = ["tensor_add", "avgpool2d", "mamba", "layernorm", "softmax", "rmsnorm"]
# TPBSIM_NKI_LONG=1: the long form (larger shapes, minutes rather than seconds).
LONG = bool(os.environ.get("TPBSIM_NKI_LONG"))


@pytest.mark.parametrize("name", KERNELS)
def test_an_example_kernel_runs_and_matches_its_math(name):
    """Its own NumPy math within its stated tolerance, the NumPy semantics of
    the same calls bit for bit, no race."""
    m = importlib.import_module(name)
    kernel = getattr(m, name)
    args = m.inputs(np.random.default_rng(5), long=LONG)
    prof = nki.profile(kernel, *args)
    assert prof.races == []
    ref = m.reference(*args)
    assert np.abs(prof.outputs - ref).max() <= m.TOLERANCE * np.abs(ref).max()
    # The tolerance fails a result 1% off, or its elements shifted.
    assert np.abs(prof.outputs * 1.01 - ref).max() > m.TOLERANCE * np.abs(ref).max()
    assert np.abs(np.roll(prof.outputs, 1, axis=-1) - ref).max() > m.TOLERANCE * np.abs(ref).max()
    want = nki.reference(kernel)(*args)
    assert np.array_equal(prof.outputs.view(np.uint32), want.view(np.uint32))


@pytest.mark.parametrize("arch", ["sunda", "cayman", "mariana"])
def test_the_matmul_tutorial_kernels_run_and_match_their_math(arch):
    """The five variants on cayman (two on the other generations: the time of
    this test): within FP32 summation error of lhsT.T @ rhs, no race, the
    basic and the optimized one bit for bit the NumPy semantics (FP32
    k-ascending); the later variants are faster than the basic tiled one."""
    m = importlib.import_module("matmul_tutorial")
    rng = np.random.default_rng(9)
    times = {}
    kernels = m.KERNELS if arch == "cayman" or LONG else (m.matmul_basic, m.matmul_block_free)
    for k in kernels:
        lhsT, rhs = m.inputs(rng, k, long=LONG)
        prof = nki.profile(k, lhsT, rhs, arch=arch)
        assert prof.races == [], k.__name__
        bound = lhsT.shape[0] * 2.0**-23 * (np.abs(lhsT).T.astype(np.float64) @ np.abs(rhs))
        assert np.all(np.abs(prof.outputs - m.reference(lhsT, rhs)) <= bound), k.__name__
        if k in (m.matmul_basic, m.matmul_optimized):      # (the NumPy loop is slow)
            assert np.array_equal(prof.outputs, nki.reference(k, arch=arch)(lhsT, rhs))
        times[k.__name__] = prof.simulated_ns
    if "matmul_tiled" in times:
        assert times["matmul_hoist_load"] < times["matmul_tiled"]
        assert times["matmul_optimized"] < times["matmul_tiled"]
