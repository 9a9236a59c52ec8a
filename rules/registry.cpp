// THE rule table: one entry per rule, ordered by code. Adding a rule means adding its file
// and one line here; nothing registers itself.
#include "rules/registry.h"

#include <array>

#include "rules/explanations.h"
#include "rules/rule.h"

namespace preflight::rules {
namespace {

using analysis::Category;
using analysis::Severity;

constexpr std::array<RuleMeta, 13> kRules = {{
    {"TG001", "graph-retention", Severity::Error, Category::CriticalOom,
     "tensor kept with its autograd graph attached", kExplainTG001, FixPolicy::SafeWhenProven, &make_tg001},
    {"TG002", "missing-no-grad", Severity::Error, Category::CriticalOom,
     "evaluation runs the model with autograd on", kExplainTG002, FixPolicy::SafeWhenProven, &make_tg002},
    {"TG003", "missing-zero-grad", Severity::Error, Category::ConvergenceBug,
     "backward in a loop without zero_grad", kExplainTG003, FixPolicy::None, &make_tg003},
    {"TG004", "dataloader-starvation", Severity::Note, Category::PerformanceWarn,
     "DataLoader settings that leave a CUDA device waiting", kExplainTG004, FixPolicy::UnsafeOnly, &make_tg004},
    {"TG005", "softmax-before-cross-entropy", Severity::Error, Category::ConvergenceBug,
     "softmax before a loss that wants logits", kExplainTG005, FixPolicy::Safe, &make_tg005},
    {"TG006", "bce-activation-mismatch", Severity::Error, Category::ConvergenceBug,
     "binary cross-entropy with the wrong activation", kExplainTG006, FixPolicy::Safe, &make_tg006},
    {"TG007", "device-sync-in-inner-loop", Severity::Warning, Category::PerformanceWarn,
     "GPU sync in a loop nested in the training step", kExplainTG007, FixPolicy::None, &make_tg007},
    {"TG008", "unseeded-run", Severity::Warning, Category::ConvergenceBug,
     "training randomness not (fully) seeded", kExplainTG008, FixPolicy::None, &make_tg008},
    {"TG010", "projected-oom", Severity::Error, Category::CriticalOom,
     "projected peak memory exceeds the target GPU", kExplainTG010, FixPolicy::None, &make_tg010},
    {"TG011", "stuck-in-eval-mode", Severity::Error, Category::ConvergenceBug,
     "eval() in the epoch loop with no matching train()", kExplainTG011, FixPolicy::None, &make_tg011},
    {"TG012", "missing-distributed-sampler", Severity::Error, Category::ConvergenceBug,
     "DataLoader under DDP without a DistributedSampler", kExplainTG012, FixPolicy::None, &make_tg012},
    {"TG013", "redundant-device-transfer", Severity::Warning, Category::PerformanceWarn,
     "the same host-to-device copy every iteration", kExplainTG013, FixPolicy::None, &make_tg013},
    {"TG014", "unscaled-gradient-accumulation", Severity::Error, Category::ConvergenceBug,
     "gradient accumulation without dividing the loss", kExplainTG014, FixPolicy::UnsafeOnly, &make_tg014},
}};

}  // namespace

std::span<const RuleMeta> all_rules() { return kRules; }

const RuleMeta* find_rule(std::string_view code) {
  for (const RuleMeta& r : kRules)
    if (r.code == code) return &r;
  return nullptr;
}

}  // namespace preflight::rules
