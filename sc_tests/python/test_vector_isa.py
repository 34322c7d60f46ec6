"""SPEC §18's instructions (activation, tensor_tensor, tensor_scalar,
tensor_reduce, tensor_tensor_scan, memset, iota, reciprocal, bn_stats,
bn_aggr, nc_transpose, tensor_copy on every engine, the plain matmul) run on
a core and compared with reference.py, which computes each from its
definition in NumPy (FP32 arithmetic, transcendentals by Python's math
module in double, BF16 / FP8 from their bit layouts): bit for bit, NaN
compared as NaN, on random values over many binades and the edge values
(NaN, +-Inf, +-0, subnormals, overflow to the destination DTYPE)."""

import numpy as np
import pytest

import tpbsim
import reference as ref

F32 = np.float32
# DTYPE name -> (reference format, container)
FMT = {"fp32": ("fp32", np.uint32), "bf16": ("bf16", np.uint16), "fp16": ("fp16", np.uint16),
       "fp8_e4m3": ("e4m3", np.uint8), "fp8_e5m2": ("e5m2", np.uint8),
       "fp8_e4m3_legacy": ("e4m3_legacy", np.uint8)}
EDGE = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 3e-39, -1.1754942e-38, 1.1754944e-38,
        3.4028235e38, -3.4028235e38, 1.0, -1.0, 0.5, -2.0, 65504.0, 65520.0, 448.0, 240.0,
        248.0, 57344.0, 1e-8, 88.7, 89.0, -103.0, -87.0, 3.0e38, 1e30, -7.5]
P, N = 32, 48
SRC, SRC1, DST, VEC, VEC1, RED = 0x0, 0x2000, 0x4000, 0x6000, 0x6100, 0x6200


