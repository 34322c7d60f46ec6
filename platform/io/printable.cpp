#include "platform/io/printable.h"

#include <cstdio>

namespace tpb::io {

bool has_control_chars(std::string_view s) {
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7f) return true;
  }
  return false;
}

std::string printable(std::string_view s, std::size_t max_bytes) {
  std::string out;
  std::size_t i = 0;
  for (; i < s.size() && out.size() < max_bytes; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case 0x1b:
        out += "\\e";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char buf[5];
          std::snprintf(buf, sizeof buf, "\\x%02x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  if (i < s.size()) {
    // Not in the middle of a UTF-8 character.
    while (!out.empty() && (static_cast<unsigned char>(out.back()) & 0xC0) == 0x80) out.pop_back();
    if (!out.empty() && (static_cast<unsigned char>(out.back()) & 0xC0) == 0xC0) out.pop_back();
    out += "... (" + std::to_string(s.size()) + " bytes)";
  }
  return out;
}

}  // namespace tpb::io
