// The cost terms. Each is one small function with its formula and the provenance of its
// constants (measured / fitted / published / derived / assumed) next to it in terms.cpp;
// each returns a Term carrying its bytes, its relative uncertainty and that provenance, so
// the interval and the report are built from the same objects.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "estimator/activations.h"
#include "estimator/hardware.h"
#include "estimator/profile.h"
#include "estimator/run.h"

namespace preflight::estimator {

enum class Provenance { Measured, Fitted, Published, Derived, Assumed, Unknown };
std::string_view provenance_name(Provenance p);

struct Term {
  std::string key;    // JSON key: weights, gradients, optimizer_state, ..., KV_cache, CUDA_context
  std::string label;  // report label
  int64_t bytes = 0;
  double uncertainty = 0.0;  // relative half-width (about 90 %)
  Provenance provenance = Provenance::Derived;
  std::string basis;  // one line: formula and source
};

Term weights_term(const ModelProfile& p, const Run& r);
/// Gradients alive in the phase: `all` (optimizer step, accumulation) or the persistent part.
Term gradients_term(const ModelProfile& p, const Run& r, bool all);
Term optimizer_state_term(const ModelProfile& p, const Run& r);
Term master_weights_term(const Run& r);
Term optimizer_step_term(const ModelProfile& p, const Run& r);
Term autocast_cache_term(const ModelProfile& p, const Run& r);
Term ddp_buckets_term(const Run& r);
Term zero_buckets_term(const ModelProfile& p, const Run& r);
Term gathered_params_term(const ModelProfile& p, const Run& r, bool backward);
Term dequantization_term(const ModelProfile& p, const Run& r);
Term kv_cache_term(const ModelProfile& p, const Run& r, int64_t sequences, int64_t context);
// `stated`: --cuda-context, which wins over the card's measured context and the default.
Term cuda_context_term(const Target* target, std::optional<int64_t> stated = std::nullopt);
/// Allocator overhead of a phase peak (the `fragmentation` key), applied to `allocated`.
Term allocator_term(int64_t allocated);

/// The fitted allocator factor (reserved / allocated at the peak), exposed for the bench.
double allocator_factor();
/// The default CUDA context when no per-card value exists (assumed; shown as such).
int64_t default_cuda_context_bytes();

}  // namespace preflight::estimator
