"""tpbsim.program: the waits the builder derives from byte footprints (SPEC §14,
§17): exactly those a dependence between queues needs, none that an earlier
wait implies, a nop where an instruction needs two queues, waits within a DMA
queue only across DMA engines; and random programs run with the race check
(no race) and give a sequential run's memory."""

import random

import numpy as np
import pytest

import tpbsim
from conftest import drop_wait
from tpbsim.program import Builder, operands as op, regions as R


def dma(b, queue, rows, row_bytes, src, dst):
    reads, writes = R.dma_regions(rows, row_bytes, src, dst)
    ep = [op.sbuf_ep(e[1], e[2]) if e[0] == "sbuf" else op.hbm(e[1], e[2]) for e in (src, dst)]
    return b.add(queue, "dma_copy", op.dma_fields(rows, row_bytes, *ep), reads, writes)


def tcopy(b, parts, n, src_off, dst_off, queue="dve"):
    """tensor_copy of n FP32 per partition, SBUF to SBUF, partitions 0..parts-1."""
    fields = (f"channels={parts} in_dtype=fp32 out_dtype=fp32 "
              f"src={op.t3d(op.sbuf(0, src_off), [1, 0, 0], [n, 1, 1])} "
              f"dst={op.t3d(op.sbuf(0, dst_off), [1, 0, 0], [n, 1, 1])}")
    return b.add(queue, "tensor_copy", fields,
                 [R.region(R.SBUF, 0, parts, src_off, src_off + 4 * n)],
                 [R.region(R.SBUF, 0, parts, dst_off, dst_off + 4 * n)])


def waits(b):
    return {i: (q, pos) for i, q, pos in b.waits()}


def test_a_read_after_a_write_on_another_queue_waits_for_exactly_it():
    b = Builder("mariana")
    dma(b, "dma0", 128, 256, ("hbm", 0, 256), ("sbuf", 0, 0))
    dma(b, "dma1", 128, 256, ("hbm", 0x8000, 256), ("sbuf", 0, 0x400))   # unrelated
    i = tcopy(b, 128, 64, 0, 0x800)
    assert waits(b) == {i: ("dma0", 0)}
    text = b.text()
    assert "update=inc(sem5)" in text                       # dma0 counts (sem = its place)
    assert "wait=ge(sem5, 1)" in text
    assert "sem6" not in text                               # nothing waits for dma1
    assert tpbsim.check(text) == []


def test_a_wait_implied_by_an_earlier_one_is_left_out():
    b = Builder("mariana")
    dma(b, "dma0", 128, 256, ("hbm", 0, 256), ("sbuf", 0, 0))           # A
    tcopy(b, 128, 64, 0, 0x800)                                          # B reads A (waits dma0)
    # C on the PE... reads B's output and A's input region: waiting for the DVE
    # implies dma0 (B waited for it).
    c = b.add("pe", "nop", "", [R.region(R.SBUF, 0, 128, 0x800, 0x900),
                                R.region(R.SBUF, 0, 128, 0, 0x100)], [])
    assert waits(b)[c] == ("dve", 0)
    assert b.nops == 0
    assert b.deps(c) == {"dve": 1, "dma0": 1}


def test_an_instruction_that_needs_two_queues_gets_a_nop_before_it():
    b = Builder("mariana")
    dma(b, "dma0", 128, 256, ("hbm", 0, 256), ("sbuf", 0, 0))
    dma(b, "dma1", 128, 256, ("hbm", 0x8000, 256), ("sbuf", 0, 0x400))
    fields = (f"channels=128 in_dtype=fp32 out_dtype=fp32 "
              f"src={op.t3d(op.sbuf(0, 0), [1, 0, 0], [512, 1, 1])} "
              f"dst={op.t3d(op.sbuf(0, 0x1000), [1, 0, 0], [512, 1, 1])}")
    i = b.add("dve", "tensor_copy", fields, [R.region(R.SBUF, 0, 128, 0, 0x800)],
              [R.region(R.SBUF, 0, 128, 0x1000, 0x1800)])
    assert b.nops == 1
    nop = b.instrs[i - 1]
    assert nop.mnemonic == "nop" and b.queues[nop.queue] == "dve"
    assert {waits(b)[i - 1][0], waits(b)[i][0]} == {"dma0", "dma1"}
    assert tpbsim.check(b.text()) == []


def test_program_order_orders_one_compute_queue():
    b = Builder("mariana")
    tcopy(b, 128, 64, 0, 0x400)
    tcopy(b, 128, 64, 0x400, 0x800)        # reads what the first wrote: the interlock
    tcopy(b, 128, 64, 0x800, 0)            # writes what the first read
    assert waits(b) == {}