def values(rng, shape, edge=True, scale=20):
    """FP32 values: normal x 2^U(-scale, scale), the edge values spread in."""
    v = rng.standard_normal(shape) * np.exp2(rng.uniform(-scale, scale, shape))
    v = v.astype(F32)
    if edge:
        flat = v.reshape(-1)
        idx = rng.choice(flat.size, min(flat.size // 3, 4 * len(EDGE)), replace=False)
        flat[idx] = np.resize(np.array(EDGE, F32), idx.size)
    return v


def put(core, off, dtype, x, p0=0):
    """Writes FP32 values `x` (2-D) as `dtype` at (p0, off) of SBUF; returns the
    FP32 values the core holds."""
    fmt, box = FMT[dtype]
    x = np.asarray(x, F32)
    codes = x.view(np.uint32) if dtype == "fp32" else ref.encode(fmt, x.astype(np.float64))
    codes = np.asarray(codes).astype(box)
    core.write("sbuf", p0, off, codes)
    return x.copy() if dtype == "fp32" else ref.decode(fmt, codes.astype(np.int64)).astype(F32)


def check(core, off, dtype, want, mem="sbuf", p0=0):
    """The codes at (p0, off) equal `want` (FP32 values) converted to dtype as
    `tpbsim convert` does; NaN compared as NaN."""
    fmt, box = FMT[dtype]
    want = np.asarray(want, F32)
    got = core.read(mem, p0, off, want.shape, box).astype(np.int64)
    if dtype == "fp32":
        wc = want.view(np.uint32).astype(np.int64)
    else:
        wc = ref.encode(fmt, want.astype(np.float64))
    gn = np.isnan(ref.decode(fmt, got) if dtype != "fp32" else got.astype(np.uint32).view(F32))
    wn = np.isnan(ref.decode(fmt, wc) if dtype != "fp32" else want)
    ok = np.where(gn | wn, gn == wn, got == wc)
    bad = np.argwhere(~ok)
    assert bad.size == 0, [(tuple(i), hex(got[tuple(i)]), hex(wc[tuple(i)])) for i in bad[:8]]


def t3d(off, n, mem="sbuf", p0=0, step=1):
    return f"t3d({mem}({p0}, {off:#x}), step=[{step}, 0, 0], num=[{n}, 1, 1])"


def run(core, text):
    r = core.run(text)
    assert r.status == "ok", r.message
    return r


FUNCS = ["copy", "exp", "log", "sqrt", "rsqrt", "reciprocal", "tanh", "sigmoid", "relu", "gelu",
         "gelu_apprx_tanh", "silu", "square", "abs", "sign", "erf", "softplus"]


@pytest.mark.parametrize("func", FUNCS)
def test_activation_function_table(make_core, func):
    core = make_core("mariana")
    rng = np.random.default_rng(FUNCS.index(func))
    x = put(core, SRC, "fp32", values(rng, (P, N), scale=8))
    run(core, f".engine act\nactivation func={func} channels={P} out_dtype=fp32 "
              f"src={t3d(SRC, N)} dst={t3d(DST, N)}\n")
    check(core, DST, "fp32", ref.activation_function(func, x))


@pytest.mark.parametrize("arch,in_dtype,out_dtype", [
    ("sunda", "bf16", "bf16"), ("cayman", "fp32", "fp8_e4m3_legacy"),
    ("mariana", "fp16", "fp8_e4m3"), ("maverick", "fp8_e5m2", "fp32")])
def test_activation_scale_bias_and_reduce(make_core, arch, in_dtype, out_dtype):
    """f(x * scale + bias) with a per-partition scale and bias, one rounding
    each, and the add reduce of the results per partition (in FP32, before
    the conversion to out_dtype); MAVERICK runs it on the DVE."""
    core = make_core(arch)
    rng = np.random.default_rng(7)
    x = put(core, SRC, in_dtype, values(rng, (P, N), scale=4))
    scale = put(core, VEC, "fp32", values(rng, (P, 1), edge=False, scale=2))
    bias = put(core, VEC1, "bf16", values(rng, (P, 1), edge=False, scale=2))
    r = run(core, f".engine act\nactivation func=tanh channels={P} in_dtype={in_dtype} "
                  f"out_dtype={out_dtype} src={t3d(SRC, N)} dst={t3d(DST, N)} "
                  f"scale=sbuf(0, {VEC:#x}) bias=sbuf(0, {VEC1:#x}) bias_dtype=bf16 "
                  f"reduce_op=add reduce_cmd=reset_reduce reduce_dtype=fp32 "
                  f"reduce_res=sbuf(0, {RED:#x})\n")
    with np.errstate(over="ignore", invalid="ignore"):
        y = ref.activation_function("tanh", (x * scale) + bias)
    check(core, DST, out_dtype, y)
    check(core, RED, "fp32", ref.reduce_rows("add", y)[:, None])
    assert ("act" not in r.engines) == (arch == "maverick")


def test_activation_reduce_registers_accumulate(core):
    """reset, then reduce (max) over two instructions: the registers hold the
    max of both; idle leaves them."""
    rng = np.random.default_rng(3)
    a = put(core, SRC, "fp32", values(rng, (P, N), edge=False))
    b = put(core, SRC1, "fp32", values(rng, (P, N), edge=False))
    line = (f"activation func=copy channels={P} out_dtype=fp32 reduce_op=max reduce_dtype=fp32 "
            f"dst={t3d(DST, N)}")
    run(core, f".engine act\n{line} src={t3d(SRC, N)} reduce_cmd=reset_reduce "
              f"reduce_res=sbuf(0, {RED:#x})\n"
              f"{line} src={t3d(SRC1, N)} reduce_cmd=reduce reduce_res=sbuf(0, {RED + 4:#x})\n")
    check(core, RED, "fp32", a.max(axis=1)[:, None])
    check(core, RED + 4, "fp32", np.maximum(a.max(axis=1), b.max(axis=1))[:, None])


BINARY = ["add", "subtract", "multiply", "divide", "maximum", "minimum", "equal", "not_equal",
          "greater_equal", "greater", "less_equal", "less", "power", "abs_max", "abs_min"]


@pytest.mark.parametrize("op", BINARY)
def test_tensor_tensor_operators(make_core, op):
    core = make_core("mariana")
    rng = np.random.default_rng(100 + BINARY.index(op))
    a = put(core, SRC, "fp32", values(rng, (P, N), scale=6))
    b = put(core, SRC1, "fp32", values(rng, (P, N), scale=6))
    engine = "pool" if op == "power" else "dve"
    run(core, f".engine {engine}\ntensor_tensor op={op} channels={P} out_dtype=fp32 "
              f"src={t3d(SRC, N)} src1=t3d(sbuf(0, {SRC1:#x})) dst={t3d(DST, N)}\n")
    check(core, DST, "fp32", ref.alu(op, a, b))


def test_tensor_tensor_broadcast_psum_and_dtypes(core):
    """src1 in PSUM with step 0 (one element per partition broadcast along
    the free axis), BF16 x FP32 inputs, a BF16 result."""
    rng = np.random.default_rng(11)
    a = put(core, SRC, "bf16", values(rng, (P, N)))
    b = values(rng, (P, 1))
    core.write("psum", 0, 0x40, b)
    run(core, f".engine dve\ntensor_tensor op=multiply channels={P} in_dtype=bf16 in1_dtype=fp32 "
              f"out_dtype=bf16 src={t3d(SRC, N)} src1=t3d(psum(0, 0x40), step=[0, 0, 0]) "
              f"dst={t3d(DST, N)}\n")
    check(core, DST, "bf16", ref.alu("multiply", a, np.broadcast_to(b, (P, N))))


@pytest.mark.parametrize("engine,op0,op1,rev0,rev1,vector", [
    ("dve", "subtract", "multiply", 0, 0, True),
    ("dve", "divide", "add", 1, 0, False),
    ("dve", "maximum", "minimum", 0, 1, True),
    ("dve", "abs", "square", 0, 0, False),
    ("dve", "greater", "bypass", 0, 0, True),
    ("act", "multiply", "add", 0, 0, True),
    ("act", "add", "bypass", 0, 0, False),
    ("pool", "rsqrt", "bypass", 0, 0, False),
])
def test_tensor_scalar(make_core, engine, op0, op1, rev0, rev1, vector):
    core = make_core("mariana")
    rng = np.random.default_rng(len(op0) * 31 + len(op1) + rev0 + 2 * rev1)
    x = put(core, SRC, "fp32", values(rng, (P, N), scale=6))
    if vector:
        s0 = put(core, VEC, "fp32", values(rng, (P, 1)))
        s1 = put(core, VEC1, "fp32", values(rng, (P, 1)))
        opnds = f"operand0=sbuf(0, {VEC:#x}) operand1=sbuf(0, {VEC1:#x})"
    else:
        s0, s1 = F32(0.75), F32(-3.0e-39)
        opnds = "operand0=0.75 operand1=-3e-39"
    run(core, f".engine {engine}\ntensor_scalar op0={op0} op1={op1} reverse0={rev0} "
              f"reverse1={rev1} {opnds} channels={P} out_dtype=fp32 src={t3d(SRC, N)} "
              f"dst={t3d(DST, N)}\n")
    t = ref.alu(op0, s0, x) if rev0 else ref.alu(op0, x, s0)
    t = np.broadcast_to(t, (P, N))
    want = t if op1 == "bypass" else (ref.alu(op1, s1, t) if rev1 else ref.alu(op1, t, s1))
    check(core, DST, "fp32", want)


@pytest.mark.parametrize("op,axes,negate,dtype", [
    ("add", 1, 0, "fp32"), ("add", 2, 1, "bf16"), ("maximum", 1, 0, "fp32"),
    ("minimum", 2, 0, "fp32"), ("multiply", 1, 1, "fp32"), ("maximum", 3, 1, "bf16")])
def test_tensor_reduce(make_core, op, axes, negate, dtype):
    """Reduces the innermost `axes` of a [4, 3, 4] pattern per partition."""
    core = make_core("mariana")
    rng = np.random.default_rng(axes * 10 + negate)
    x = put(core, SRC, dtype, values(rng, (P, 48), scale=3 if op == "multiply" else 20))
    run(core, f".engine dve\ntensor_reduce op={op} axes={axes} negate={negate} channels={P} "
              f"in_dtype={dtype} out_dtype=fp32 "
              f"src=t3d(sbuf(0, {SRC:#x}), step=[1, 4, 12], num=[4, 3, 4]) "
              f"dst=t3d(sbuf(0, {DST:#x}), num=[{48 // [1, 4, 12, 48][axes]}, 1, 1])\n")
    inner = [1, 4, 12, 48][axes]
    rows = x.reshape(P * (48 // inner), inner)
    want = ref.reduce_rows(op, rows).reshape(P, 48 // inner)
    check(core, DST, "fp32", -want if negate else want)


@pytest.mark.parametrize("op0,op1,rev0,rev1", [("multiply", "add", 0, 0), ("add", "maximum", 1, 1),
                                               ("subtract", "multiply", 1, 0)])
def test_tensor_tensor_scan(core, op0, op1, rev0, rev1):
    rng = np.random.default_rng(5 + rev0 + rev1)
    a = put(core, SRC, "fp32", values(rng, (P, N), scale=1))
    b = put(core, SRC1, "fp32", values(rng, (P, N), scale=1))
    init = put(core, VEC, "fp32", values(rng, (P, 1), edge=False))
    run(core, f".engine dve\ntensor_tensor_scan op0={op0} op1={op1} reverse0={rev0} "
              f"reverse1={rev1} initial=sbuf(0, {VEC:#x}) channels={P} out_dtype=fp32 "
              f"src={t3d(SRC, N)} src1=t3d(sbuf(0, {SRC1:#x})) dst={t3d(DST, N)}\n")
    check(core, DST, "fp32", ref.scan_rows(op0, op1, a, b, init[:, 0], rev0, rev1))


@pytest.mark.parametrize("engine,dtype,bits", [("dve", "bf16", 0x3F80), ("pool", "fp32", 0xFF800000),
                                                ("dve", "fp8_e4m3", 0x7F)])
def test_memset(make_core, engine, dtype, bits):
    core = make_core("mariana")
    run(core, f".engine {engine}\nmemset value={bits:#x} channels={P} out_dtype={dtype} "
              f"dst={t3d(DST, N)}\n")
    box = FMT[dtype][1]
    got = core.read("sbuf", 0, DST, (P, N), box)
    assert (got == box(bits)).all()


@pytest.mark.parametrize("dtype", ["fp32", "int32", "bf16"])
def test_iota(core, dtype):
    """offset + c x channel_multiplier + i0 s0 + i1 s1 + i2 s2 in wrapping
    32-bit integers, then one conversion (RNE) to dtype."""
    off, mult, steps, num = 2147483000, 1000, (3, -70, 2000000), (4, 3, 2)
    run(core, f".engine pool\niota offset={off} channel_multiplier={mult} "
              f"step=[{steps[0]}, {steps[1]}, {steps[2]}] num=[{num[0]}, {num[1]}, {num[2]}] "
              f"channels={P} out_dtype={dtype} dst={t3d(DST, 24)}\n")
    i2, i1, i0 = np.meshgrid(np.arange(2), np.arange(3), np.arange(4), indexing="ij")
    c = np.arange(P)[:, None]
    v = off + c * mult + (i0 * steps[0] + i1 * steps[1] + i2 * steps[2]).reshape(1, -1)
    v = ((v + 2**31) % 2**32 - 2**31).astype(np.int64)  # wrap to int32
    if dtype == "int32":
        got = core.read("sbuf", 0, DST, (P, 24), np.uint32).view(np.int32)
        np.testing.assert_array_equal(got, v)
    else:
        check(core, DST, dtype, v.astype(np.float64).astype(F32))


def test_reciprocal(core):
    rng = np.random.default_rng(9)
    x = put(core, SRC, "fp32", values(rng, (P, N)))
    run(core, f".engine dve\nreciprocal channels={P} out_dtype=bf16 src={t3d(SRC, N)} "
              f"dst={t3d(DST, N)}\n")
    check(core, DST, "bf16", ref.alu("reciprocal", x))


@pytest.mark.parametrize("n", [1, 7, 48, 512])
def test_bn_stats_then_bn_aggr(core, n):
    """bn_stats of two chunks per partition, bn_aggr of both: the formulas of
    docs/CONVENTIONS.md bit for bit, and the mean and variance of all 2n
    values to FP32 accuracy (NumPy in float64, a different algorithm)."""
    rng = np.random.default_rng(n)
    x = put(core, SRC, "fp32", (rng.standard_normal((P, 2 * n)) * 3 + 1).astype(F32))
    run(core, f".engine dve\n"
              f"bn_stats channels={P} out_dtype=fp32 src={t3d(SRC, n)} dst={t3d(DST, 6)}\n"
              f"bn_stats channels={P} out_dtype=fp32 src={t3d(SRC + 4 * n, n)} "
              f"dst={t3d(DST + 24, 6)}\n"
              f"bn_aggr channels={P} out_dtype=fp32 src={t3d(DST, 12)} dst={t3d(RED, 2)}\n")
    stats = np.concatenate([ref.bn_stats_rows(x[:, :n]), ref.bn_stats_rows(x[:, n:])], axis=1)
    check(core, DST, "fp32", stats)
    agg = ref.bn_aggr_rows(stats)
    check(core, RED, "fp32", agg)
    got = core.read("sbuf", 0, RED, (P, 2), F32).astype(np.float64)
    xd = x.astype(np.float64)
    np.testing.assert_allclose(got[:, 0], xd.mean(axis=1), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[:, 1], xd.var(axis=1), rtol=1e-4)


@pytest.mark.parametrize("dtype,p,n", [("fp32", 32, 32), ("bf16", 5, 17), ("fp8_e5m2", 32, 8)])
def test_nc_transpose_vector(core, dtype, p, n):
    """Bit for bit: source partition c's element j is element c of partition j."""
    rng = np.random.default_rng(p * n)
    box = FMT[dtype][1]
    codes = rng.integers(0, np.iinfo(box).max, (p, n), dtype=np.uint64).astype(box)
    core.write("sbuf", 0, SRC, codes)
    run(core, f".engine dve\nnc_transpose channels={p} in_dtype={dtype} out_dtype={dtype} "
              f"src={t3d(SRC, n)} dst={t3d(DST, p, p0=64)}\n")
    np.testing.assert_array_equal(core.read("sbuf", 64, DST, (n, p), box), codes.T)


@pytest.mark.parametrize("arch,engine,in_dtype,out_dtype", [
    ("cayman", "act", "fp32", "fp8_e4m3_legacy"), ("mariana", "act", "bf16", "fp8_e5m2"),
    ("mariana", "pool", "fp32", "bf16"), ("sunda", "pool", "fp16", "fp32"),
    ("mariana", "dve", "fp32", "fp8_e4m3")])
def test_tensor_copy_on_every_engine(make_core, arch, engine, in_dtype, out_dtype):
    core = make_core(arch)
    rng = np.random.default_rng(len(engine) + len(out_dtype))
    x = put(core, SRC, in_dtype, values(rng, (P, N)))
    run(core, f".engine {engine}\ntensor_copy channels={P} in_dtype={in_dtype} "
              f"out_dtype={out_dtype} src={t3d(SRC, N)} dst={t3d(DST, N)}\n")
    check(core, DST, out_dtype, x)


# ---- the plain matmul (nc_matmul) on every generation ---------------------------------

def mm_program(dtype, k, m, n, acc=0, perf="none", transpose=False, out="fp32"):
    cols = 2 * m if perf == "double_row" else m
    moving = 2 * n if perf == "double_row" else n
    tr = f" transpose=1 out_dtype={out}" if transpose else ""
    return (f".engine pe\n"
            f"ldweights in_dtype={dtype} rows={k} cols={m} perf_mode={perf} "
            f"src={t3d(SRC, cols)}\n"
            f"matmul in_dtype={dtype} rows={k} acc={acc} perf_mode={perf}{tr} "
            f"src={t3d(SRC1, moving)} dst={t3d(0, n, mem='psum')}\n")


@pytest.mark.parametrize("arch,dtype", [
    ("sunda", "bf16"), ("sunda", "fp32"), ("sunda", "fp8_e4m3_legacy"), ("cayman", "fp16"),
    ("cayman", "fp8_e5m2"), ("mariana", "fp8_e4m3"), ("maverick", "bf16")])
def test_plain_matmul(make_core, arch, dtype):
    """PSUM[m][n] = sum over k ascending of W[k][m] x X[k][n], FP32, one rounding
    per multiply and per add; then accumulated onto with acc=1."""
    core = make_core(arch)
    rng = np.random.default_rng(len(arch) * 7 + len(dtype))
    k, m, n = 96, 24, 40
    w = put(core, SRC, dtype, values(rng, (k, m), edge=False, scale=4))
    x = put(core, SRC1, dtype, values(rng, (k, n), edge=False, scale=4))
    run(core, mm_program(dtype, k, m, n))
    first = ref.matmul_fp32(w, x)
    check(core, 0, "fp32", first, mem="psum")
    run(core, mm_program(dtype, k, m, n, acc=1))
    acc = first
    for kk in range(k):
        acc = acc + w[kk][:, None] * x[kk][None, :]
    check(core, 0, "fp32", acc, mem="psum")


def test_plain_matmul_double_row(make_core):
    """perf_mode=double_row (FP8, v3): partition p holds contraction rows 2p
    (the first m / n elements) and 2p + 1 (the next)."""
    core = make_core("cayman")
    rng = np.random.default_rng(42)
    k, m, n = 64, 16, 32
    w2 = put(core, SRC, "fp8_e5m2", values(rng, (k, 2 * m), edge=False, scale=3))
    x2 = put(core, SRC1, "fp8_e5m2", values(rng, (k, 2 * n), edge=False, scale=3))
    run(core, mm_program("fp8_e5m2", k, m, n, perf="double_row"))
    w = np.stack([w2[:, :m], w2[:, m:]], axis=1).reshape(2 * k, m)
    x = np.stack([x2[:, :n], x2[:, n:]], axis=1).reshape(2 * k, n)
    check(core, 0, "fp32", ref.matmul_fp32(w, x), mem="psum")


def test_pe_transpose(make_core):
    """nc_transpose on the PE: the loaded [K, M] tile lands in PSUM as [M, K],
    bit for bit in its DTYPE."""
    core = make_core("mariana")
    rng = np.random.default_rng(1)
    k, m = 64, 48
    codes = rng.integers(0, 0xFFFF, (k, m)).astype(np.uint16)
    core.write("sbuf", 0, SRC, codes)
    run(core, mm_program("bf16", k, m, k, transpose=True, out="bf16"))
    np.testing.assert_array_equal(core.read("psum", 0, 0, (m, k), np.uint16), codes.T)


@pytest.mark.parametrize("arch,dtype", [("sunda", "fp8_e4m3"), ("cayman", "fp8_e4m3"),
                                        ("mariana", "fp8_e3m4")])
def test_a_dtype_the_generation_lacks_is_a_fault_by_name(make_core, arch, dtype):
    core = make_core(arch)
    with pytest.raises(tpbsim.Fault) as e:
        core.run(mm_program(dtype, 32, 8, 8))
    assert "valid_plain_mm_dtype" in e.value.predicates


# ---- faults: what the static contract cannot see, named at run time ---------------------

@pytest.mark.parametrize("arch,program,needle", [
    # the moving and the stationary DTYPEs: FP32 only with FP32
    ("mariana", mm_program("bf16", 32, 8, 8).replace("matmul in_dtype=bf16", "matmul in_dtype=fp32"),
     "valid_plain_mm_dtype_pair failed at run time: moving fp32 with stationary bf16"),
    # the legacy and the OCP E4M3 not together (v4 has both)
    ("mariana", mm_program("fp8_e4m3", 32, 8, 8).replace("matmul in_dtype=fp8_e4m3",
                                                         "matmul in_dtype=fp8_e4m3_legacy"),
     "the legacy and the OCP fp8_e4m3 not together"),
    # double row on one of the two
    ("cayman", mm_program("fp8_e5m2", 32, 8, 8, perf="double_row").replace(
        "acc=0 perf_mode=double_row", "acc=0 perf_mode=none").replace(
        f"num=[16, 1, 1]) dst", "num=[8, 1, 1]) dst"),
     "perf_mode double_row on one of the two operands"),
    # transpose mode overwrites: no accumulation
    ("mariana", mm_program("bf16", 16, 8, 16, acc=1, transpose=True, out="bf16"),
     "transpose mode writes the stationary's bf16 elements, overwriting"),
    # an engine that never runs the opcode: its word keeps its home engine,
    # and this queue has no record of it (as quantize_mx under .engine pe)
    ("mariana", ".engine pool\ntensor_reduce op=add channels=1 out_dtype=fp32 src=t3d(0) "
                "dst=t3d(0x40)\n", "unknown opcode 0x24: no record in the pool kernel_info table"),
    # the POOL cannot reach PSUM: an address from a register
    ("mariana", ".reg pool r3 = 0x2000000\n.engine pool\nmemset channels=4 out_dtype=fp32 "
                "dst=t3d(reg(r3), num=[8, 1, 1])\n", "which GpSimd (pool) cannot reach"),
])
def test_run_time_faults_name_the_rule(make_core, arch, program, needle):
    core = make_core(arch)
    with pytest.raises(tpbsim.Fault) as e:
        core.run(program)
    assert needle in str(e.value), str(e.value)


@pytest.mark.parametrize("arch,program,predicate", [
    # the ACT of v2 has no tensor_copy (nki.isa)
    ("sunda", ".engine act\ntensor_copy channels=1 out_dtype=fp32 src=t3d(0) dst=t3d(0x40)\n",
     "valid_engine_for_opcode"),
    # the ACT's tensor_scalar runs (multiply, add), (multiply, -), (add, -) only
    ("mariana", ".engine act\ntensor_scalar op0=divide operand0=2.0 channels=1 out_dtype=fp32 "
                "src=t3d(0) dst=t3d(0x40)\n", "tensor_scalar_valid_ops"),
    # GpSimd never reads PSUM
    ("mariana", ".engine pool\ntensor_copy channels=1 out_dtype=fp32 src=t3d(psum(0, 0x0)) "
                "dst=t3d(0x40)\n", "mem3d_valid(src)"),
    # a max reduce of the activation needs v3
    ("sunda", ".engine act\nactivation func=exp channels=1 out_dtype=fp32 src=t3d(0) "
              "dst=t3d(0x40) reduce_op=max reduce_cmd=reset_reduce\n",
     "activation_reduce_op_on_nc"),
])
def test_what_a_generation_or_engine_lacks_is_a_fault_by_name(make_core, arch, program,
                                                             predicate):
    core = make_core(arch)
    with pytest.raises(tpbsim.Fault) as e:
        core.run(program)
    assert predicate in e.value.predicates, (e.value.predicates, str(e.value))
