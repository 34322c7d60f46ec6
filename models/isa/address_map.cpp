// Engine names of one core (SPEC §9: `.engine pool|dve|pe|sfu`): parsing
// against the one table, kEngineNames (address_map.h).
#include "models/isa/address_map.h"

#include <cctype>
#include <string>

namespace tpb::isa {

std::optional<Engine> parse_engine(const char* s) {
  if (s == nullptr) return std::nullopt;
  std::string lower;
  for (const char* p = s; *p != '\0'; ++p)
    lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(*p))));
  for (unsigned k = 0; k < kNumEngines; ++k) {
    const auto e = static_cast<Engine>(k);
    if (lower == engine_name(e)) return e;
  }
  return std::nullopt;
}

}  // namespace tpb::isa
