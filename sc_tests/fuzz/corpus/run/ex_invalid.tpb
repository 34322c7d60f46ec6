# Invalid instructions for `tpbsim check` (MARIANA unless noted). Each comment
# names the predicate(s) the instruction fails; the words still assemble, as
# every field can be written.
.arch mariana
.engine pool

# group_size 4: has_valid_group_size; no ratio exists for group 4 either:
# s3d3_tens_dequant_element_count_check_t3d
tensor_dequantize fmt=e2m1_to_e5m2 group=4 channels=32 \
    src=t3d(sbuf(0, 0x0), num=[16, 1, 1]) dst=t3d(sbuf(0, 0x1000), num=[32, 1, 1])

# FP6 can never be MX (seed 000 §5): has_valid_dequant_fmt_group_size, and so no
# ratio applies: s3d3_tens_dequant_element_count_check_t3d
tensor_dequantize fmt=e2m3_to_e4m3 group=8 channels=32 \
    src=t3d(sbuf(0, 0x0), num=[20, 1, 1]) dst=t3d(sbuf(0, 0x1000), num=[32, 1, 1])

# in_dtype must be the UINT32 transport: has_valid_tens_dequant_in_dtype
tensor_dequantize fmt=int4_to_e5m2 channels=32 in_dtype=fp32 \
    src=t3d(sbuf(0, 0x0), num=[16, 1, 1]) dst=t3d(sbuf(0, 0x1000), num=[32, 1, 1])

# a nonzero reserved byte: s3d3_tens_dequant_reserved_zero
tensor_dequantize fmt=nf4_to_e4m3 channels=32 reserved1=[0, 0, 1, 0, 0, 0, 0] \
    src=t3d(sbuf(0, 0x0), num=[16, 1, 1]) dst=t3d(sbuf(0, 0x1000), num=[32, 1, 1])

# 2:1 ratio broken (16 source words need 32 dst words):
# s3d3_tens_dequant_element_count_check_t3d
tensor_dequantize fmt=e2m1_to_e5m2 channels=32 \
    src=t3d(sbuf(0, 0x0), num=[16, 1, 1]) dst=t3d(sbuf(0, 0x1000), num=[30, 1, 1])

# zero active channels: check_active_channels
tensor_dequantize fmt=e2m1_to_e5m2 channels=0 \
    src=t3d(sbuf(0, 0x0), num=[16, 1, 1]) dst=t3d(sbuf(0, 0x1000), num=[32, 1, 1])

# an unknown opcode (0x55) as a raw word: has_known_opcode
.raw 55 10 00 00 00 00 00 00 00 00 00 00 00 00 00 00 \
     00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 \
     00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 \
     00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00

.engine dve
# 48 channels is not a whole number of quadrants: s3dmx1_quant_valid_active_channels
quantize_mx channels=48 out_dtype=fp8_e4m3 \
    src=t3d(sbuf(0, 0x0), num=[64, 1, 1]) \
    dst=mx1d(data=sbuf(0, 0x1000), scale=sbuf(0, 0x2000), num=16)

# MXFP4 output is not allowed (seed 003 §2.5: the out_dtype gate passes
# AllowFP4::False): is_valid_dtype_inc_fp4
quantize_mx channels=32 out_dtype=fp4_e2m1 \
    src=t3d(sbuf(0, 0x0), num=[64, 1, 1]) \
    dst=mx1d(data=sbuf(0, 0x1000), scale=sbuf(0, 0x2000), num=16)

.engine pe
# 64 active rows with the 128-row group mask: valid_row_grp_active_rows
ldweights_mx in_dtype=fp8_e4m3 rows=64 cols=32 row_grp=0xf \
    src=mx1d(data=sbuf(0, 0x0), scale=sbuf(0, 0x4000), num=32)
