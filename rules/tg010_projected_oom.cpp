// TG010 projected-oom: the job the script describes needs more GPU memory than the configured
// target has, even at the optimistic end of the estimate's interval — the run would die of
// an out-of-memory error after it has been queued, scheduled and paid for.
//
// Evidence chain: the target (`target_gpu` / `--target-gpu`, resolved to a GPU, instance or
// count spec) -> the job's entry point (estimator/script_reader.h) -> the model, read from the
// string-literal reference of a `from_pretrained(...)` call (through constants and argparse
// defaults) -> every other field the script states, each at the line it was read -> the
// projected peak and its interval from the cost model -> the low end above usable memory.
// Quiet: no target, an unresolvable target (the CLI reports that as a configuration error),
// an unknown estimate (a model not in the bundled catalogue, a name computed at run time), a
// model that is not a `from_pretrained` literal (rules.md TG010-N06: `check` uses only the
// literal-name layer), or an interval that reaches below the card (LIKELY_OOM is not proof).
// Once per file: the first job, in source order, that cannot fit.
#include <string>

#include "estimator/hardware.h"
#include "estimator/report.h"
#include "estimator/script_reader.h"
#include "rules/rule.h"

namespace preflight::rules {
namespace {

using namespace preflight::analysis;
namespace est = preflight::estimator;

bool model_from_pretrained(const est::JobSpec& spec) {
  return spec.model.source.kind == est::SourceKind::Script && spec.model.source.detail.rfind("from_pretrained=", 0) == 0;
}

std::string percent(double v) { return std::to_string(static_cast<long long>(v * 100 + 0.5)) + "%"; }

std::string shape_of(const est::EstimateReport& r) {
  const est::Run& run = r.estimate.run;
  std::string s = "batch " + std::to_string(r.job.batch_size.value);
  if (run.generation) s += ", context " + std::to_string(run.context);
  else if (run.seq > 0) s += ", seq " + std::to_string(run.seq);
  return s;
}

struct Checker final : RuleCheck {
  const RuleContext& ctx;
  explicit Checker(const RuleContext& c) : ctx(c) {}

  void finish(std::vector<Finding>& out) override {
    if (ctx.target_gpu.empty()) return;
    std::string error;
    std::optional<est::Target> target = est::resolve_target(est::builtin_catalog(), ctx.target_gpu, std::nullopt, error);
    if (!target) return;
    for (const est::ScriptJob& job : est::read_jobs(ctx.model)) {
      if (!model_from_pretrained(job.spec)) continue;
      est::EstimateReport report = est::build_report(job.spec, target, /*compat_mode=*/false);
      if (!report.estimate.known || report.estimate.band != est::Band::CertainOom) continue;
      out.push_back(finding(job, report, *target));
      return;
    }
  }

  Finding finding(const est::ScriptJob& job, const est::EstimateReport& r, const est::Target& target) const {
    const est::Estimate& e = r.estimate;
    Finding f;
    f.code = "TG010";
    f.severity = Severity::Error;
    f.category = Category::CriticalOom;
    f.range = *job.spec.model.source.range;
    f.message = "projected peak " + est::format_bytes(e.total) + " (" + est::format_bytes(e.low) + "–" +
                est::format_bytes(e.high) + ") for " + job.spec.model.value + ", " + shape_of(r) + " is " +
                percent(e.utilization) + " of " + target.display_name + " (" + est::format_bytes(target.usable_bytes) +
                " usable): out of memory even at the optimistic end";
    f.hint = "See `preflight estimate <file> --gpu " + target.query + "` for the breakdown. " + remedy(r);
    f.evidence.push_back({job.anchor, job.entry_point + " is the job"});
    for (const est::FieldView& field : est::job_fields(job.spec)) {
      if (field.source.kind != est::SourceKind::Script || !field.source.range) continue;
      f.evidence.push_back({*field.source.range, field.name + " = " + field.value + ", read from `" + field.source.detail + "`"});
    }
    f.evidence.push_back({f.range, "peak phase: " + std::string(e.peak() ? e.peak()->name : "?") + "; the interval's low end " +
                                       est::format_bytes(e.low) + " exceeds " + est::format_bytes(target.usable_bytes)});
    return f;
  }

  static std::string remedy(const est::EstimateReport& r) {
    if (r.plan.cheapest_fitting) return "Smallest change that fits: " + r.plan.cheapest_fitting->label + ".";
    return "No combination of the usual changes fits this card: a larger card or more devices is needed.";
  }
};

}  // namespace

std::unique_ptr<RuleCheck> make_tg010(const RuleContext& ctx) { return std::make_unique<Checker>(ctx); }

}  // namespace preflight::rules
