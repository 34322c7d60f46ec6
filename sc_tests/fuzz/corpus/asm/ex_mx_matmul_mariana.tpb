# MX matmul on the PE of MARIANA (v4): LdweightsMX 0x09 then MatmulMX 0x0A (SPEC §5).
# Stationary: K = 128 rows (partitions) x M = 32 columns of MXFP8 E4M3 x4 words
# at offset 0x0, E8M0 scales at 0x4000. Moving: 128 rows x N = 64 columns at
# 0x8000, scales at 0xc000. PSUM[m][n] (FP32) is overwritten (acc=0).
.arch mariana
.engine pe
ldweights_mx in_dtype=fp8_e4m3 rows=128 cols=32 row_grp=0xf col_grp=0xf \
    src=mx1d(data=sbuf(0, 0x0), scale=sbuf(0, 0x4000), num=32, step=1)
matmul_mx in_dtype=fp8_e4m3 out_dtype=fp32 rows=128 acc=0 \
    src=mx1d(data=sbuf(0, 0x8000), scale=sbuf(0, 0xc000), num=64, step=1) \
    dst=t3d(psum(0, 0x0), step=[1, 0, 0], num=[64, 1, 1])
