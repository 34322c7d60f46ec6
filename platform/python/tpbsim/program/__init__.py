"""tpbsim.program: programs built from structured instructions (docs/NKI.md
"The program builder").

An instruction is its queue, mnemonic, fields and the bytes it reads and
writes (regions of SBUF, PSUM and HBM, per partition, each DMA access with
the DMA engine that moves it); the :class:`Builder` derives the waits between
queues from those bytes, assigns the semaphores, and prints the program text
last. The operand helpers (:mod:`tpbsim.program.operands`) spell the fields
in the syntax of docs/ASM.md.

    from tpbsim.program import Builder, regions, operands as op

    b = Builder("mariana")
    reads, writes = regions.dma_regions(128, 2048, ("hbm", 0, 2048), ("sbuf", 0, 0))
    b.add("dma0", "dma_copy", op.dma_fields(128, 2048, op.hbm(0, 2048), op.sbuf_ep(0, 0)),
          reads, writes, loc="kernel.py:12")
    text = b.text()

tpbsim.nki lowers kernels onto it; the GEMM generator can (docs/NKI.md says how).
"""

from . import operands, regions
from .builder import COMPUTE_QUEUES, DMA_QUEUES, Builder, BuildError, Instr, is_dma
from .regions import HBM, PSUM, SBUF, Tracker, dma_regions, region

__all__ = ["Builder", "BuildError", "Instr", "Tracker", "region", "dma_regions", "SBUF", "PSUM",
           "HBM", "COMPUTE_QUEUES", "DMA_QUEUES", "is_dma", "operands", "regions"]
