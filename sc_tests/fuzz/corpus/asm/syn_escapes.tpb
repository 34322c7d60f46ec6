# a C1 control character  in a comment, and one in a token
.arch mariana
.engine pool
.reg pool r1 = 0x10
tensor_dequantize fmt=e2m1_to_e5m2 channels=32 src=t3d(sbuf(0, 0x0)) dst=t3d(sbuf(0, 0x1000)) xy=1