def test_a_dma_queue_waits_on_itself_only_across_dma_engines():
    # SPEC §14's example: a queue's store from partitions 0..7 and its later
    # load of the same HBM bytes into partitions 64..71 move through different
    # DMA engines (0 and 8): a race without a wait.
    b = Builder("mariana")
    dma(b, "dma3", 8, 512, ("sbuf", 0, 0), ("hbm", 0x10000, 512))
    j = dma(b, "dma3", 8, 512, ("hbm", 0x10000, 512), ("sbuf", 64, 0))
    assert waits(b) == {j: ("dma3", 0)}
    # Through the same engine (partitions 0..7 both ways): queue order suffices.
    b = Builder("mariana")
    dma(b, "dma3", 8, 512, ("sbuf", 0, 0), ("hbm", 0x10000, 512))
    dma(b, "dma3", 8, 512, ("hbm", 0x10000, 512), ("sbuf", 0, 0x1000))
    assert waits(b) == {}


def test_only_the_instructions_waited_for_count_and_counts_are_per_queue():
    b = Builder("mariana")
    for k in range(5):
        dma(b, "dma0", 1, 64, ("hbm", 64 * k, 64), ("sbuf", 0, 64 * k))
    i = tcopy(b, 1, 16, 3 * 64, 0x800)      # reads the 4th load only
    text = b.text()
    assert waits(b)[i] == ("dma0", 3)
    assert text.count("update=inc(sem5)") == 1
    assert "wait=ge(sem5, 1)" in text       # the 4th load is the first that counts


def test_regions_overlap_as_their_bytes_do():
    rnd = random.Random(1)

    def bytes_of(r):
        return {(p, r[3] + j * r[5] + k) for p in range(r[1], r[2]) for j in range(r[6])
                for k in range(r[4] - r[3])}

    for _ in range(3000):
        def one():
            lo, w = rnd.randrange(0, 120), rnd.randrange(1, 12)
            p0 = rnd.randrange(0, 4)
            return R.region(R.HBM, p0, p0 + rnd.randrange(1, 3), lo, lo + w,
                            rnd.choice([0, w, rnd.randrange(1, 30)]), rnd.randrange(1, 6))
        a, c = one(), one()
        assert R.overlaps(a, c) == bool(bytes_of(a) & bytes_of(c)), (a, c)
        assert not R.covers(a, c) or bytes_of(c) <= bytes_of(a), (a, c)


# ------------------------------------------------------------------ random programs

SB_SLOTS, HBM_SLOTS, SLOT = 6, 6, 1024      # bytes per partition (SBUF) / rows (HBM)


