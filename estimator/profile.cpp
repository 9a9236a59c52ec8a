#include "estimator/profile.h"

namespace preflight::estimator {

std::string_view confidence_name(Confidence c) {
  switch (c) {
    case Confidence::High: return "HIGH";
    case Confidence::Medium: return "MEDIUM";
    case Confidence::Low: return "LOW";
    case Confidence::Unknown: break;
  }
  return "UNKNOWN";
}

ModelProfile resolve_model(const JobSpec& job, const Catalog& catalog) {
  ModelProfile p;
  p.reference = job.model.value;
  const Architecture* arch = job.model.value.empty() ? nullptr : catalog.find_architecture(job.model.value);
  if (arch) {
    p.known = true;
    p.arch = arch;
    p.id = arch->id;
    p.layout = transformer_layout(*arch);
    p.params = arch->params;
    if (arch->params_trainable) p.frozen_table_params = arch->params - *arch->params_trainable;
    p.confidence = Confidence::High;
    p.params_source = "catalogue (published count)";
  }
  if (job.params.value) {
    p.known = true;
    p.params = *job.params.value;
    p.confidence = Confidence::Medium;
    const std::string given = job.params.source.kind == SourceKind::Script ? job.params.source.detail : "--params";
    p.params_source = given + " (no architecture shape" + std::string(arch ? "; the catalogue shape is kept)" : ")");
    if (!arch) p.id = job.model.value.empty() ? "custom" : job.model.value;
    // A count that disagrees with the named architecture makes its layout meaningless.
    if (arch && (p.params < arch->params * 0.99 || p.params > arch->params * 1.01)) {
      p.layout.reset();
      p.arch = nullptr;
      p.params_source = "--params (differs from the catalogue's " + arch->id + "; its shape is not used)";
    }
  }
  if (!p.known && job.model.value.empty()) p.reason = "no model: give --model NAME (see the catalogue) or --params COUNT";
  if (!p.known && !job.model.value.empty()) {
    p.suggestions = catalog.closest_architectures(job.model.value);
    std::string nearest;
    for (const std::string& id : p.suggestions) nearest += (nearest.empty() ? "" : ", ") + id;
    p.reason = "'" + job.model.value + "' is not in the built-in catalogue (did you mean: " + nearest +
               "?); give --params COUNT to estimate it (activations then stay unknown)";
  }
  return p;
}

}  // namespace preflight::estimator
