# POOL TensorDequantize and DVE QuantizeMX ordered only by semaphores (SPEC §2
# EVENTS, §3, §4), MARIANA. Each consumer reads what its producer wrote:
#   POOL 0: FP4 E2M1 codes at 0x0 -> E5M2 bytes at 0x1000, then sem1 += 1.
#   DVE 0:  waits sem1 >= 1; the 0x1000 bytes read as FP16 elements -> MXFP8
#           E4M3 x4 words at 0x2000, scales of block rows 0..3 at partitions
#           0..3, offset 0x3000; then sem2 += 1.
#   POOL 1: waits sem2 >= 1; the 0x2000 words read as FP4 codes -> 0x4000.
# Run: tpbsim run quantize_mx_pool_dve_semaphores.tpb --load sbuf:0:0=A.npy
#      (A: 32 x 16 uint32) --retire retire.txt  (order: pool 0, dve 0, pool 1)
.arch mariana

.engine pool
tensor_dequantize fmt=e2m1_to_e5m2 group=0 channels=32 \
    src=t3d(sbuf(0, 0x0), step=[1, 0, 0], num=[16, 1, 1]) \
    dst=t3d(sbuf(0, 0x1000), step=[1, 0, 0], num=[32, 1, 1]) \
    update=inc(sem1)
tensor_dequantize fmt=e2m1_to_e5m2 group=0 channels=32 \
    src=t3d(sbuf(0, 0x2000), step=[1, 0, 0], num=[16, 1, 1]) \
    dst=t3d(sbuf(0, 0x4000), step=[1, 0, 0], num=[32, 1, 1]) \
    wait=ge(sem2, 1)

.engine dve
quantize_mx channels=32 in_dtype=fp16 out_dtype=fp8_e4m3 \
    src=t3d(sbuf(0, 0x1000), step=[1, 0, 0], num=[64, 1, 1]) \
    dst=mx1d(data=sbuf(0, 0x2000), scale=sbuf(0, 0x3000), num=16, step=1, scale_pidx=0) \
    wait=ge(sem1, 1) update=inc(sem2)
