# TensorDequantize (POOL, opcode 0x7b), fp6 e2m3 -> fp8 e4m3, group_size 0.
# 3 source words hold 16 six-bit codes -> 4 dst words (4:3, SPEC §3).
# 32 partitions (0..31); per partition 24 packed UINT32 words at offset 0x0
# expand into 32 UINT32 words (= 128 FP8 bytes) at offset 0x1000.
.arch cayman
.engine pool
tensor_dequantize fmt=e2m3_to_e4m3 group=0 channels=32 \
    src=t3d(sbuf(0, 0x0), step=[1, 0, 0], num=[24, 1, 1]) \
    dst=t3d(sbuf(0, 0x1000), step=[1, 0, 0], num=[32, 1, 1])
