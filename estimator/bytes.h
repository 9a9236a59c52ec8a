// Byte counts from the cost model's doubles. A double past int64 converted to int64 is
// undefined (x86 gives INT64_MIN): a run past any hardware (a script's `batch_size = 10**9`,
// eager attention over millions of tokens) came out negative and "fit". Every byte count is
// clamped to [0, kMaxTermBytes] instead, so it reads as what it is, far past any GPU, and
// the sums of a phase's terms stay inside int64.
#pragma once

#include <cmath>
#include <cstdint>

namespace preflight::estimator {

inline constexpr int64_t kMaxTermBytes = int64_t(1) << 56;  // 64 PiB

inline int64_t saturated_bytes(double bytes) {
  if (!(bytes > 0)) return 0;  // NaN too
  if (bytes >= double(kMaxTermBytes)) return kMaxTermBytes;
  return static_cast<int64_t>(bytes);
}

}  // namespace preflight::estimator