def random_program(rnd, steps, kinds=("load", "store", "copy", "sbuf2sbuf"), hoist=False):
    """Random copies between SBUF slots (partition ranges x 1 KiB) and HBM
    slots (rows of 1 KiB) on random queues; also the sequential result, by
    NumPy: (builder, sbuf [128][SB_SLOTS * SLOT], hbm bytes). ``hoist``: the
    builder's placement of a second wait on an earlier instruction (on 4 DMA
    queues: a queue's previous instruction is a recent one)."""
    b = Builder("mariana", hoist=hoist)
    sbuf = np.zeros((128, SB_SLOTS * SLOT), dtype=np.uint8)
    hbm = np.frombuffer(rnd.randbytes(HBM_SLOTS * 128 * SLOT), dtype=np.uint8).copy()
    init = hbm.copy()
    for _ in range(steps):
        kind = rnd.choice(kinds)
        p0 = rnd.choice([0, 8, 32, 64, 96])
        rows = rnd.choice([8, 16, 32])
        n = rnd.choice([64, 256, 1024])
        s_slot, d_slot = rnd.randrange(SB_SLOTS), rnd.randrange(SB_SLOTS)
        h_off = rnd.randrange(HBM_SLOTS) * 128 * SLOT + rnd.randrange(0, 96) * SLOT
        q = f"dma{rnd.randrange(4 if hoist else 16)}"
        if kind == "load":
            dma(b, q, rows, n, ("hbm", h_off, SLOT), ("sbuf", p0, d_slot * SLOT))
            for r in range(rows):
                sbuf[p0 + r, d_slot * SLOT:d_slot * SLOT + n] = \
                    hbm[h_off + r * SLOT:h_off + r * SLOT + n]
        elif kind == "store":
            dma(b, q, rows, n, ("sbuf", p0, s_slot * SLOT), ("hbm", h_off, SLOT))
            for r in range(rows):
                hbm[h_off + r * SLOT:h_off + r * SLOT + n] = \
                    sbuf[p0 + r, s_slot * SLOT:s_slot * SLOT + n]
        elif kind == "sbuf2sbuf":
            p1 = rnd.choice([0, 8, 32, 64, 96])
            dma(b, q, rows, n, ("sbuf", p0, s_slot * SLOT), ("sbuf", p1, d_slot * SLOT))
            src = sbuf[p0:p0 + rows, s_slot * SLOT:s_slot * SLOT + n].copy()
            sbuf[p1:p1 + rows, d_slot * SLOT:d_slot * SLOT + n] = src
        elif s_slot != d_slot:
            tcopy(b, rows, n // 4, s_slot * SLOT, d_slot * SLOT)
            sbuf[0:rows, d_slot * SLOT:d_slot * SLOT + n] = \
                sbuf[0:rows, s_slot * SLOT:s_slot * SLOT + n]
    return b, sbuf, hbm, init


@pytest.mark.parametrize("hoist", [False, True])
@pytest.mark.parametrize("seed", range(6))
def test_random_programs_have_no_race_and_the_sequential_result(seed, hoist):
    rnd = random.Random(seed)
    b, sbuf, hbm, init = random_program(rnd, 60, hoist=hoist)
    text = b.text()
    with tpbsim.Core("mariana") as core:
        core.write("sbuf", 0, 0, np.zeros((128, SB_SLOTS * SLOT), dtype=np.uint8))
        core.write("hbm", 0, 0, init)
        r = core.run(text, racecheck=True)
        assert r.races == [], r.races[0]["message"]
        assert np.array_equal(core.read("sbuf", 0, 0, (128, SB_SLOTS * SLOT), "u8"), sbuf)
        assert np.array_equal(core.read("hbm", 0, 0, hbm.size, "u8"), hbm)


@pytest.mark.parametrize("hoist", [False, True])
def test_every_wait_of_a_random_program_is_needed(hoist):
    """Leaving out any one wait (of instructions, nops included) makes a race:
    the builder makes no wait the program could do without, with its second
    waits on nops or on earlier instructions. (SBUF -> SBUF copies left out:
    the builder orders them by their source's DMA engine, SPEC §10's split; a
    model that orders them on every partition they touch needs fewer waits.)"""
    # Seed 22 with hoist: three second waits on earlier instructions, four nops.
    b, _, _, init = random_program(random.Random(22 if hoist else 11), 30,
                                   ("load", "store", "copy"), hoist)
    text = b.text().splitlines()
    lines = [k for k, line in enumerate(text) if " wait=" in line]
    assert lines
    with tpbsim.Core("mariana") as core:
        for k in lines:
            core.write("hbm", 0, 0, init)
            r = core.run("\n".join(drop_wait(text, k)) + "\n", racecheck=True)
            assert r.races, f"line {k} ({text[k]}) waits for nothing needed"


def test_the_index_finds_every_live_access_that_meets_a_new_one():
    """Tracker's search (by span, or by phase in a stride's group, rows that
    wrap past the stride included) against brute force over random regions."""
    rnd = random.Random(5)
    for trial in range(40):
        ix = R._Index()
        recs = []
        for n in range(60):
            stride = rnd.choice([0, 0, 64, 96, 100])
            lo = rnd.randrange(0, 2000)
            w = rnd.randrange(1, (stride or 80) + 1)
            reg = R.region(R.HBM, 0, 1, lo, lo + w, stride, rnd.randrange(1, 9) if stride else 1)
            lo_, hi_ = R.span(reg)
            width = reg[4] - reg[3]
            key = ((reg[5], max(0, (width - 1).bit_length()), reg[3] % reg[5], n)
                   if reg[6] > 1 and width <= reg[5] else
                   (0, max(0, (hi_ - lo_ - 1).bit_length()), lo_, n))
            rec = R.Record(n, 0, True, reg, key, lo_, hi_)
            ix.insert(rec)
            recs.append(rec)
            if recs and rnd.random() < 0.2:
                gone = recs.pop(rnd.randrange(len(recs)))
                ix.remove(gone)
        for q in range(30):
            stride = rnd.choice([0, 64, 96, 100, 128])
            lo = rnd.randrange(0, 2100)
            w = rnd.randrange(1, (stride or 300) + 1)
            query = R.region(R.HBM, 0, 1, lo, lo + w, stride, rnd.randrange(1, 9) if stride else 1)
            got = {r.key[3] for r in ix.meeting(*R.span(query), query)}
            want = {r.key[3] for r in recs if R.overlaps(r.region, query)}
            assert want <= got, (trial, query, want - got)
            assert len(got) == len(ix.meeting(*R.span(query), query))   # each once
