#include "models/sc/engine/kernel_info_table.h"

#include <string>

namespace tpb::sc {

namespace {

void put_record(std::vector<std::uint8_t>& out, std::uint8_t spec, std::uint8_t opcode,
                std::uint32_t va) {
  const std::uint8_t rec[KernelInfoTable::kRecordBytes] = {0,
                                                           0,
                                                           spec,
                                                           opcode,
                                                           static_cast<std::uint8_t>(va),
                                                           static_cast<std::uint8_t>(va >> 8),
                                                           static_cast<std::uint8_t>(va >> 16),
                                                           static_cast<std::uint8_t>(va >> 24)};
  out.insert(out.end(), rec, rec + KernelInfoTable::kRecordBytes);
}

}  // namespace

KernelInfoTable::KernelInfoTable(const std::vector<std::uint8_t>& bytes) {
  if (bytes.size() % kRecordBytes != 0)
    throw std::invalid_argument("kernel_info table: " + std::to_string(bytes.size()) +
                                " bytes is not a whole number of 8-byte records");
  for (std::size_t i = 0; i < bytes.size() / kRecordBytes; ++i) {
    const std::uint8_t* r = bytes.data() + i * kRecordBytes;
    KernelInfoRecord rec;
    rec.index = static_cast<unsigned>(i);
    rec.spec = r[2];
    rec.opcode = r[3];
    rec.func_va = std::uint32_t{r[4]} | std::uint32_t{r[5]} << 8 | std::uint32_t{r[6]} << 16 |
                  std::uint32_t{r[7]} << 24;
    records_.push_back(rec);
  }
}

std::optional<KernelInfoRecord> KernelInfoTable::lookup(std::uint8_t opcode) const {
  for (const KernelInfoRecord& r : records_)
    if (r.func_va != 0 && r.opcode == opcode) return r;
  return std::nullopt;
}

std::vector<std::uint8_t> KernelInfoTable::bytes() const {
  std::vector<std::uint8_t> out;
  for (const KernelInfoRecord& r : records_) put_record(out, r.spec, r.opcode, r.func_va);
  return out;
}

std::vector<std::uint8_t> pool_kernel_info_bytes() {
  std::vector<std::uint8_t> out;
  for (int i = 0; i < 14; ++i) put_record(out, 0, 0, 0);  // idx0..13: not recovered
  put_record(out, 0, static_cast<std::uint8_t>(isa::Opcode::GetSequenceBounds),
             kva::kPoolGetSequenceBounds);
  put_record(out, 0, static_cast<std::uint8_t>(isa::Opcode::NonzeroWithCount),
             kva::kPoolNonzeroWithCount);
  put_record(out, 0, static_cast<std::uint8_t>(isa::Opcode::TensorDequantize),
             kva::kPoolTensorDequantize);
  return out;
}

std::vector<std::uint8_t> dve_kernel_info_bytes() {
  std::vector<std::uint8_t> out;
  put_record(out, 0, static_cast<std::uint8_t>(isa::Opcode::QuantizeMX), kva::kDveQuantizeMx);
  return out;
}

std::vector<std::uint8_t> pe_kernel_info_bytes(isa::Arch arch) {
  std::vector<std::uint8_t> out;
  if (arch == isa::Arch::Maverick) {
    put_record(out, 0, static_cast<std::uint8_t>(isa::Opcode::Ldweights), kva::kPeLdweightsMx);
    put_record(out, 0, static_cast<std::uint8_t>(isa::Opcode::Matmul), kva::kPeMatmulMx);
  } else {
    put_record(out, 0, static_cast<std::uint8_t>(isa::Opcode::LdweightsMX), kva::kPeLdweightsMx);
    put_record(out, 0, static_cast<std::uint8_t>(isa::Opcode::MatmulMX), kva::kPeMatmulMx);
  }
  return out;
}

KernelInfoTable default_kernel_info(isa::Engine e, isa::Arch arch) {
  switch (e) {
    case isa::Engine::Pool:
      return KernelInfoTable(pool_kernel_info_bytes());
    case isa::Engine::Dve:
      return KernelInfoTable(dve_kernel_info_bytes());
    case isa::Engine::Pe:
      return KernelInfoTable(pe_kernel_info_bytes(arch));
    case isa::Engine::Sfu:
      break;
  }
  return KernelInfoTable();
}

}  // namespace tpb::sc
