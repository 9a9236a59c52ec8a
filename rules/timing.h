// Timing code: the calls a benchmark makes around the work it measures. Shared by the rules
// that treat a timed loop as a measurement rather than a training run (TG007's syncs, which
// make the timing honest; TG003's summed gradients, which the timing never reads).
#pragma once

#include <string>
#include <string_view>

#include "analysis/module_model.h"
#include "analysis/syntax.h"
#include "rules/rule.h"

namespace preflight::rules {

// `c` reads a clock (`time.perf_counter()`, `time.time()`, `timeit`, bound through the
// imports), creates / records / reads a CUDA timing event, or measures with
// `torch.utils.benchmark`. `why` receives what it does, quoted.
bool is_timing_call(const analysis::ModuleModel& model, TSNode c, int scope, std::string_view source,
                    std::string& why);

// `c` reads a wall clock (the first case above only).
bool is_clock_read(const analysis::ModuleModel& model, TSNode c);

// `c` reads or resets the CUDA caching allocator's statistics (`torch.cuda.max_memory_allocated()`,
// `reset_peak_memory_stats()`, the older `max_memory_cached()`): what a memory benchmark
// reports around the work it measures.
bool is_memory_stat_read(const analysis::ModuleModel& model, TSNode c);

}  // namespace preflight::rules
