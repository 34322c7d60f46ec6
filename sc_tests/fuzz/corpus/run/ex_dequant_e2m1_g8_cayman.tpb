# TensorDequantize (POOL, opcode 0x7b), fp4 e2m1 -> fp8 e5m2, group_size 8 (MX, in-band E8M0 scales).
# 5 source words (4 E8M0 scales + 32 codes) -> 8 dst words (8:5, SPEC §3).
# 32 partitions (0..31); per partition 20 packed UINT32 words at offset 0x0
# expand into 32 UINT32 words (= 128 FP8 bytes) at offset 0x1000.
.arch cayman
.engine pool
tensor_dequantize fmt=e2m1_to_e5m2 group=8 channels=32 \
    src=t3d(sbuf(0, 0x0), step=[1, 0, 0], num=[20, 1, 1]) \
    dst=t3d(sbuf(0, 0x1000), step=[1, 0, 0], num=[32, 1, 1])
