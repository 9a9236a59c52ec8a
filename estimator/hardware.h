// Target hardware: a GPU id or alias, a cloud instance, an `8xa100-80gb` / `a100-80gb x8` /
// `8*a100-80gb` multi-device form, or an explicit capacity. Usable memory per device comes
// from gpus.json `usable_bytes` (driver-reported or runtime-visible total, estimator.md
// §10.4); the CUDA context is a separate cost term and is never subtracted here. Boards with
// two devices (MI250, MI250X) count as two devices of their per-device capacity.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "estimator/catalog.h"

namespace preflight::estimator {

struct Target {
  std::string query;         // as the user wrote it
  std::string display_name;  // "NVIDIA A100 80GB" or "custom 48.00 GiB"
  std::string gpu_id;        // catalogue id, or "custom"
  const Gpu* gpu = nullptr;  // null for a custom capacity
  int64_t usable_bytes = 0;  // per device, before the CUDA context
  std::string usable_basis;
  int device_count = 1;      // devices the target provides (default world size)
  std::string count_basis;   // why: "instance p4de.24xlarge: 8 GPUs", "8x prefix", "2 devices per board"
  std::optional<std::string> instance;  // the instance id when one was named
  bool bf16 = true;
  bool fp8 = false;
  bool consumer = false;  // consumer / workstation card (one-box hardware)
  std::optional<int64_t> measured_context_bytes;  // per-card measured CUDA context
  // The reference tool's view (compat mode): its usable bytes and its device count (1).
  int64_t reference_usable_bytes = 0;
};

/// Resolves `name` (may be empty when only a capacity is given) and an optional explicit
/// capacity (`--gpu-memory`, which replaces the per-device capacity of a named GPU). Returns
/// nullopt with `error` set for an unknown name; never guesses.
std::optional<Target> resolve_target(const Catalog& catalog, std::string_view name,
                                     std::optional<int64_t> explicit_capacity, std::string& error);

/// The largest capacity `--gpu-memory` takes: 8 PiB (8192TiB).
inline constexpr int64_t kMaxMemoryBytes = int64_t(1) << 53;

/// `48GiB`, `24gb` and `24g` (read as GiB), `2TiB`, `40960MiB`, `512m`, bare bytes.
/// nullopt unless the size is from 1 byte to kMaxMemoryBytes (NaN, negatives, "0.0001").
std::optional<int64_t> parse_memory(std::string_view text);

/// The reference tool's usable capacity for a catalogue GPU (anchor when stored, else its
/// formula: total MiB x (1 - 2.5 % HBM / 2 % other) - 400 MiB display reserve on consumer cards).
int64_t reference_usable_bytes(const Gpu& gpu);

}  // namespace preflight::estimator
