"""The model's instructions as the builder takes them: each function returns
``(mnemonic, fields, reads, writes)`` — the fields text of docs/ASM.md and
the byte footprint (tpbsim.program.regions) — so that

    b.add(queue, *instructions.dma_copy(128, 2048, ("hbm", 0, 2048), ("sbuf", 0, 0)))

adds it with the waits its bytes need. One place spells each instruction and
says which bytes it touches, for every generator of programs (tpbsim.nki's
lowering, the GEMM generator of tpbsim.kernels). Operands are on-chip
addresses ``(partition, byte)``; an MX operand's scales are in the rows of
SPEC §4 (block row b at partition q0 + 32 (b / 4) + scale_pidx + b % 4).
"""

import numpy as np

from . import operands as op
from .regions import PSUM, SBUF, dma_regions, region

_MEMS = {"sbuf": SBUF, "psum": PSUM}
# Bytes of one element of every DTYPE an instruction below names (SPEC §2, §18).
ELEMENT_BYTES = {"fp32": 4, "bf16": 2, "fp16": 2, "fp8_e4m3": 1, "fp8_e5m2": 1,
                 "fp8_e4m3_legacy": 1, "fp8_e3m4": 1, "fp8_e2m5": 1, "int8": 1, "uint8": 1,
                 "int16": 2, "uint16": 2, "int32": 4, "uint32": 4}


def endpoint_text(ep):
    """A DMA endpoint ``("sbuf", partition, byte)`` or ``("hbm", byte, row
    stride)`` in the program syntax."""
    return op.sbuf_ep(ep[1], ep[2]) if ep[0] == "sbuf" else op.hbm(ep[1], ep[2])


def dma_copy(rows, row_bytes, src, dst):
    """One DMA descriptor: ``rows`` rows of ``row_bytes`` from src to dst
    (endpoints as :func:`endpoint_text` takes them), with the DMA engine that
    moves each row (SPEC §10)."""
    reads, writes = dma_regions(rows, row_bytes, src, dst)
    fields = op.dma_fields(rows, row_bytes, endpoint_text(src), endpoint_text(dst))
    return "dma_copy", fields, reads, writes


