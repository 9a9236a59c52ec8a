#include "analysis/findings.h"

namespace preflight::analysis {

std::string_view severity_name(Severity s) {
  switch (s) {
    case Severity::Note: return "note";
    case Severity::Warning: return "warning";
    case Severity::Error: return "error";
  }
  return "error";
}

std::string_view category_name(Category c) {
  switch (c) {
    case Category::CriticalOom: return "CRITICAL_OOM";
    case Category::ConvergenceBug: return "CONVERGENCE_BUG";
    case Category::PerformanceWarn: return "PERFORMANCE_WARN";
  }
  return "CRITICAL_OOM";
}

std::string_view fix_safety_name(FixSafety s) {
  switch (s) {
    case FixSafety::Safe: return "safe";
    case FixSafety::Unsafe: return "unsafe";
    case FixSafety::DisplayOnly: return "display-only";
  }
  return "safe";
}

const Fix* Finding::safe_fix() const {
  for (const Fix& f : fixes)
    if (f.safety == FixSafety::Safe) return &f;
  return nullptr;
}

}  // namespace preflight::analysis
