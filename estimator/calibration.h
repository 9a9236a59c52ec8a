// The measured peaks the cost model is checked against: the reference tool's eight T4 runs
// (estimator.md §9.1, §9.4, §9.5), measured by torch-preflight's
// tests/calibration/measure_cuda.py as max_memory_reserved of a steady-state step (after a
// warm-up step) plus the 135 MiB CUDA context. Each run's configuration is what that
// harness does: AutoModelForCausalLM with labels for GPT-2, AutoModel with
// last_hidden_state.float().pow(2).mean() for the encoders (BERT's pooler gets no
// gradient), torchvision ResNet-50 with cross-entropy; torch.autocast fp16 (the T4 has no
// bf16); torch AdamW (foreach) with zero_grad(set_to_none=True).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "estimator/job.h"

namespace preflight::estimator {

struct CalibrationPoint {
  std::string_view model;
  int batch = 0;
  int seq_or_image = 0;  // tokens for transformers, pixels for the CNN
  int64_t measured_bytes = 0;
  std::string_view source;  // where the figure is published
};

/// The eight points, in the order of estimator.md §9.5.
const std::vector<CalibrationPoint>& calibration_points();

/// The job spec of a calibration run (every field stated, so nothing widens the interval).
/// `attention` is the harness's attention implementation; see the bench for why eager.
JobSpec calibration_job(const CalibrationPoint& point, Attention attention);

/// Human-readable configuration of a point ("b4 s128 amp-fp16 adamw").
std::string calibration_config(const CalibrationPoint& point);

}  // namespace preflight::estimator
