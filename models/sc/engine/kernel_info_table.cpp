#include "models/sc/engine/kernel_info_table.h"

#include <string>

namespace tpb::sc {

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
  // The first matching record of each opcode, for lookup() (first_ starts
  // all kNone).
  for (std::size_t i = records_.size(); i-- > 0;)
    if (records_[i].func_va != 0) first_[records_[i].opcode] = static_cast<std::uint32_t>(i);
}

std::optional<KernelInfoRecord> KernelInfoTable::lookup(std::uint8_t opcode) const {
  const std::uint32_t i = first_[opcode];
  if (i == kNone) return std::nullopt;
  return records_[i];
}

std::vector<std::uint8_t> KernelInfoTable::bytes() const {
  std::vector<std::uint8_t> out;
  for (const KernelInfoRecord& r : records_)
    isa::append_kernel_info_record(out, r.spec, r.opcode, r.func_va);
  return out;
}

std::vector<std::uint8_t> pool_kernel_info_bytes(isa::Arch arch) {
  return isa::default_kernel_info_bytes(isa::Queue::Pool, arch);
}

std::vector<std::uint8_t> dve_kernel_info_bytes(isa::Arch arch) {
  return isa::default_kernel_info_bytes(isa::Queue::Dve, arch);
}

std::vector<std::uint8_t> pe_kernel_info_bytes(isa::Arch arch) {
  return isa::default_kernel_info_bytes(isa::Queue::Pe, arch);
}

KernelInfoTable default_kernel_info(isa::Queue e, isa::Arch arch) {
  return KernelInfoTable(isa::default_kernel_info_bytes(e, arch));
}

}  // namespace tpb::sc
