// Calls to functions defined in this file, and what a callee's names mean at a call site:
// the one shared answer to "which local helper does this call run" and "which argument does
// this parameter receive", so rules that look into helpers agree on both.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/module_model.h"

namespace preflight::analysis {

// The name a call uses for a function of this file: `helper(...)` -> "helper",
// `self.method(...)` -> "method"; empty for any other callee (`obj.f(...)`, `f()(...)`).
std::string_view local_callee_name(TSNode call, std::string_view src);

// Every function of the file the call may run under that name (a redefined name has
// several), or null when none.
const std::vector<int>* local_callees(const ModuleModel& model, TSNode call);

// The function the call runs when exactly one function of the file has that name, else null.
const FunctionInfo* local_callee(const ModuleModel& model, TSNode call);

// A `.backward()` call inside `node`, directly or in a function of this file that one of its
// calls runs (one level): the region trains.
bool runs_backward(const ModuleModel& model, TSNode node);

// The position of parameter `name` in `fn`'s signature (`self` counts), or nullopt.
std::optional<size_t> parameter_index(const FunctionInfo& fn, std::string_view name);

// The argument the call passes for parameter `index` of `fn`: by keyword, else by position
// (a method called as `self.f(...)` / `obj.f(...)` does not pass `self`). Null when the call
// leaves it to its default or may pass it through a splat.
TSNode argument_for(const FunctionInfo& fn, TSNode call, size_t index, std::string_view src);

// True when the call cannot bind `fn`'s signature: a parameter without a default gets no
// argument (by keyword or position) and no `*` / `**` splat may carry it. Such a call raises
// TypeError before the body runs (RIFE's `model.inference(imgs)` in a stale `__main__` test of
// a two-image `inference(img0, img1)`). A decorated definition is never read so (a decorator
// may change the signature: `@hydra.main(...) def main(cfg)` is called as `main()`).
bool misses_a_required_argument(const FunctionInfo& fn, TSNode call, std::string_view src);

// A dotted name written inside `fn`, as the caller sees it at `call`: a parameter becomes the
// argument bound to it (`m.eval()` in `def evaluate(m)` called as `evaluate(net.module)` ->
// `net.module.eval()`); `self` of a method stays `self`; a name that `fn` binds itself, or a
// parameter whose argument is not a dotted name, has no name at the call site (nullopt);
// anything else (globals, closures) keeps its spelling.
std::optional<std::string> name_at_call_site(const ModuleModel& model, const FunctionInfo& fn,
                                             TSNode call, std::string_view dotted);

}  // namespace preflight::analysis
