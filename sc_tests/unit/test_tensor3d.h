// TENSOR3D operands for the tests (seed 000 §2.1: start_addr, step_elem[3],
// num_elem[3], dimension 0 innermost).
#pragma once

#include <cstdint>

#include "models/isa/encodings.h"

namespace tpb::testref {

// (step, count) per dimension, inner first; the outer two default to one pass.
inline isa::Tensor3D t3(std::uint32_t start, std::int16_t s0, std::uint16_t n0, std::int16_t s1 = 0,
                        std::uint16_t n1 = 1, std::int16_t s2 = 0, std::uint16_t n2 = 1) {
  isa::Tensor3D t{};
  t.start_addr.raw = start;
  t.step_elem[0] = s0, t.step_elem[1] = s1, t.step_elem[2] = s2;
  t.num_elem[0] = n0, t.num_elem[1] = n1, t.num_elem[2] = n2;
  return t;
}

// The three steps, then the three counts (the struct's own field order).
inline isa::Tensor3D t3d(std::uint32_t start, std::int16_t s0, std::int16_t s1, std::int16_t s2,
                         std::uint16_t n0, std::uint16_t n1, std::uint16_t n2) {
  return t3(start, s0, n0, s1, n1, s2, n2);
}

}  // namespace tpb::testref
