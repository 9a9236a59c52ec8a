// Facts about torch APIs that several rules read: is this call torch's `DataLoader`, and
// does the file target a CUDA device. Both come from the syntax tree and the import
// bindings, never from comments or raw text.
#pragma once

#include <string>
#include <string_view>

#include "analysis/module_model.h"
#include "analysis/walker.h"

namespace preflight::analysis {

// Reads the binding: an imported `DataLoader` must come from a torch package (torch,
// torch_geometric, ...) or a known re-exporter that subclasses it (MONAI's
// `monai.data.DataLoader`; the list is in torch_facts.cpp); a locally defined one is someone
// else's class. A fragment with no import of the name falls back to the name, unless a star
// import from a module that is not torch's may have bound it.
bool is_torch_dataloader(const ModuleModel& model, TSNode call);

// The first upload (`.cuda()`, or `.to(...)` of a device or "cuda") in the collate function a
// torch DataLoader call is handed
// (`collate_fn=` or the seventh positional argument, a name of a function of this file; every
// function under that name must upload): the loader hands out device tensors, which pinning
// (it raises on CUDA tensors) and forked workers cannot help. Null otherwise.
TSNode collate_upload(const ModuleModel& model, TSNode dataloader_call);

// The literal text of a plain or f-string, without prefix and quotes; empty for bytes.
std::string_view string_content(TSNode string, std::string_view src);

// Why the file targets CUDA, read from code: a `"cuda"` / `"cuda:N"` / `"nccl"` string
// literal, a Lightning `accelerator="gpu"`, a `.cuda()` call, a `torch.cuda.*` call (not
// seeding or `is_available()`, which run the same without a GPU),
// `.to(<int>)`, `device_ids=`, an Accelerate `Accelerator()` not forced to the CPU, a
// DeepSpeed engine. Fed by the shared walk; keeps the first piece of evidence.
class CudaTargetScan : public Visitor {
 public:
  explicit CudaTargetScan(const ModuleModel& model) : model_(model) {}
  void enter(TSNode n, const WalkState& state) override;

  bool targets_cuda() const { return !is_null(evidence_); }
  TSNode evidence() const { return evidence_; }     // the string or call that shows it
  std::string_view reason() const { return reason_; }  // "a CUDA device string", ...

 private:
  void note(TSNode n, std::string_view reason);
  void note_string(TSNode n);
  void note_call(TSNode call);
  bool behind_false_flag(TSNode n, int scope) const;
  bool always_false(TSNode flag, int scope) const;
  const ModuleModel& model_;
  TSNode evidence_{};
  std::string_view reason_;
};

}  // namespace preflight::analysis
