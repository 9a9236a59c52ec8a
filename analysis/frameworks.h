// Which framework owns a piece of training code: the shared answer to "does a framework do
// this work here" (clear gradients, scale for accumulation, switch train/eval, shard the
// data), read from bindings and base classes first and from names only as a fallback. Rules
// use it both to stay quiet and to say why they did (`check --explain-silence`).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "analysis/module_model.h"

namespace preflight::analysis {

enum class Framework { Lightning, Fabric, Accelerate, DeepSpeed, HfTrainer, DistributedAutograd };

// "PyTorch Lightning", "Lightning Fabric", "Hugging Face Accelerate", "DeepSpeed",
// "the Hugging Face Trainer", "distributed autograd".
std::string_view framework_name(Framework f);

// The framework a qualified name belongs to: `lightning.pytorch.Trainer` and
// `pytorch_lightning.*` -> Lightning, `lightning.fabric.*` / `lightning_fabric.*` -> Fabric,
// `accelerate.*`, `deepspeed.*`, `transformers.*` / `trl.*` -> HfTrainer, and
// `torch.distributed.autograd` -> DistributedAutograd.
std::optional<Framework> framework_of_package(std::string_view qualified);

// How the ownership shows, which decides what the evidence says.
enum class OwnedBy {
  ClassBase,     // the enclosing class derives from the framework's module or trainer class
  Import,        // the receiver is a module the framework ships (`torch.distributed.autograd`)
  Binding,       // the receiver is bound to a value the framework made
  ReceiverName,  // the receiver is named like a framework object (the naming fallback)
};

struct FrameworkOwner {
  Framework framework;
  OwnedBy by;
  TSNode site;  // the class's superclass list, the binding's value, or the receiver
};

// The framework whose loop calls the methods of the class enclosing `scope`: a
// LightningModule subclass (directly or through a local base) -> Lightning; a subclass of a
// framework's `...Trainer` class (`transformers.Trainer`, `trl.SFTTrainer`) -> that framework.
std::optional<FrameworkOwner> class_owner(const ModuleModel& model, int scope);

// The framework a `.backward()` receiver belongs to: the binding of its first segment
// (`engine, opt, _, _ = deepspeed.initialize(...)`, `acc = Accelerator()`), else its name
// (`accelerator`, `fabric`, `self.lightning_module`, `dist_autograd`, `model_engine`,
// `strategy`; never a `scaler`). Null for a tensor (`loss.backward()`).
std::optional<FrameworkOwner> backward_owner(const ModuleModel& model, TSNode receiver, int scope);

// `loss.backward(context_id)` inside `with dist_autograd.context() as context_id:`: the
// backward of a distributed-autograd RRef, whose gradients live in the context (round 14:
// fairscale's RPC pipeline tests). Returns the `context()` call, or null.
TSNode distributed_autograd_context(const ModuleModel& model, TSNode backward_call);

// One line for the evidence chain: "`class Net(pl.LightningModule)` runs under PyTorch
// Lightning's Trainer", "`accelerator` is bound to `Accelerator()` (Hugging Face Accelerate)".
std::string describe_owner(const FrameworkOwner& owner, std::string_view src);

}  // namespace preflight::analysis
