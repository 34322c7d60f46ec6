"""C = A @ W over the cores of a device (SPEC §15, docs/KERNELS.md "Over several
cores"): C split into a grid of blocks by rows, columns or both, one block per
core, each core its own program (the one-core kernel of program.py on its
block: its own DMA queues, engines and SBUF), the operands and C in the
device's one HBM, every core's range its own. A device of one core is one
block, C whole. The values are those of the one-core GEMM: A's quantization
is per row, W's per column, so a block of C is the block the one-core kernel
computes, bit for bit.

Every size of the whole GEMM (its blocks' SBUF and PSUM, the device's HBM,
the instructions of every program and the host memory they and the values
take) is checked in closed form before any block's program is made."""

import dataclasses

from . import quant
from .plan import (MTILE, NTILE, GemmError, arg, ceil_div, check_totals, fit_core,
                   host_bytes, peak_tflops, shape_text)

# Each core's HBM range starts on a 4 KiB boundary.
HBM_ALIGN = 4096


@dataclasses.dataclass
class Block:
    """One core's block of C: rows r0.., columns c0.., its checked plan; once
    made, its kernel and program text."""
    core: int
    r0: int
    rows: int
    c0: int
    cols: int
    plan: object
    kernel: object = None
    text: str = None


@dataclasses.dataclass(frozen=True)
class Hbm:
    """The HBM a GEMM's blocks share, as the C++ device has it (its cores'
    per-core hbm.bytes and hbm.mbytes_per_s pooled: Device.hbm_bytes,
    Device.hbm_bytes_per_s): bytes, and bytes per second (None for a core
    given, which runs one block alone)."""
    bytes: int
    bytes_per_s: int = None


@dataclasses.dataclass
class Split:
    """The grid (``rows`` x ``cols`` blocks, why it was chosen; None for one
    core), its blocks in core order and the HBM they share."""
    rows: int
    cols: int
    reason: str
    blocks: list
    hbm: Hbm = None

    @property
    def several(self):
        return len(self.blocks) > 1


def _splits(total, parts, unit, gran):
    """Block sizes of `total` in `parts` blocks: multiples of `unit` when every block
    is then non-empty, else of the granule `gran` (4200 columns in 8: blocks of
    1024 would leave the last ones empty, so 525 each); None when `parts` blocks
    cannot each be non-empty."""
    for step in ((unit, gran) if total >= parts * unit else (gran,)):
        size = ceil_div(ceil_div(total, parts), step) * step
        if (parts - 1) * size < total:
            return [min(size, total - i * size) for i in range(parts)]
    return None


def _block_shape(plan, cores, rows, cols):
    return (f"{shape_text(plan)} over {cores} cores (each core's block {rows} x {plan.k} x "
            f"{cols})")


