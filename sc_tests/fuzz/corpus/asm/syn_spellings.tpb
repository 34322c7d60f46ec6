# dtype, arch and engine spellings: syntax names, seed names, aliases, any case
.arch v5
.engine PE
matmul in_dtype=fp8_exp4 out_dtype=F32 rows=128 perf=QUAD_ROW src=mx(data=sbuf(0, 0x0), scale=sbuf(0, 0x4000), num=[32, 1], scale_dtype=sfp8_e8) dst=t3d(psum(0, 0x0), num=[64, 1, 1])
ldweights in_dtype=E4M3 rows=64 cols=32 src=mx(data=sbuf(0, 0x0), scale=sbuf(0, 0x4000), scale_dtype=fp8_e8m0)
.engine Pool
tensor_dequantize fmt=NF4_TO_E4M3 group=8 channels=32 in_dtype=u32 out_dtype=i32 src=t3d(sbuf(0, 0x0), num=[20, 1, 1]) dst=t3d(sbuf(0, 0x1000), num=[32, 1, 1]) wait=eq(sem1, 2) update=dec(sem1)
