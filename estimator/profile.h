// Model resolution (estimator.md §5, Part II): a catalogue reference or an explicit
// parameter count becomes a profile (counts, layout, shape, confidence). An unresolved model
// is UNKNOWN with the reason; a parameter count is never invented.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "estimator/catalog.h"
#include "estimator/job.h"
#include "estimator/layout.h"

namespace preflight::estimator {

enum class Confidence { High, Medium, Low, Unknown };
std::string_view confidence_name(Confidence c);

struct ModelProfile {
  bool known = false;
  std::string reason;          // why unknown
  std::vector<std::string> suggestions;  // a name the catalogue lacks: its nearest ids
  std::string id;              // catalogue id or "custom"
  std::string reference;       // what the user / script named
  const Architecture* arch = nullptr;
  std::optional<ModelLayout> layout;  // transformer layouts (per-module counts)
  int64_t params = 0;                 // every parameter, tied matrices once
  int64_t frozen_table_params = 0;    // never trained (Whisper's sinusoidal encoder positions)
  Confidence confidence = Confidence::Unknown;
  std::string params_source;

  bool has_shape() const { return arch && arch->shape.has_value(); }
  bool is_cnn() const { return arch && arch->cnn.has_value(); }
  const Shape* shape() const { return has_shape() ? &*arch->shape : nullptr; }
};

/// `--params` wins over the catalogue's count (with the catalogue's shape kept when the
/// model is also named); a catalogue miss with no count is UNKNOWN.
ModelProfile resolve_model(const JobSpec& job, const Catalog& catalog);

}  // namespace preflight::estimator
