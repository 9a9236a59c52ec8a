// What a context manager or decorator does to autograd, read from its call: shared by the
// provenance (which knows the file's own no_grad wrappers) and the project index (which reads
// each file by syntax alone).
#pragma once

#include <functional>
#include <string_view>

#include "analysis/syntax.h"

namespace preflight::analysis {

// -1: `e` turns autograd off for its block (`torch.no_grad()`, `inference_mode()` unless
// given False, `set_grad_enabled(False)`, or a call whose leaf `no_grad_wrapper` accepts),
// +1: turns it on (`enable_grad()`, `set_grad_enabled(True)`), 0: neither. `bare_ok` accepts
// the decorator form without a call (`@torch.no_grad`).
int grad_switch(TSNode e, std::string_view src, bool bare_ok,
                const std::function<bool(std::string_view)>& no_grad_wrapper);

}  // namespace preflight::analysis
