"""Operands and fields in the program syntax of docs/ASM.md (one place that
spells them, for every generator of program text)."""


def sbuf(p, off):
    """An SBUF address (ADDR4 of a compute instruction)."""
    return f"sbuf({p}, {off:#x})"


def psum(p, off):
    """A PSUM address."""
    return f"psum({p}, {off:#x})"


def addr(mem, p, off):
    """An SBUF or PSUM address by memory name."""
    return f"{mem}({p}, {off:#x})"


def t3d(address, step, num):
    """A TENSOR3D pattern: steps in elements and counts, dim 0 innermost
    (three of each)."""
    return (f"t3d({address}, step=[{step[0]}, {step[1]}, {step[2]}], "
            f"num=[{num[0]}, {num[1]}, {num[2]}])")


def mx1d(data, scale, num, step=1, scale_pidx=0):
    """An MXTENSOR1D operand (SPEC §4, §5)."""
    return f"mx1d(data={data}, scale={scale}, num={num}, step={step}, scale_pidx={scale_pidx})"


def hbm(offset, stride):
    """An HBM endpoint of a DMA descriptor."""
    return f"hbm({offset:#x}, stride={stride})"


def sbuf_ep(p, off):
    """An SBUF endpoint of a DMA descriptor (row r in partition p + r)."""
    return f"sbuf({p}, {off:#x})"


def dma_fields(rows, row_bytes, src, dst, rmw_dtype=None):
    """The fields of a dma_copy (``rmw_dtype``: an add on write in that dtype)."""
    s = f"rows={rows} row_bytes={row_bytes} src={src} dst={dst}"
    if rmw_dtype is not None:
        s += f" rmw=add rmw_dtype={rmw_dtype}"
    return s
