# Engine registers (SPEC §2): the dequant's source address rides POOL register
# r5 (ADDR_REG marker), set from the program file. MARIANA.
.arch mariana
.reg pool r5 = 0x00000100     # sbuf(0, 0x100)
.engine pool
tensor_dequantize fmt=int4_to_e5m2 channels=16 \
    src=t3d(reg(r5), step=[1, 0, 0], num=[8, 1, 1]) \
    dst=t3d(sbuf(0, 0x2000), step=[1, 0, 0], num=[16, 1, 1]) \
    debug_cmd=1 debug_hint=42   # trace marker 42
