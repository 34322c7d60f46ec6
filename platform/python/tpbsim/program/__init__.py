"""tpbsim.program: programs built from structured instructions (docs/NKI.md
"The program builder").

An instruction is its queue, mnemonic, fields and the bytes it reads and
writes (regions of SBUF, PSUM and HBM, per partition, each DMA access with
the DMA engine that moves it); the :class:`Builder` derives the waits between
queues from those bytes, assigns the semaphores, and prints the program text
last. The operand helpers (:mod:`tpbsim.program.operands`) spell the fields
in the syntax of docs/ASM.md; :mod:`tpbsim.program.instructions` makes the
model's instructions with their footprints, ready for :meth:`Builder.add`.

    from tpbsim.program import Builder, instructions, regions, operands as op

    b = Builder("mariana")
    reads, writes = regions.dma_regions(128, 2048, ("hbm", 0, 2048), ("sbuf", 0, 0))
    b.add("dma0", "dma_copy", op.dma_fields(128, 2048, op.hbm(0, 2048), op.sbuf_ep(0, 0)),
          reads, writes, loc="kernel.py:12")
    # the same kind of instruction, its fields and footprint made by one call
    b.add("dma1", *instructions.dma_copy(128, 2048, ("hbm", 0x8000, 2048), ("sbuf", 0, 0x800)))
    text = b.text()

tpbsim.nki lowers kernels onto it, and the GEMM generator of tpbsim.kernels
builds its programs on it (docs/NKI.md, docs/KERNELS.md "Ordering").
"""

from . import instructions, operands, regions
from .builder import COMPUTE_QUEUES, DMA_QUEUES, Builder, BuildError, Instr, is_dma
from .regions import HBM, PSUM, SBUF, Tracker, dma_regions, region

__all__ = ["Builder", "BuildError", "Instr", "Tracker", "region", "dma_regions", "SBUF", "PSUM",
           "HBM", "COMPUTE_QUEUES", "DMA_QUEUES", "is_dma", "instructions", "operands",
           "regions"]
