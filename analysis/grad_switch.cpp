#include "analysis/grad_switch.h"

namespace preflight::analysis {

int grad_switch(TSNode e, std::string_view src, bool bare_ok,
                const std::function<bool(std::string_view)>& no_grad_wrapper) {
  const Kinds& k = kinds();
  e = unparenthesize(e);
  std::string_view leaf;
  TSNode call{};
  if (is(e, k.call)) {
    call = e;
    leaf = callee_leaf(e, src);
  } else if (bare_ok && is(e, k.identifier)) {
    leaf = text_of(e, src);  // @no_grad
  } else if (bare_ok && is(e, k.attribute)) {
    leaf = text_of(field(e, k.f_attribute), src);  // @torch.no_grad
  }
  if (leaf == "no_grad" || leaf == "inference_mode" || (!leaf.empty() && no_grad_wrapper(leaf))) {
    if (!is_null(call) && leaf == "inference_mode" &&
        (is(positional_arg(call, 0), k.false_) || is(keyword_arg(call, "mode", src), k.false_)))
      return 0;
    return -1;
  }
  if (leaf == "enable_grad") return 1;
  if (leaf == "set_grad_enabled" && !is_null(call)) {
    TSNode a = positional_arg(call, 0);
    if (is(a, k.false_)) return -1;
    if (is(a, k.true_)) return 1;
  }
  return 0;
}

}  // namespace preflight::analysis
