// Long explanations shown by `preflight explain` and in SARIF: why the pattern is silent,
// what it costs, the correct code, and what the rule deliberately does not flag.
#pragma once

#include <string_view>

namespace preflight::rules {

inline constexpr std::string_view kExplainTG001 = R"(Why it costs money
  A tensor produced with autograd on carries a reference to the graph that made it. Storing
  it in a list, a dict or a running total that outlives the iteration keeps that graph
  alive. If no backward ever consumes it, every intermediate activation behind the value
  stays on the GPU and a new graph piles up each step: memory climbs until the job dies with
  an out-of-memory error, often hours in. If a backward already ran, the activations are
  freed, but each stored tensor still pins its graph's nodes and stays differentiable: host
  memory grows per step and later arithmetic on the list builds ever larger graphs.

Example
  for xb, yb in loader:
      loss = criterion(model(xb), yb)
      loss.backward(); opt.step(); opt.zero_grad()
      history.append(loss)          # keeps every step's graph

The fix
  history.append(loss.item())       # a Python number, when only the value matters
  history.append(loss.detach())     # a tensor without the graph
  `.detach()` is offered as a safe fix: it changes nothing a later backward needs (stores
  whose contents a backward or a caller reads are never reported). `.item()` is offered as
  an unsafe alternative: it changes the type and moves the value to the host.

Not flagged
  Stores under torch.no_grad() / inference_mode() / set_grad_enabled(False); values that are
  provably graph-free (.item(), .detach(), float(), argmax, comparisons, shapes); holders a
  later backward reads (stacked RL objectives, summed losses backwarded after the loop,
  pipeline schedules that fetch held micro-batch losses, distributed autograd); chunked
  losses whose accumulated total is returned to the caller to backward. Deciding this is a
  reachability question over the whole file, not a syntax pattern.)";

inline constexpr std::string_view kExplainTG002 = R"(Why it costs money
  With autograd on, every forward pass records a graph and keeps the activations a backward
  would need. An evaluation routine never backwards, so that memory is held for nothing:
  evaluation typically needs two to three times the memory it should, and a batch size that
  trains fine runs out of memory at validation time. It is also slower.

Example
  def evaluate(model, loader):
      model.eval()
      for xb, yb in loader:
          correct += (model(xb).argmax(1) == yb).sum().item()

The fix
  @torch.no_grad()                   # or @torch.inference_mode()
  def evaluate(model, loader): ...
  or wrap the evaluation loop in `with torch.no_grad():`. `model.eval()` alone does not
  disable autograd: it only switches dropout and batch-norm behaviour. The decorator is
  offered as a safe fix only for an evaluation-named routine that never calls backward;
  a training routine with a validation loop gets the `with` advice instead.

Not flagged
  Forward passes inside no_grad / inference_mode / set_grad_enabled(False) (block,
  decorator or statement form); evaluation-looking loops that backward on purpose
  (adversarial attacks); Lightning's validation/test/predict hooks inside a
  LightningModule, which the trainer already runs under no_grad; preprocessors loaded with
  from_pretrained (tokenizers, processors).)";

inline constexpr std::string_view kExplainTG003 = R"(Why it costs money
  PyTorch adds each backward's gradients into `.grad`; it never clears them by itself. A loop
  that backwards and steps without zero_grad() applies the sum of every gradient so far at
  each update. Training does not crash: the loss curve can even look plausible for a while,
  then diverges or plateaus, and the GPU hours are spent on a model that learned the wrong
  thing.

Example
  for xb, yb in loader:
      criterion(model(xb), yb).backward()
      optimizer.step()               # nothing clears .grad

The fix
  Clear once per step, at the start of the iteration or right after the step:
      optimizer.zero_grad(set_to_none=True)
  No automatic fix is offered: where the clearing belongs depends on whether gradient
  accumulation was intended.

Not flagged
  Loops that clear gradients anywhere in their body, under any condition (accumulation
  that zeroes every k steps is fine), by zero_grad(), `p.grad = None`, `p.grad.zero_()` or a
  local helper that does so; loops without an optimizer step (micro-batch loops whose
  step is in the outer loop, saliency maps); Lightning, Fabric and distributed-autograd
  backwards, and methods of a LightningModule, whose trainer clears gradients.)";

}  // namespace preflight::rules
