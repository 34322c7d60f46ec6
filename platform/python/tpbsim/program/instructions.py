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

from . import operands as op
from .regions import PSUM, SBUF, dma_regions, region

_MEMS = {"sbuf": SBUF, "psum": PSUM}
# Bytes of one element of the dtypes the contiguous forms below name (SPEC §2).
ELEMENT_BYTES = {"fp32": 4, "bf16": 2, "fp16": 2, "fp8_e4m3": 1, "fp8_e5m2": 1}


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


__all__ = ["ELEMENT_BYTES", "dma_copy", "endpoint_text", "ldweights", "matmul", "mx_cols",
           "quantize_mx", "scale_regions", "tensor_copy", "tensor_dequantize"]
