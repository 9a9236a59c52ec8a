#include "analysis/torch_facts.h"

namespace preflight::analysis {

namespace {

// Known re-exporters: libraries whose `DataLoader` is a subclass of
// `torch.utils.data.DataLoader` that keeps its arguments (`sampler=`, `num_workers=`,
// `pin_memory=`), listed by the qualified name an import gives them. Keep this list short and
// certain; a library belongs here only when its class is documented as torch's subclass.
// (torch_geometric and torchdata need no entry: their packages start with `torch`.)
constexpr std::string_view kDataLoaderReexporters[] = {
    "monai.data.DataLoader",             // MONAI: `class DataLoader(torch.utils.data.DataLoader)`
    "monai.data.dataloader.DataLoader",  // the module that defines it
};

bool reexports_torch_dataloader(std::string_view qualified) {
  for (std::string_view q : kDataLoaderReexporters)
    if (qualified == q) return true;
  return false;
}

}  // namespace

bool is_torch_dataloader(const ModuleModel& model, TSNode call) {
  auto q = model.qualified_callee(call);
  if (!q || (*q != "DataLoader" && !q->ends_with(".DataLoader"))) return false;
  auto dotted = dotted_name(model.callee_of(call), model.source());
  if (!dotted) return false;
  std::string first = dotted->substr(0, dotted->find('.'));
  if (model.import_of(first)) return q->starts_with("torch") || reexports_torch_dataloader(*q);
  if (*dotted == "DataLoader")
    return model.class_named("DataLoader") < 0 && !model.functions_named("DataLoader");
  return true;
}

std::string_view string_content(TSNode n, std::string_view src) {
  std::string_view t = text_of(n, src);
  size_t q = t.find_first_of("\"'");
  if (q == std::string_view::npos) return {};
  std::string_view prefix = t.substr(0, q);
  if (prefix.find_first_of("bB") != std::string_view::npos) return {};
  t.remove_prefix(q);
  size_t quote = t.size() >= 6 && (t.starts_with("\"\"\"") || t.starts_with("'''")) ? 3 : 1;
  if (t.size() < 2 * quote) return {};
  return t.substr(quote, t.size() - 2 * quote);
}

void CudaTargetScan::enter(TSNode n, const WalkState&) {
  if (targets_cuda()) return;
  if (is(n, kinds().string)) note_string(n);
  else if (is(n, kinds().call)) note_call(n);
}

void CudaTargetScan::note(TSNode n, std::string_view reason) {
  evidence_ = n;
  reason_ = reason;
}

void CudaTargetScan::note_string(TSNode n) {
  std::string_view s = string_content(n, model_.source());
  if (s == "cuda" || s.starts_with("cuda:")) return note(n, "a CUDA device string");
  if (s == "nccl") return note(n, "the NCCL backend, which runs on CUDA devices only");
  if (s != "gpu") return;
  TSNode p = ts_node_parent(n);  // found by walking down from the root: only for "gpu"
  if (is(p, kinds().keyword_argument) &&
      text_of(field(p, kinds().f_name), model_.source()) == "accelerator")
    note(n, "a Lightning `accelerator=\"gpu\"`");
}

void CudaTargetScan::note_call(TSNode call) {
  const Kinds& k = kinds();
  std::string_view src = model_.source();
  TSNode callee = model_.callee_of(call);
  std::string_view leaf = model_.callee_leaf(call);
  auto q = model_.qualified_callee(call);
  if (is(callee, k.attribute) && leaf == "cuda") return note(call, "a `.cuda()` call");
  if (q && q->starts_with("torch.cuda.")) return note(call, "a `torch.cuda` call");
  if (is(callee, k.attribute) && leaf == "to" && is(positional_arg(call, 0), k.integer))
    return note(call, "a move to a CUDA device index");
  if (!is_null(keyword_arg(call, "device_ids", src)))
    return note(call, "a data-parallel wrapper over CUDA device ids");
  if (q && *q == "accelerate.Accelerator" && !has_literal_true_keyword(call, "cpu", src))
    return note(call, "an Accelerate `Accelerator`, which places work on the GPU");
  if (q && (*q == "deepspeed.initialize" || *q == "deepspeed.init_distributed"))
    return note(call, "a DeepSpeed engine, which trains on CUDA devices");
}

}  // namespace preflight::analysis
