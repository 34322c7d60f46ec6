# SFU TQUANT (seed 002): quantize the 8 x 24 FP32 tile T1 (physical Col 32,
# loaded with --load tile:1:32=input.npy) twice, with non-default multipliers
# and zero points. Expected outputs: gen_expected.py (exact fractions).
.arch mariana
.reg sfu r1 = 0x3ebd70a4    # multiplier 0.37 (FP32 bits)
.reg sfu r2 = -7            # zero point -7 (S8, sign-extended)
.reg sfu r3 = 0x40200000    # multiplier 2.5
.reg sfu r4 = 200           # zero point 200 (U8)

# T0 = S8, round to nearest even, saturating: the seed's one-line form.
BSTART.SFU TQUANT, FP32; B.DATR S8, RNE, Sat=1; B.DIM LB0=24; B.DIM LB1=8; B.DIM LB2=32; B.IOR r1, r2; B.IOT T1, mask=1111, <last>, ->T0<1>; BSTOP

# T2 = U8, round half away from zero, modulo 256: one statement per line.
BSTART.SFU TQUANT, FP32
  B.DATR U8, RMM, Sat=0
  B.DIM LB0=24
  B.DIM LB1=8
  B.DIM LB2=32
  B.IOR r3, r4
  B.IOT T1, mask=1111, <last>, ->T2<1>
BSTOP
