// The C boundary of libtpbsim_dpi: the calling thread's last error message,
// and the wrapper that turns every exception into a status code (no
// exception, abort or exit ever reaches the simulator that called).
#pragma once

#include <exception>
#include <string>
#include <utility>

#include "platform/dpi/tpbsim_dpi.h"

namespace tpb::dpi {

// The calling thread's message of its last call ("" when that call succeeded).
std::string& last_error();

// Sets the message; returns TPB_DPI_EARG (for `return fail(...)`).
inline int fail(std::string msg) {
  last_error() = std::move(msg);
  return TPB_DPI_EARG;
}

// Runs `f` (returning an int status): clears the message first, turns any
// exception into TPB_DPI_EINTERNAL with its message.
template <class F>
int guarded(F&& f) noexcept {
  try {
    last_error().clear();
    return f();
  } catch (const std::exception& e) {
    try {
      last_error() = e.what();
    } catch (...) {
    }
    return TPB_DPI_EINTERNAL;
  } catch (...) {
    try {
      last_error() = "unknown exception in the model";
    } catch (...) {
    }
    return TPB_DPI_EINTERNAL;
  }
}

}  // namespace tpb::dpi
