#include "server/cli/time_budget.h"

#include <utility>

namespace preflight::server {

std::string describe_budget(std::chrono::milliseconds budget) {
  if (budget.count() % 1000 == 0) return std::to_string(budget.count() / 1000) + " s";
  return std::to_string(budget.count()) + " ms";
}

analysis::Interrupt interrupt_after(std::chrono::milliseconds budget, std::function<bool()> cancelled) {
  std::function<bool()> out_of_time;
  if (budget.count() > 0) {
    auto deadline = std::chrono::steady_clock::now() + budget;
    out_of_time = [deadline] { return std::chrono::steady_clock::now() >= deadline; };
  }
  return analysis::Interrupt(std::move(out_of_time), describe_budget(budget), std::move(cancelled));
}

rules::CheckResult check_within(std::string_view text, const rules::CheckOptions& options,
                                std::chrono::milliseconds budget) {
  analysis::Interrupt interrupt = interrupt_after(budget);
  return rules::check_source_interruptible(text, options, &interrupt);
}

}  // namespace preflight::server
