# QuantizeMX (DVE, opcode 0xe3) on MARIANA: FP32 -> MXFP8 E4M3 (SPEC §4).
# 32 partitions x 64 FP32 elements at offset 0x0. Blocks are 8 partitions x 4
# elements; each partition's 64 elements pack into 16 x4 words (u32, element 4j
# in byte 0) at offset 0x1000. The E8M0 scales of block row b land in partition
# 0 + 32*(b/4) + scale_pidx + b%4 (partitions 0..3 here), byte j, from offset
# 0x2000: data and scales in the same quadrant (seed 003 §5).
.arch mariana
.engine dve
quantize_mx channels=32 in_dtype=fp32 out_dtype=fp8_e4m3 \
    src=t3d(sbuf(0, 0x0), step=[1, 0, 0], num=[64, 1, 1]) \
    dst=mx1d(data=sbuf(0, 0x1000), scale=sbuf(0, 0x2000), num=16, step=1, scale_pidx=0)
