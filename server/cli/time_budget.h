// The per-file analysis time budget both front ends give the engine. The engine never reads
// a clock (analysis/budget.h); this is where the deadline is kept.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <string_view>

#include "analysis/budget.h"
#include "rules/engine.h"

namespace preflight::server {

// Long enough for a 10 MiB file of dense training code (about 12 s on this machine), short
// enough that a pathological one cannot hold a CI job or an editor's document for long.
inline constexpr std::chrono::milliseconds kDefaultFileBudget{30'000};

// An Interrupt that runs out `budget` after now (zero: never) and is cancelled by `cancelled`.
analysis::Interrupt interrupt_after(std::chrono::milliseconds budget, std::function<bool()> cancelled = {});

// "30 s", "250 ms": how a budget reads in a message.
std::string describe_budget(std::chrono::milliseconds budget);

// check_source under a time budget: a file that runs past it is FileStatus::TooComplex.
rules::CheckResult check_within(std::string_view text, const rules::CheckOptions& options,
                                std::chrono::milliseconds budget);

}  // namespace preflight::server