def choose_grid(plan, cores, timing, caps, hbm_bytes_per_s, placement="dma", lookahead=2):
    """(rows, cols, row sizes, column sizes, reason, the blocks' checked plans by
    shape): the grid of C blocks (rows x cols = cores) with the least
    estimated time per core: max(the block's PE bound plus its fill, its HBM
    bytes over its 16 DMA engines, the device's HBM bytes over the device's
    bandwidth, ``hbm_bytes_per_s``). A row split repeats W in every row of cores, a column split A;
    the fill (the first weight panel's arrival, less the matmuls of the first
    M-tile meanwhile) is added."""
    m, k, n, weights, arch = plan.m, plan.k, plan.n, plan.weights, plan.arch
    peak = peak_tflops(timing) * 1e12
    dma = timing["dma"]["engines"] * timing["dma"]["mbytes_per_s"] * 1e6
    hbm = float(hbm_bytes_per_s)
    gran = max(quant.WEIGHT_FORMATS[weights].get("ncols", 1), 2 if arch == "maverick" else 1)
    best, refused = None, None
    for gm in range(1, cores + 1):
        if cores % gm:
            continue
        gn = cores // gm
        rows, cols = _splits(m, gm, MTILE, 1), _splits(n, gn, NTILE, gran)
        if rows is None or cols is None:
            continue
        try:   # each distinct block shape's buffers (the widest panel that fits)
            fitted = {(r, c): fit_core(type(plan)(r, k, c, weights, arch), caps, placement,
                                       lookahead, _block_shape(plan, cores, r, c))
                      for r in set(rows) for c in set(cols)}
        except GemmError as e:
            refused = refused or e
            continue
        block = fitted[(rows[0], cols[0])]
        # The PE cannot start faster than the first weight panel arrives: its
        # first M-tile waits for the panel's K-tiles (the fill), less the
        # matmuls it does meanwhile.
        c_bytes = 4 * block.m * block.npad
        w_bytes = max(0, block.hbm_bytes() - c_bytes - 2 * block.m * block.kpad)
        panel_cols = block.group_cols(0)
        fill = max(0.0, w_bytes * panel_cols / block.npad / dma
                   - 2.0 * min(MTILE, block.m) * k * panel_cols / peak)
        per_core = max(2.0 * rows[0] * k * cols[0] / peak + fill, block.hbm_bytes() / dma)
        device = gm * gn * block.hbm_bytes() / hbm
        key = (max(per_core, device), gn)   # a tie: rows (W once per row of cores)
        if best is None or key < best[0]:
            best = (key, gm, gn, rows, cols, per_core, device, fitted)
    if best is None:
        if refused:
            raise refused
        raise GemmError(f"C of {m} x {n} cannot be split into {cores} non-empty blocks")
    _, gm, gn, rows, cols, per_core, device, fitted = best
    why = (f"{gm} x {gn} blocks of {rows[0]} x {cols[0]}: each core's bound "
           f"{per_core * 1e6:.1f} us (its PE or its DMA engines, and the fill), the device's HBM "
           f"{device * 1e6:.1f} us; the least of the {cores}-core grids")
    return gm, gn, rows, cols, why, fitted


def split(plan, cores, timing, caps, hbm, values, placement="dma", lookahead=2, first_core=0):
    """C's blocks over ``cores`` cores (the first on core ``first_core``), every
    size of the whole GEMM checked before anything is made: each block's SBUF
    and PSUM, then the HBM (``hbm``, an Hbm: the device's), the programs'
    instructions and the host memory of the programs and (``values``) of the
    operands, C and the memory images, all blocks together."""
    shape = shape_text(plan)
    if cores == 1:
        fitted = fit_core(plan, caps, placement, lookahead, shape)
        blocks = [Block(first_core, 0, plan.m, 0, plan.n, fitted)]
        gm = gn = 1
        why = None
    else:
        if placement != "dma":
            raise GemmError(f"{arg('cores', cores)} runs with the DMA placement (the operands "
                            f"in the device's HBM), not {arg('placement', placement)}")
        gm, gn, rows, cols, why, fitted = choose_grid(plan, cores, timing, caps,
                                                      hbm.bytes_per_s, placement, lookahead)
        blocks = [Block(first_core + i * gn + j, sum(rows[:i]), r, sum(cols[:j]), c,
                        fitted[(r, c)])
                  for i, r in enumerate(rows) for j, c in enumerate(cols)]
        shape = f"{shape} over {cores} cores"
    # Each core's range from the 4 KiB boundary after the previous one's end.
    need = (sum(ceil_div(b.plan.hbm_bytes(), HBM_ALIGN) * HBM_ALIGN for b in blocks[:-1])
            + blocks[-1].plan.hbm_bytes()) if placement == "dma" else 0
    check_totals(shape, sum(b.plan.instructions(placement) for b in blocks), need,
                 hbm.bytes, "the core" if cores == 1 else f"the device of {cores} cores",
                 host_bytes(plan, placement) if values else None)
    return Split(gm, gn, why, blocks, hbm)


def make_blocks(sp, hbm_capacity, kernel_of):
    """Makes each block's kernel and program: ``kernel_of(plan, hbm_capacity,
    hbm_base)`` -> (kernel, text); each core's HBM range from where the
    previous one's ends."""
    base = 0
    for b in sp.blocks:
        b.kernel, b.text = kernel_of(b.plan, hbm_capacity, base)
        b.plan = b.kernel.plan
        base = ceil_div(b.kernel.hbm.top, HBM_ALIGN) * HBM_ALIGN
    return sp
