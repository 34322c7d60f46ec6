"""Access-pattern costs applied by the sequencer to every kernel's accesses
(TIMING.md [A, O]; docs/CONVENTIONS.md "access patterns"): a wide innermost
stride and a register-addressed operand cost the GpSimd's dequant what they
cost the Vector engine's copy (the DVE's figures are the validation points
of docs/TIMING.md), with no line of the dequant kernel saying so; the
profile's knobs turn them off."""

import pytest

import tpbsim

DEQUANT = ("tensor_dequantize fmt=e2m1_to_e5m2 group=0 channels=128 "
           "src=t3d({src}, step=[{step}, 0, 0], num=[{n}, 1, 1]) "
           "dst=t3d(sbuf(0, {dst:#x}), step=[1, 0, 0], num=[{out}, 1, 1])\n")


def interval_cycles(core, text, engine="pool", mhz=1200):
    """Mean engine cycles between the retires of the last instructions."""
    r = core.run(text)
    ends = [x.end_ps for x in r.retires if x.engine == engine][2:]
    return (ends[-1] - ends[0]) / (len(ends) - 1) * mhz / 1e6


def dequants(n, step, src="sbuf(0, 0x0)", reg=""):
    return ".arch mariana\n" + reg + ".engine pool\n" + "".join(
        DEQUANT.format(src=src, step=step, n=n, out=2 * n, dst=0x20000 + (i % 4) * 8 * n)
        for i in range(12))


def test_a_wide_source_stride_slows_the_gpsimd_dequant(make_core):
    # GpSimd: 150 + max(words read, written) = 150 + 1024 cycles a dequant of
    # 512 source words [A, E]; their reads 32 bytes apart take the read
    # interface twice the loop's 1024 cycles [A] (but for the first two words
    # of each partition, which make the stride).
    core = make_core("mariana")
    flat = interval_cycles(core, dequants(512, 1))
    wide = interval_cycles(make_core("mariana"), dequants(512, 8))
    assert flat == pytest.approx(150 + 1024, abs=4)
    assert wide == pytest.approx(150 + 1024 + 1024 * 510 / 512, abs=4)
    # 16 bytes apart is still the peak [A].
    assert interval_cycles(make_core("mariana"), dequants(512, 4)) == pytest.approx(flat, abs=1)
    # The knob: off.
    off = make_core("mariana", timing={"wide_stride_cost_percent.pool": 0})
    assert interval_cycles(off, dequants(512, 8)) == pytest.approx(flat, abs=1)


def test_a_register_addressed_source_holds_the_gpsimd_for_min_ii_dynamic(make_core):
    # [O]: max(MIN_II_DYNAMIC, N), MIN_II_DYNAMIC about 600: a dequant of 64
    # words (150 + 128 cycles) from a register's address issues every 600.
    reg = ".reg pool r3 = 0x0\n"
    core = make_core("mariana")
    assert interval_cycles(core, dequants(64, 1)) == pytest.approx(150 + 128, abs=4)
    dyn = interval_cycles(make_core("mariana"), dequants(64, 1, "reg(r3)", reg))
    assert dyn == pytest.approx(600, abs=1)
    # Longer than the floor: its own cost.
    long = interval_cycles(make_core("mariana"), dequants(1024, 1, "reg(r3)", reg))
    assert long == pytest.approx(150 + 2048, abs=4)
    off = make_core("mariana", timing={"min_ii_dynamic_cycles.pool": 0})
    assert interval_cycles(off, dequants(64, 1, "reg(r3)", reg)) == pytest.approx(150 + 128, abs=4)
