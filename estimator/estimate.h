// The estimator's API: estimate(job, target) -> breakdown, peak phase, interval, band.
// This is what `preflight estimate`, the hover and the code lens call; it is pure (no I/O,
// no globals beyond the immutable built-in catalogue) and never throws.
//
// The peak is the maximum over phases (estimator.md §10.3), not a sum of everything:
//   training:   "loss backward" (every activation saved, the loss's gradient buffers),
//               "layer backward" (the top block's backward working set), "optimizer step"
//               (gradients + state + step temporaries, activations freed);
//   inference:  "forward";
//   generation: "prefill" (the prompt through the model) and "decode" (one token per
//               sequence against the full KV cache).
// Every phase total gets the allocator overhead and the CUDA context. The interval combines
// per-term uncertainty (parameter-proportional terms move together, the rest independently)
// with the spread over the alternatives of fields that were defaulted, not stated.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "estimator/catalog.h"
#include "estimator/hardware.h"
#include "estimator/job.h"
#include "estimator/profile.h"
#include "estimator/run.h"
#include "estimator/terms.h"

namespace preflight::estimator {

// MayNotFit: the known terms fit below the capacity but a term is unknown (activations of
// a model given only by its parameter count, ...): the real peak is higher by an amount
// nobody measured, so the verdict is never a plain fit.
enum class Band { Fits, Tight, MayNotFit, LikelyOom, CertainOom, Unknown };
std::string_view band_name(Band b);   // FITS | TIGHT | MAY_NOT_FIT | LIKELY_OOM | CERTAIN_OOM | UNKNOWN
std::string_view band_label(Band b);  // "fits with margin" | "may not fit: ..." | ...
bool band_is_failure(Band b);

struct Phase {
  std::string name;
  std::vector<Term> terms;  // allocated terms of the phase (context and allocator excluded)
  int64_t allocated = 0;
};

/// A defaulted field and how far its plausible alternatives move the total.
struct Widening {
  std::string field;
  std::string alternative;
  int64_t total = 0;
};

struct Estimate {
  bool known = false;
  std::string unknown_reason;
  ModelProfile model;
  Run run;
  std::vector<Phase> phases;
  std::size_t peak_phase = 0;
  std::vector<Term> breakdown;  // the peak phase's terms, then CUDA context and allocator
  int64_t total = 0;
  int64_t low = 0;
  int64_t high = 0;
  bool activations_known = true;
  std::vector<std::string> unknown_terms;  // terms charged as 0 because nothing determines them
  std::optional<Target> target;
  Band band = Band::Unknown;
  double utilization = 0.0;  // total / usable
  std::vector<Widening> widenings;
  std::vector<std::string> notes;

  const Phase* peak() const { return phases.empty() ? nullptr : &phases[peak_phase]; }
  int64_t term_bytes(std::string_view key) const;
};

struct EstimateOptions {
  bool widen_for_defaults = true;  // evaluate alternatives of defaulted fields
};

/// The full estimate. `target` may be empty (band UNKNOWN, everything else computed).
Estimate estimate(const JobSpec& job, const std::optional<Target>& target, const Catalog& catalog = builtin_catalog(),
                  const EstimateOptions& options = {});

/// Band of an interval against usable bytes (estimator.md §6.3; an interval that straddles
/// the capacity is never FITS). With an unknown term, a total below the capacity is
/// MAY_NOT_FIT: the interval's top is a stand-in, not a bound.
Band band_for(int64_t low, int64_t total, int64_t high, int64_t usable, bool terms_known = true);

}  // namespace preflight::estimator
