// What would make a run fit (estimator.md §10.6): every single change with the bytes it saves
// (the difference of two full estimates) and its new verdict, an exhaustive search over
// small combinations from distinct groups ranked by fits -> disruption -> savings (always
// including the cheapest fitting combination and the largest single saving), and the
// inverse questions: the largest micro-batch and the longest context that fit.
//
// Changes respect the hardware: multi-device strategies (FSDP / ZeRO-3, tensor parallel)
// are offered only over the devices the target actually has, never to a single card.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "estimator/estimate.h"
#include "estimator/job.h"

namespace preflight::estimator {

struct Remediation {
  std::string label;                 // "gradient checkpointing + 8-bit AdamW (bitsandbytes)"
  std::vector<std::string> changes;  // one entry per change
  int64_t saved = 0;                 // baseline total - new total
  int64_t new_total = 0;
  int64_t new_low = 0;
  int64_t new_high = 0;
  Band new_band = Band::Unknown;
  bool fits = false;        // new interval high < usable
  int disruption = 0;       // the worst change: 0 = same computation ... 3 = a different method
  int disruption_sum = 0;   // all changes together (ranks equally-disruptive combinations)
  std::string note;         // what it costs
  bool cheapest_fitting = false;
  bool largest_single = false;
};

struct InverseAnswers {
  std::optional<int> largest_batch;         // largest micro-batch that fits (nullopt: even 1 does not)
  std::optional<int64_t> longest_context;   // longest sequence / context that fits
  std::string context_field;                // "seq_len" or "max_context"
};

struct RemediationPlan {
  std::vector<Remediation> singles;   // every applicable single change that saves bytes
  std::vector<Remediation> ranked;    // singles + combinations, ranked, cut to `limit`
  std::optional<Remediation> cheapest_fitting;
  std::optional<Remediation> largest_single;
  std::optional<Remediation> restore_margin;  // TIGHT runs: the cheapest change that makes it FITS
  InverseAnswers inverse;
  int evaluations = 0;  // cost-model evaluations spent
};

struct RemediationOptions {
  std::size_t limit = 8;
  int max_changes = 4;
  bool allow_more_devices = false;  // offer sharding beyond the target's device count
};

/// Plans remediations for `baseline` (an estimate of `job` on `target`). Runs for failing
/// and TIGHT bands; the inverse questions are answered for every training / generation run.
RemediationPlan plan_remediations(const JobSpec& job, const Estimate& baseline, const Target& target,
                                  const RemediationOptions& options = {}, const Catalog& catalog = builtin_catalog());

}  // namespace preflight::estimator
