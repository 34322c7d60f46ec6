// Whether this build runs under AddressSanitizer (make asan): for code that
// sizes its work or picks its storage by it. In the lowest layer, so that
// every layer and test may ask.
#pragma once

#if defined(__SANITIZE_ADDRESS__)  // GCC
#define TPB_ADDRESS_SANITIZER 1
#elif defined(__has_feature)  // clang
#if __has_feature(address_sanitizer)
#define TPB_ADDRESS_SANITIZER 1
#endif
#endif
#ifndef TPB_ADDRESS_SANITIZER
#define TPB_ADDRESS_SANITIZER 0
#endif

namespace tpb {
inline constexpr bool kAddressSanitizer = TPB_ADDRESS_SANITIZER != 0;
}  // namespace tpb