def scale_regions(q0, pidx, parts, addr, cols):
    """The scale bytes of an MX operand of ``parts`` partitions whose quadrant
    starts at partition q0: 4 rows per quadrant of 32 partitions (SPEC §4)."""
    out, blocks = [], parts // 8
    for k in range(0, -(-blocks // 4)):
        b = min(4, blocks - 4 * k)
        p = q0 + 32 * k + pidx
        out.append(region(SBUF, p, p + b, addr, addr + cols))
    return out


def mx_cols(n):
    """MXTENSOR_V2 columns n as (n0, n1), each at most 255; None when none is."""
    if n <= 255:
        return n, 1
    for n1 in (2, 3, 4):
        if n % n1 == 0 and n // n1 <= 255:
            return n // n1, n1
    return None


def _mx_source(arch, data, scale, n, pidx):
    """The MX source operand of a PE instruction: MXTENSOR1D on v4 (mariana),
    MXTENSOR_V2 on v5 (maverick)."""
    d, s = op.sbuf(*data), op.sbuf(*scale)
    if arch == "mariana":
        return op.mx1d(d, s, n, 1, pidx)
    n0, n1 = mx_cols(n)
    return f"mx(data={d}, scale={s}, num=[{n0}, {n1}], step_data={n0}, step_scale={n0})"


def _mx_reads(rows, data, scale, n, word, pidx):
    p, a = data
    q, sa = scale
    return [region(SBUF, p, p + rows, a, a + n * word)] + scale_regions(q, pidx, rows, sa, n)


def ldweights(arch, dtype, rows, cols, data, scale, word, pidx=0):
    """The PE's stationary load of an MX tile: ``cols`` columns of x4 words of
    ``word`` bytes in ``rows`` partitions from ``data`` = (partition, byte),
    its scales at ``scale`` (the quadrant's first partition, byte)."""
    mnemonic = "ldweights_mx" if arch == "mariana" else "ldweights"
    fields = (f"in_dtype={dtype} rows={rows} cols={cols} "
              f"src={_mx_source(arch, data, scale, cols, pidx)}")
    return mnemonic, fields, _mx_reads(rows, data, scale, cols, word, pidx), []


def matmul(arch, dtype, rows, cols, acc, data, scale, word, psum, parts, pidx=0):
    """An MX matmul of ``cols`` moving columns into FP32 PSUM at ``psum`` =
    (partition, byte), ``parts`` partitions (the stationary columns), adding
    to what is there when ``acc``."""
    mnemonic = "matmul_mx" if arch == "mariana" else "matmul"
    dst = op.t3d(op.psum(*psum), [1, 0, 0], [cols, 1, 1])
    fields = (f"in_dtype={dtype} rows={rows} acc={acc} "
              f"src={_mx_source(arch, data, scale, cols, pidx)} dst={dst}")
    out = region(PSUM, psum[0], psum[0] + parts, psum[1], psum[1] + 4 * cols)
    reads = _mx_reads(rows, data, scale, cols, word, pidx) + ([out] if acc else [])
    return mnemonic, fields, reads, [out]


def _run(mem, p, addr, n, channels, es):
    """A contiguous t3d operand: its text and its region."""
    text = op.t3d(op.addr(mem, p, addr), [1, 0, 0], [n, 1, 1])
    return text, region(_MEMS[mem], p, p + channels, addr, addr + n * es)


def tensor_copy(channels, in_dtype, out_dtype, src, dst, n):
    """The DVE's copy of ``n`` contiguous elements per partition; ``src`` /
    ``dst`` are (memory name, partition, byte)."""
    st, sr = _run(*src, n, channels, ELEMENT_BYTES[in_dtype])
    dt, dr = _run(*dst, n, channels, ELEMENT_BYTES[out_dtype])
    fields = f"channels={channels} in_dtype={in_dtype} out_dtype={out_dtype} src={st} dst={dt}"
    return "tensor_copy", fields, [sr], [dr]


def quantize_mx(channels, in_dtype, out_dtype, src, words, data, scale):
    """The DVE's QuantizeMX of ``4 words`` contiguous elements per partition at
    ``src`` (partition, byte) into ``words`` x4 words at ``data`` and their
    scales at ``scale`` (SPEC §4)."""
    st, sr = _run("sbuf", *src, 4 * words, channels, ELEMENT_BYTES[in_dtype])
    dst = op.mx1d(op.sbuf(*data), op.sbuf(*scale), words)
    fields = (f"channels={channels} in_dtype={in_dtype} out_dtype={out_dtype} src={st} "
              f"dst={dst}")
    p, a = data
    writes = [region(SBUF, p, p + channels, a, a + 4 * words)]
    writes += scale_regions(scale[0], 0, channels, scale[1], words)
    return "quantize_mx", fields, [sr], writes


def tensor_dequantize(fmt, group, channels, src, words, dst, cols):
    """POOL's widening of ``words`` packed 32-bit words per partition at
    ``src`` into ``cols`` x4 FP8 words at ``dst`` (seed 000's formats)."""
    st, sr = _run("sbuf", *src, words, channels, 4)
    dt, dr = _run("sbuf", *dst, cols, channels, 4)
    fields = f"fmt={fmt} group={group} channels={channels} src={st} dst={dt}"
    return "tensor_dequantize", fields, [sr], [dr]


# ------------------------------------------------------------------ SPEC §18
# A tensor operand is ``(mem, partition, byte, dims, dtype)``: memory name
# ("sbuf" / "psum"), its start partition and byte, dims [(step, count)]
# outermost first (at most three, steps in elements), the DTYPE name. A
# per-partition vector operand is ``(mem, partition, byte, dtype)``: one
# element per active partition at that byte.

def pattern_region(mem, p0, parts, base, dims, es):
    """The bytes of a t3d operand (dims outermost first, element steps) as a
    region: exact for one run or evenly spaced runs, else their span."""
    dims = [(s, n) for s, n in dims if n > 1]
    if not dims:
        return region(mem, p0, p0 + parts, base, base + es)
    if len(dims) == 1 and dims[0][0] == 1:
        return region(mem, p0, p0 + parts, base, base + dims[0][1] * es)
    if len(dims) == 2 and dims[1][0] == 1 and dims[0][0] > 0:
        return region(mem, p0, p0 + parts, base, base + dims[1][1] * es,
                      dims[0][0] * es, dims[0][1])
    lo = hi = 0
    for s, n in dims:
        far = s * (n - 1) * es
        lo += min(0, far)
        hi += max(0, far)
    return region(mem, p0, p0 + parts, base + lo, base + hi + es)


def _inner(dims):
    """Three (step, count) dims, innermost first (count-1 padding)."""
    return list(reversed(dims)) + [(0, 1)] * (3 - len(dims))


def pattern(t, channels):
    """A tensor operand's t3d(...) text and region."""
    mem, p, addr, dims, dt = t
    inner = _inner(dims)
    text = op.t3d(op.addr(mem, p, addr), [s for s, _ in inner], [n for _, n in inner])
    return text, pattern_region(_MEMS[mem], p, channels, addr, dims, ELEMENT_BYTES[dt])


def second(t, channels):
    """A second source (src1): its start and steps; its counts are the first
    source's (``t``'s dims carry them for the region)."""
    mem, p, addr, dims, dt = t
    steps = [s for s, _ in _inner(dims)]
    text = f"t3d({op.addr(mem, p, addr)}, step=[{steps[0]}, {steps[1]}, {steps[2]}])"
    return text, pattern_region(_MEMS[mem], p, channels, addr, dims, ELEMENT_BYTES[dt])


def vector(v, channels):
    """A per-partition vector operand's address text and region."""
    mem, p, addr, dt = v
    return op.addr(mem, p, addr), region(_MEMS[mem], p, p + channels, addr,
                                         addr + ELEMENT_BYTES[dt])


def scalar_text(x):
    """An FP32 operand's text: the FP32 value's shortest decimal, its bits
    where a decimal would not give them back (Inf, NaN, -0)."""
    f = np.float32(x)
    if np.isfinite(f) and not (f == 0 and np.signbit(f)):
        return repr(float(f))
    return f"{int(f.view(np.uint32)):#010x}"


def _operand(name, x, channels, reads):
    """`name=...` of a scalar-or-vector FP32 operand (a vector read is added to
    reads)."""
    if isinstance(x, tuple):
        text, r = vector(x, channels)
        reads.append(r)
        return f" {name}={text}"
    return f" {name}={scalar_text(x)}"


def _io(channels, src, dst):
    """The common part: channels, dtypes, src and dst."""
    st, sr = pattern(src, channels)
    dt, dr = pattern(dst, channels)
    fields = (f"channels={channels} in_dtype={src[4]} out_dtype={dst[4]} src={st} dst={dt}")
    return fields, [sr], [dr]


def unary(mnemonic, channels, src, dst):
    """An instruction of one source and one destination pattern in tensor_copy's
    layout: tensor_copy (any patterns), reciprocal, bn_stats, bn_aggr."""
    fields, reads, writes = _io(channels, src, dst)
    return mnemonic, fields, reads, writes


def activation(channels, func, src, dst, scale=1.0, bias=None, reduce=None):
    """The ACT's dst = func(src x scale + bias); scale an FP32 value or a
    vector, bias a vector or None; ``reduce`` = (op, cmd, result vector or
    None) or None."""
    fields, reads, writes = _io(channels, src, dst)
    fields = f"func={func} " + fields
    if isinstance(scale, tuple) or scale != 1.0:
        fields += _operand("scale", scale, channels, reads)
    if bias is not None:
        text, r = vector(bias, channels)
        fields += f" bias={text} bias_dtype={bias[3]}"
        reads.append(r)
    if reduce is not None:
        rop, cmd, res = reduce
        fields += f" reduce_op={rop} reduce_cmd={cmd}"
        if res is not None:
            text, r = vector(res, channels)
            fields += f" reduce_dtype={res[3]} reduce_res={text}"
            writes.append(r)
    return "activation", fields, reads, writes


def tensor_tensor(channels, alu, src, src1, dst):
    """dst = src <alu> src1 (src1: the first source's counts, its own steps)."""
    st, sr = pattern(src, channels)
    s1, r1 = second(src1, channels)
    dt, dr = pattern(dst, channels)
    fields = (f"op={alu} channels={channels} in_dtype={src[4]} in1_dtype={src1[4]} "
              f"out_dtype={dst[4]} src={st} src1={s1} dst={dt}")
    return "tensor_tensor", fields, [sr, r1], [dr]


def tensor_scalar(channels, src, dst, op0, operand0, reverse0=False, op1="bypass",
                  operand1=0.0, reverse1=False):
    """dst = (src <op0> operand0) <op1> operand1; operands FP32 values or vectors."""
    fields, reads, writes = _io(channels, src, dst)
    head = f"op0={op0}" + _operand("operand0", operand0, channels, reads)
    head += " reverse0=1" if reverse0 else ""
    if op1 != "bypass":
        head += f" op1={op1}" + _operand("operand1", operand1, channels, reads)
        head += " reverse1=1" if reverse1 else ""
    return "tensor_scalar", f"{head} {fields}", reads, writes


def tensor_reduce(channels, alu, axes, src, dst, negate=False):
    """dst = the reduction by `alu` of src's innermost `axes` dimensions."""
    fields, reads, writes = _io(channels, src, dst)
    head = f"op={alu} axes={axes}" + (" negate=1" if negate else "")
    return "tensor_reduce", f"{head} {fields}", reads, writes


def tensor_tensor_scan(channels, op0, op1, initial, src, src1, dst, reverse0=False,
                       reverse1=False):
    """Per partition: acc = op1(op0(src[k], acc), src1[k]) from `initial` (an
    FP32 value or a vector); dst[k] = acc."""
    st, sr = pattern(src, channels)
    s1, r1 = second(src1, channels)
    dt, dr = pattern(dst, channels)
    reads = [sr, r1]
    head = (f"op0={op0} op1={op1}" + (" reverse0=1" if reverse0 else "")
            + (" reverse1=1" if reverse1 else "") + _operand("initial", initial, channels, reads))
    fields = (f"{head} channels={channels} in_dtype={src[4]} in1_dtype={src1[4]} "
              f"out_dtype={dst[4]} src={st} src1={s1} dst={dt}")
    return "tensor_tensor_scan", fields, reads, [dr]


def memset(channels, bits, dst):
    """Every dst element = the element whose bits are `bits`."""
    dt, dr = pattern(dst, channels)
    return ("memset", f"value={bits:#x} channels={channels} out_dtype={dst[4]} dst={dt}",
            [], [dr])


def iota(channels, steps, nums, dst, offset=0, channel_multiplier=0):
    """The POOL's iota: offset + c x channel_multiplier + sum of i_d x steps[d]
    (dimension 0 innermost) along dst."""
    dt, dr = pattern(dst, channels)
    s = ", ".join(str(x) for x in steps)
    n = ", ".join(str(x) for x in nums)
    fields = (f"offset={offset} channel_multiplier={channel_multiplier} step=[{s}] num=[{n}] "
              f"channels={channels} out_dtype={dst[4]} dst={dt}")
    return "iota", fields, [], [dr]


def nc_transpose(channels, src, dst, count):
    """The DVE's 32 x 32 transpose: source partition c's element j to element c
    of destination partition (dst start + j); `count` source elements."""
    st, sr = pattern(src, channels)
    dt, _ = pattern(dst, count)
    mem, p, addr, dims, dt_name = dst
    dr = pattern_region(_MEMS[mem], p, count, addr, dims, ELEMENT_BYTES[dt_name])
    fields = (f"channels={channels} in_dtype={src[4]} out_dtype={dst[4]} src={st} dst={dt}")
    return "nc_transpose", fields, [sr], [dr]


def ldweights_plain(rows, cols, src, perf_mode="none"):
    """The PE's stationary load of a plain tile: `rows` partitions of `src`
    (its pattern holds the cols elements, 2 x cols in double row)."""
    st, sr = pattern(src, rows)
    pm = f" perf_mode={perf_mode}" if perf_mode != "none" else ""
    return ("ldweights", f"in_dtype={src[4]} rows={rows} cols={cols}{pm} src={st}", [sr], [])


def matmul_plain(rows, acc, src, dst, parts, transpose=False, perf_mode="none"):
    """A plain matmul of the moving `src` (rows partitions) into PSUM `dst`
    (`parts` partitions: the stationary's columns), adding to it when `acc`;
    `transpose`: the loaded stationary transposed into dst in its DTYPE."""
    st, sr = pattern(src, rows)
    dt, dr = pattern(dst, parts)
    extra = (f" transpose=1 out_dtype={dst[4]}" if transpose else "")
    extra += f" perf_mode={perf_mode}" if perf_mode != "none" else ""
    fields = f"in_dtype={src[4]} rows={rows} acc={acc}{extra} src={st} dst={dt}"
    return "matmul", fields, [sr] + ([dr] if acc else []), [dr]


__all__ = ["ELEMENT_BYTES", "activation", "dma_copy", "endpoint_text", "iota", "ldweights",
           "ldweights_plain", "matmul", "matmul_plain", "memset", "mx_cols", "nc_transpose",
           "pattern", "pattern_region", "quantize_mx", "scalar_text", "scale_regions", "second",
           "tensor_copy", "tensor_dequantize", "tensor_reduce", "tensor_scalar",
           "tensor_tensor", "tensor_tensor_scan", "unary", "vector"]
