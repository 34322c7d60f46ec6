# SPEC §18 instructions not in the softmax / layernorm seeds (cayman)
.arch cayman
.engine pe
ldweights in_dtype=fp8_e4m3_legacy rows=64 cols=32 src=t3d(sbuf(0, 0x0), num=[32, 1, 1])
matmul in_dtype=fp8_e4m3_legacy rows=64 acc=1 src=t3d(sbuf(0, 0x100), num=[16, 1, 1]) dst=t3d(psum(0, 0x0), num=[16, 1, 1])
ldweights in_dtype=bf16 rows=32 cols=32 src=t3d(sbuf(0, 0x200), num=[32, 1, 1])
matmul in_dtype=bf16 rows=32 transpose=1 out_dtype=bf16 src=t3d(sbuf(0, 0x300), num=[32, 1, 1]) dst=t3d(psum(0, 0x100), num=[32, 1, 1])
.engine pool
iota offset=-5 channel_multiplier=3 step=[1, 8, 0] num=[8, 2, 1] channels=16 out_dtype=int32 dst=t3d(sbuf(0, 0x1000), num=[16, 1, 1])
memset value=0x3f80 channels=16 out_dtype=bf16 dst=t3d(sbuf(0, 0x1100), num=[16, 1, 1])
.engine dve
tensor_tensor_scan op0=multiply op1=add reverse1=1 initial=0.5 channels=8 out_dtype=fp32 src=t3d(sbuf(0, 0x0), num=[16, 1, 1]) src1=t3d(sbuf(0, 0x40), step=[0, 0, 0]) dst=t3d(sbuf(0, 0x80), num=[16, 1, 1])
nc_transpose channels=8 in_dtype=bf16 out_dtype=bf16 src=t3d(sbuf(0, 0x0), num=[4, 1, 1]) dst=t3d(sbuf(8, 0x0), num=[8, 1, 1])
tensor_reduce op=add axes=2 negate=1 keepdims=1 channels=8 in_dtype=bf16 out_dtype=fp32 src=t3d(sbuf(0, 0x0), step=[1, 4, 0], num=[4, 4, 1]) dst=t3d(sbuf(0, 0x200), num=[1, 1, 1])
.engine act
tensor_copy channels=4 in_dtype=fp16 out_dtype=fp8_e5m2 src=t3d(sbuf(0, 0x0), num=[8, 1, 1]) dst=t3d(sbuf(0, 0x300), num=[8, 1, 1])
tensor_scalar op0=multiply operand0=sbuf(0, 0x400) op1=add operand1=-2.5 channels=4 out_dtype=fp32 src=t3d(sbuf(0, 0x0), num=[8, 1, 1]) dst=t3d(sbuf(0, 0x500), num=[8, 1, 1])
activation func=gelu_apprx_tanh scale=0.5 channels=4 in_dtype=bf16 out_dtype=bf16 src=t3d(sbuf(0, 0x0), num=[8, 1, 1]) dst=t3d(sbuf(0, 0x600), num=[8, 1, 1]) reduce_op=max reduce_cmd=reset_reduce reduce_dtype=fp32 reduce_res=sbuf(0, 0x700)
