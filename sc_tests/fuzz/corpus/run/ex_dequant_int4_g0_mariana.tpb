# TensorDequantize (POOL, opcode 0x7b), int4 -> fp8 e5m2, group_size 0.
# 1 source word holds 8 four-bit codes -> 2 dst words (2:1, SPEC §3).
# 32 partitions (0..31); per partition 16 packed UINT32 words at offset 0x0
# expand into 32 UINT32 words (= 128 FP8 bytes) at offset 0x1000.
.arch mariana
.engine pool
tensor_dequantize fmt=int4_to_e5m2 group=0 channels=32 \
    src=t3d(sbuf(0, 0x0), step=[1, 0, 0], num=[16, 1, 1]) \
    dst=t3d(sbuf(0, 0x1000), step=[1, 0, 0], num=[32, 1, 1])
