// Compat mode: torch-preflight 0.4's cost model (estimator.md Part I), reproduced to the byte
// for its worked examples (§9), with its interval (+-10/20/35 % by confidence), its usable
// capacity (the `anchor` of gpus.json), its bands and its greedy remediation solver (§7).
// Used for `preflight estimate --compat`, and by the default report to say where and why
// preflight's figure differs from the reference's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "estimator/estimate.h"
#include "estimator/remediation.h"

namespace preflight::estimator {

struct CompatEstimate {
  bool known = false;
  std::string unknown_reason;
  std::string model_id;
  int64_t params = 0;
  std::vector<Term> breakdown;  // the nine reference terms, in its order (zeros included)
  int64_t total = 0;
  int64_t low = 0;
  int64_t high = 0;
  double spread = 0.0;
  bool activations_known = true;
  int64_t usable_bytes = 0;  // the reference's capacity (0: no target)
  Band band = Band::Unknown;
  double utilization = 0.0;
  std::vector<std::string> notes;
  std::vector<Remediation> remediations;  // §7: failing bands only, limit 6

  int64_t term_bytes(std::string_view key) const;
};

CompatEstimate compat_estimate(const JobSpec& job, const std::optional<Target>& target,
                               const Catalog& catalog = builtin_catalog(), std::size_t remediation_limit = 6);

/// One line per term where the two models differ materially, saying why (for the default
/// report's "differs from the reference" section).
struct CompatDifference {
  std::string term;
  int64_t reference_bytes = 0;
  int64_t preflight_bytes = 0;
  std::string why;
};
std::vector<CompatDifference> compat_differences(const Estimate& ours, const CompatEstimate& reference);

}  // namespace preflight::estimator
