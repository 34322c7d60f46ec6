# Two engines synchronised by semaphores (SPEC §2 EVENTS), MARIANA.
# The DVE quantizes the moving tensor and increments sem0 when it retires; the
# PE loads its weights meanwhile, then its matmul waits for sem0 >= 1 before
# reading what the DVE wrote, and sets sem1 = 1 when done.
.arch mariana

.engine dve
# 128 partitions x 256 FP32 -> 64 x4 words of MXFP8 E4M3 per partition at 0x8000,
# scales from partition 0 (block rows 0..15 -> partitions 0..3, 32..35, 64..67, 96..99).
quantize_mx channels=128 in_dtype=fp32 out_dtype=fp8_e4m3 \
    src=t3d(sbuf(0, 0x10000), step=[1, 0, 0], num=[256, 1, 1]) \
    dst=mx1d(data=sbuf(0, 0x8000), scale=sbuf(0, 0xc000), num=64, step=1) \
    update=inc(sem0)

.engine pe
ldweights_mx in_dtype=fp8_e4m3 rows=128 cols=32 \
    src=mx1d(data=sbuf(0, 0x0), scale=sbuf(0, 0x4000), num=32, step=1)
matmul_mx in_dtype=fp8_e4m3 rows=128 \
    src=mx1d(data=sbuf(0, 0x8000), scale=sbuf(0, 0xc000), num=64, step=1) \
    dst=t3d(psum(0, 0x0), step=[1, 0, 0], num=[64, 1, 1]) \
    wait=ge(sem0, 1) update=set(sem1, 1)
