#include "estimator/calibration.h"

#include <cmath>

namespace preflight::estimator {
namespace {

constexpr double kGiB = 1073741824.0;

int64_t gib(double value) { return static_cast<int64_t>(std::llround(value * kGiB)); }

}  // namespace

const std::vector<CalibrationPoint>& calibration_points() {
  // Bytes where the spec prints them exactly (§9.1, §9.4); otherwise its GiB to 3 decimals.
  static const std::vector<CalibrationPoint> kPoints = {
      {"gpt2", 4, 128, 3184394240, "estimator.md 9.1"},
      {"gpt2", 8, 256, gib(5.806), "estimator.md 9.5"},
      {"distilbert-base-uncased", 4, 128, gib(1.530), "estimator.md 9.5"},
      {"distilbert-base-uncased", 8, 256, gib(1.952), "estimator.md 9.5"},
      {"bert-base-uncased", 4, 128, gib(2.444), "estimator.md 9.5"},
      {"bert-base-uncased", 8, 256, gib(3.384), "estimator.md 9.5"},
      {"resnet50", 16, 224, gib(1.245), "estimator.md 9.5"},
      {"resnet50", 32, 224, 2142109696, "estimator.md 9.4"},
  };
  return kPoints;
}

JobSpec calibration_job(const CalibrationPoint& point, Attention attention) {
  const Source harness{SourceKind::CommandLine, "measure_cuda.py", {}, {}};
  JobSpec job;
  job.model.set(std::string(point.model), harness);
  job.batch_size.set(point.batch, harness);
  const bool cnn = point.model.starts_with("resnet");
  if (cnn) job.image_size.set(point.seq_or_image, harness);
  else job.seq_len.set(point.seq_or_image, harness);
  job.precision.set(Precision::AmpFp16, harness);
  job.optimizer.set(Optimizer::AdamW, harness);
  job.optimizer_impl.set(OptimizerImpl::Foreach, harness);
  job.grads_set_to_none.set(true, harness);
  job.attention.set(attention, harness);
  if (point.model == "gpt2") job.head.set(Head::CausalLm, harness);
  else if (!cnn) job.head.set(Head::None, harness);
  // BertModel's pooler is computed but the harness's loss never reaches it: no gradient,
  // so no optimizer state (torch skips parameters whose .grad is None).
  if (point.model == "bert-base-uncased") job.frozen_fraction.set(590592.0 / 109482240.0, harness);
  return job;
}

std::string calibration_config(const CalibrationPoint& point) {
  const bool cnn = point.model.starts_with("resnet");
  return "b" + std::to_string(point.batch) + (cnn ? " " : " s") + std::to_string(point.seq_or_image) +
         (cnn ? "px" : "") + " amp-fp16 adamw";
}

}  // namespace preflight::estimator
