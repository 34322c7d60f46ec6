# MX matmul on the PE of MAVERICK (v5): LDWEIGHTS 0x01 / MATMUL 0x02 in MX mode,
# selected by the MXTENSOR_V2 marker on the operand's data address, which the
# mx(...) form sets (seed 003 §3.3). Quad-row pumping changes timing only.
# Stationary: 32 columns x 1 row-tile of MXFP8 E4M3 at offset 0x0, scales at
# 0x4000. Moving: 64 columns at 0x8000, scales at 0xc000. FP32 result in PSUM.
.arch maverick
.engine pe
ldweights in_dtype=fp8_e4m3 rows=128 cols=32 perf=quad_row \
    src=mx(data=sbuf(0, 0x0), scale=sbuf(0, 0x4000), num=[32, 1], step_data=32, \
           step_scale=32, p=0, f=0, scale_dtype=e8m0)
matmul in_dtype=fp8_e4m3 out_dtype=fp32 rows=128 perf=quad_row \
    src=mx(data=sbuf(0, 0x8000), scale=sbuf(0, 0xc000), num=[64, 1], step_data=64, \
           step_scale=64, p=0, f=0, scale_dtype=e8m0) \
    dst=t3d(psum(0, 0x0), step=[1, 0, 0], num=[64, 1, 1])
