"""Data in and out of tpbsim.nki (SPEC §17): NumPy arrays, torch tensors
(BF16 included), the raw-bit stand-in for types NumPy lacks, outputs of the
inputs' kind, inputs a kernel writes copied back; and the semantics of the
vendor's calling convention (simulate, a jitted kernel called directly)."""

import numpy as np
import pytest

import tpbsim.nki as nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl


@nki.jit
def to_bf16(a):
    out = nl.ndarray(a.shape, dtype=nl.bfloat16, buffer=nl.shared_hbm)
    t = nl.load(a)
    u = nl.ndarray(a.shape, dtype=nl.bfloat16, buffer=nl.sbuf)
    nisa.tensor_copy(dst=u, src=t)
    nl.store(out, u)
    return out


@nki.jit
def passthrough(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, nl.load(a))
    return out


@nki.jit
def fill_in_place(a, b):
    """Writes b (an input) and returns nothing: the older convention."""
    nl.store(b, nl.load(a))


def bf16_bits(x):
    """float32 -> BF16 codes, RNE (the format's definition)."""
    u = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


X = np.random.default_rng(0).standard_normal((64, 96)).astype(np.float32)


def test_numpy_in_numpy_out_and_bf16_as_its_values():
    out = nki.simulate(to_bf16)(X)
    assert isinstance(out, np.ndarray) and out.dtype == np.float32     # no ml_dtypes here
    assert np.array_equal(out.view(np.uint32) >> 16, bf16_bits(X).astype(np.uint32))
    assert np.array_equal(out.view(np.uint32) & 0xFFFF, np.zeros(X.shape, np.uint32))


def test_the_raw_bit_stand_in_in_and_out():
    codes = bf16_bits(X)
    out = nki.simulate(passthrough)(nki.bits(codes, nl.bfloat16))
    assert out.dtype == np.uint16 and np.array_equal(out, codes)
    with pytest.raises(nki.NKIError, match="holds its raw bits as uint16"):
        nki.bits(codes.astype(np.uint32), nl.bfloat16)


def test_torch_tensors_in_and_out_bf16_included():
    torch = pytest.importorskip("torch")
    t = torch.from_numpy(X)
    out = nki.simulate(to_bf16)(t)
    assert isinstance(out, torch.Tensor) and out.dtype == torch.bfloat16
    assert torch.equal(out, t.to(torch.bfloat16))     # torch's own RNE cast
    back = nki.simulate(passthrough)(out)
    assert back.dtype == torch.bfloat16 and torch.equal(back, out)


def test_ml_dtypes_arrays_where_installed():
    ml = pytest.importorskip("ml_dtypes")
    a = X.astype(ml.bfloat16)
    out = nki.simulate(passthrough)(a)
    assert out.dtype == a.dtype and np.array_equal(out.view(np.uint16), a.view(np.uint16))


def test_an_input_the_kernel_writes_is_copied_back():
    b = np.zeros_like(X)
    assert fill_in_place(X, b) is None           # called directly: simulate
    assert np.array_equal(b, X)


def test_integer_and_half_types_round_trip():
    for dt in (np.int8, np.uint8, np.int16, np.int32, np.uint32, np.float16):
        a = (np.arange(32 * 16) % 100).astype(dt).reshape(32, 16)
        out = nki.simulate(passthrough)(a)
        assert out.dtype == a.dtype and np.array_equal(out, a), dt
