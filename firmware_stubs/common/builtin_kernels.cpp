#include "firmware_stubs/builtin_kernels.h"

#include "firmware_stubs/act/activation.h"
#include "firmware_stubs/common/nop.h"
#include "firmware_stubs/dve/quantize_mx.h"
#include "firmware_stubs/dve/tensor_copy.h"
#include "firmware_stubs/dve/vector_ops.h"
#include "firmware_stubs/pe/matmul.h"
#include "firmware_stubs/pool/iota.h"
#include "firmware_stubs/pool/tensor_dequantize.h"
#include "firmware_stubs/sfu/tquant.h"

namespace tpb::fw {

const KernelRegistry& builtin_kernels() {
  static const KernelRegistry reg = [] {
    KernelRegistry r;
    add_tensor_dequantize_kernels(r);
    add_quantize_mx_kernels(r);
    add_tensor_copy_kernels(r);
    add_tquant_kernels(r);
    add_pe_matmul_kernels(r);
    add_vector_op_kernels(r);
    add_activation_kernels(r);
    add_iota_kernels(r);
    add_nop_kernels(r);
    return r;
  }();
  return reg;
}

}  // namespace tpb::fw
