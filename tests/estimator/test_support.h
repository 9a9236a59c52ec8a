// Shared helpers for the estimator tests: jobs built from flag-like values, targets by name.
#pragma once

#include <string>

#include "estimator/estimate.h"
#include "estimator/hardware.h"
#include "estimator/job.h"

namespace preflight::estimator::testing {

inline const Source kFlag = Source::flag("--test");

inline JobSpec training_job(const std::string& model, int batch, int seq, Precision precision) {
  JobSpec j;
  j.model.set(model, kFlag);
  j.batch_size.set(batch, kFlag);
  j.seq_len.set(seq, kFlag);
  j.precision.set(precision, kFlag);
  return j;
}

// Generation (inference with a KV cache) of `batch` sequences over `context` tokens.
inline JobSpec generation_job(const std::string& model, int batch, int context, Precision precision) {
  JobSpec j;
  j.model.set(model, kFlag);
  j.generation.set(true, kFlag);
  j.inference_only.set(true, kFlag);
  j.batch_size.set(batch, kFlag);
  j.max_context.set(context, kFlag);
  j.precision.set(precision, kFlag);
  return j;
}

inline Target target(const std::string& name) {
  std::string error;
  auto t = resolve_target(builtin_catalog(), name, std::nullopt, error);
  return t ? *t : Target{};
}

constexpr double kGiB = 1073741824.0;

}  // namespace preflight::estimator::testing
