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

// `from captioning.data.dataloader import *` (round 55: an image-captioning repository whose
// own `DataLoader(opt)` wraps torch's loaders): a star import from a module that is neither
// torch's nor a known re-exporter may bind the name, so a bare `DataLoader` is not proven
// torch's.
bool star_import_may_bind_dataloader(const ModuleModel& model) {
  for (const std::string& mod : model.star_imports())
    if (mod != "torch" && !mod.starts_with("torch.") && !reexports_torch_dataloader(mod + ".DataLoader"))
      return true;
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
    return model.class_named("DataLoader") < 0 && !model.functions_named("DataLoader") &&
           !star_import_may_bind_dataloader(model);
  return true;
}

TSNode collate_upload(const ModuleModel& model, TSNode dataloader_call) {
  constexpr unsigned kCollatePosition = 6;  // torch.utils.data.DataLoader's positional order
  TSNode fn = keyword_arg(dataloader_call, "collate_fn", model.source());
  if (is_null(fn)) fn = positional_arg(dataloader_call, kCollatePosition);
  fn = unparenthesize(fn);
  if (is_null(fn) || !is(fn, kinds().identifier)) return TSNode{};
  const std::vector<int>* fs = model.functions_named(text_of(fn, model.source()));
  if (!fs) return TSNode{};
  TSNode first{};
  for (int f : *fs) {
    TSNode upload{};
    model.for_each_call_in(model.functions()[f].node, [&](TSNode call) {
      if (!is_null(upload) || !is(field(call, kinds().f_function), kinds().attribute)) return;
      std::string_view leaf = model.callee_leaf(call);
      if (leaf == "cuda") upload = call;
      // `.to(device)` / `.to("cuda")`, not a dtype cast such as `.to(torch.float32)`
      TSNode where = keyword_arg(call, "device", model.source());
      if (is_null(where)) where = positional_arg(call, 0);
      std::string_view target = is_null(where) ? std::string_view{} : text_of(where, model.source());
      if (leaf == "to" && (target.find("cuda") != std::string_view::npos || target.find("device") != std::string_view::npos))
        upload = call;
    });
    if (is_null(upload)) return TSNode{};
    if (is_null(first)) first = upload;
  }
  return first;
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

void CudaTargetScan::enter(TSNode n, const WalkState& state) {
  if (targets_cuda()) return;
  if (!is(n, kinds().string) && !is(n, kinds().call)) return;
  if (behind_false_flag(n, state.scope)) return;
  if (is(n, kinds().string)) note_string(n);
  else note_call(n);
}

// `use_cuda = False` ... `torch.device("cuda" if use_cuda else "cpu")` or `if use_cuda:
// model.cuda()` (round 47: a plotting script of a graph-ODE repository): the CUDA branch
// never runs when every binding of its flag is the literal False.
bool CudaTargetScan::behind_false_flag(TSNode n, int scope) const {
  const Kinds& k = kinds();
  for (TSNode child = n, p = model_.parent(n); !is_null(p); child = p, p = model_.parent(p)) {
    if (is(p, k.function_definition) || is(p, k.class_definition)) return false;
    TSNode flag{};
    if (is(p, k.conditional_expression) && ts_node_eq(ts_node_named_child(p, 0), child))
      flag = ts_node_named_child(p, 1);
    else if (is(p, k.if_statement) && ts_node_eq(field(p, k.f_consequence), child))
      flag = field(p, k.f_condition);
    if (!is_null(flag) && always_false(unparenthesize(flag), scope)) return true;
  }
  return false;
}

bool CudaTargetScan::always_false(TSNode flag, int scope) const {
  if (!is(flag, kinds().identifier)) return false;
  const std::vector<BindingSite>* sites = model_.bindings_of(text_of(flag, model_.source()), scope);
  if (!sites || sites->empty()) return false;
  for (const BindingSite& b : *sites)
    if (b.position >= 0 || !is(unparenthesize(b.value), kinds().false_)) return false;
  return true;
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
  TSNode p = model_.parent(n);
  if (is(p, kinds().keyword_argument) &&
      text_of(field(p, kinds().f_name), model_.source()) == "accelerator")
    note(n, "a Lightning `accelerator=\"gpu\"`");
}

// `torch.cuda.manual_seed(s)`, `torch.cuda.is_available()`: seeding boilerplate and a check
// run the same on a machine without a GPU, so neither says the file uses one (round 49: two
// CPU-only image preprocessing scripts whose only CUDA mention was the seed).
namespace {
bool seeds_or_asks(std::string_view qualified) {
  constexpr std::string_view kPrefix = "torch.cuda.";
  if (!qualified.starts_with(kPrefix)) return false;
  std::string_view f = qualified.substr(kPrefix.size());
  return f == "manual_seed" || f == "manual_seed_all" || f == "seed" || f == "seed_all" || f == "is_available";
}
}  // namespace

void CudaTargetScan::note_call(TSNode call) {
  const Kinds& k = kinds();
  std::string_view src = model_.source();
  TSNode callee = model_.callee_of(call);
  std::string_view leaf = model_.callee_leaf(call);
  auto q = model_.qualified_callee(call);
  if (is(callee, k.attribute) && leaf == "cuda") return note(call, "a `.cuda()` call");
  if (q && q->starts_with("torch.cuda.") && !seeds_or_asks(*q)) return note(call, "a `torch.cuda` call");
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
