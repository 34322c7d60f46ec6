# TQUANT block statements over lines and continuations, with events
.arch V4
BSTART.SFU TQUANT, fp32
B.DATR S8, \
    rtz, Sat=1, CMode=0
B.DIM LB0=16, \
  LB1=2; B.IOR r1, r2
B.IOT T1, mask=0x0f, <last>, ->T0<1>
BSTOP wait=ge(sem3, 7) update=set(sem4, 7)
bstart.sfu tquant, 3; b.datr 9, RMode=7; b.ios x; b.iot T1, T2, mask=1, ->T0<1>, ->T5<3>; bstop update=inc(sem1)
