// The parameter count of a model the script defines itself: a local `nn.Module` subclass
// whose layers have literal shapes (`nn.Linear(4096, 4096)`, `nn.Embedding`, convolutions,
// norms, `nn.TransformerEncoderLayer`, `nn.Sequential` / `nn.ModuleList` of them, layers
// stacked by a comprehension or an `append` loop over `range(N)`, other local modules built
// with their constructor arguments), summed across the class tree (local base classes too).
// A layer whose shape cannot be folded to integers makes the whole count unknown, with that
// expression as the reason — never a partial count presented as the total.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "analysis/module_model.h"

namespace preflight::estimator {

struct ModuleParams {
  std::optional<int64_t> count;
  std::string blocking;  // when unknown: the expression that did not fold
};

// `instantiation` is the call `Net(...)` whose arguments bind the constructor's parameters.
ModuleParams count_module_params(const analysis::ModuleModel& model, int class_index, TSNode instantiation);

}  // namespace preflight::estimator
