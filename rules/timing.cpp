#include "rules/timing.h"

#include <algorithm>
#include <iterator>
#include <vector>

namespace preflight::rules {
namespace {

using namespace preflight::analysis;

// Clocks a benchmark reads around the work it times (qualified through the imports).
constexpr std::string_view kClocks[] = {"time.time",         "time.perf_counter",    "time.monotonic",
                                        "time.process_time", "time.time_ns",         "time.perf_counter_ns",
                                        "time.monotonic_ns", "timeit.default_timer"};

// `start.record()` with `start = torch.cuda.Event(enable_timing=True)` (or a list of them).
bool is_cuda_event(const ModuleModel& model, TSNode recv, int scope, std::string_view source) {
  const Kinds& k = kinds();
  recv = unparenthesize(recv);
  while (is(recv, k.subscript)) recv = unparenthesize(field(recv, k.f_value));
  auto d = dotted_name(recv, source);
  const std::vector<BindingSite>* sites = d ? model.bindings_of(*d, scope) : nullptr;
  if (!sites) return false;
  for (const BindingSite& b : *sites) {
    if (is_null(b.value)) continue;
    bool event = false;
    model.for_each_call_in(b.value, [&](TSNode v) {
      auto q = model.qualified_callee(v);
      event = event || (q && q->ends_with("cuda.Event"));
    });
    if (event) return true;
  }
  return false;
}

}  // namespace

bool is_clock_read(const ModuleModel& model, TSNode c) {
  auto q = model.qualified_callee(c);
  return q && (std::find(std::begin(kClocks), std::end(kClocks), *q) != std::end(kClocks) ||
               q->starts_with("timeit."));
}

bool is_memory_stat_read(const ModuleModel& model, TSNode c) {
  static constexpr std::string_view kMemoryStats[] = {
      "cuda.max_memory_allocated", "cuda.memory_allocated",       "cuda.reset_peak_memory_stats",
      "cuda.max_memory_reserved",  "cuda.memory_reserved",        "cuda.memory_stats",
      "cuda.max_memory_cached",    "cuda.memory_cached",          "cuda.reset_max_memory_cached",
      "cuda.reset_max_memory_allocated"};
  auto q = model.qualified_callee(c);
  return q && q->starts_with("torch.") &&
         std::any_of(std::begin(kMemoryStats), std::end(kMemoryStats), [&](std::string_view m) { return q->ends_with(m); });
}

bool is_timing_call(const ModuleModel& model, TSNode c, int scope, std::string_view source, std::string& why) {
  const Kinds& k = kinds();
  auto q = model.qualified_callee(c);
  if (!q) return false;
  std::string quoted = quote_code(text_of(c, source));
  if (is_clock_read(model, c)) {
    why = quoted + " reads a clock in this loop";
    return true;
  }
  if (q->starts_with("torch.utils.benchmark.")) {
    why = quoted + " measures with torch.utils.benchmark";
    return true;
  }
  if (q->ends_with("cuda.Event") && has_literal_true_keyword(c, "enable_timing", source)) {
    why = quoted + " creates a CUDA timing event";
    return true;
  }
  std::string_view leaf = model.callee_leaf(c);
  TSNode callee = model.callee_of(c);
  if ((leaf == "record" || leaf == "elapsed_time") && is(callee, k.attribute) &&
      is_cuda_event(model, field(callee, k.f_object), scope, source)) {
    why = quoted + (leaf == "record" ? " records a CUDA timing event" : " reads a CUDA event timer");
    return true;
  }
  return false;
}

}  // namespace preflight::rules
