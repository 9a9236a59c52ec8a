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
  `.detach()` is a safe fix only on a value proven to be a tensor (a torch function, a
  tensor method, a loss, a layer's output, a name a backward ran over) whose stored copy no
  backward, return or caller can still need; on a model's output of unseen shape (it may be
  a tuple or a ModelOutput), or in a holder handed to a caller, it is offered as unsafe.
  `.item()` is always unsafe: it changes the type and moves the value to the host. Unsafe
  fixes are applied only by --fix --unsafe-fixes, and only where no safe fix is offered.

Severity
  An error needs every step proven from bindings. A model or criterion known only by its
  name (or a model known only by its class's `models` package import path, whose forward
  is not seen), or a holder returned to / passed in by a caller, makes it a warning, and the
  evidence says which step is the weak one. In a routine that never backwards, autograd is
  on only if its callers leave it on: an error needs a caller in this file seen running it
  with autograd on; with no caller here it is a warning that says so, and when every caller
  here runs it under no_grad nothing is reported (the silence lists the calls). With no
  caller here, the project's other files (the run's files, or the editor's workspace) are
  read, their calls matched by name: every one under no_grad means nothing is reported. A `.detach()`
  after the graph was consumed is safe only on the value the backward ran over itself.

Not flagged
  Stores under torch.no_grad() / inference_mode() / set_grad_enabled(False); values that are
  provably graph-free (.item(), .detach(), float(), argmax, comparisons, shapes) or not
  tensors at all (numbers, NumPy arrays, timers, the result of a function the analysis cannot
  see); containers filled inside a function that returns a graph to its caller (a forward's
  per-layer states, a criterion's logging dict: per-call, not per-iteration); a local
  container filled only by loops over entries (`d.items()`, `net.parameters()`,
  `net.children()`: one value per entry per call); a holder made anew by each call or each
  pass of an enclosing loop and filled by loops over a fixed collection the code names
  (`self.optimizers.items()`, `range(len(netsD))`), each pass backwarding its own loss (one
  consumed value per member, not per batch; shown as a silence); `.add()` on an instance of a class this
  file defines (a method call, not a container store; on a class defined elsewhere the
  finding is a note with an unsafe fix, since what the method keeps is not seen); local
  containers of a module's `forward`; after a backward consumed the graph, a holder local to
  its function that outlives no training loop (freed when the call returns); holders a
  later backward reads (stacked RL objectives, summed losses backwarded after the loop,
  pipeline schedules that fetch held micro-batch losses, distributed autograd); chunked
  losses whose accumulated total is returned to the caller to backward; loops in a class's
  `__init__` (run once per object: a bounded number of values); loops whose only
  graph-carrying values are indexes or slices of tensors made before them (views of graphs
  that exist once); losses computed by a criterion from a prediction made under no_grad, also
  through a local helper called on such values; holders rebound at the start of every pass
  of an enclosing loop and filled in loops that neither train nor run over a loader's batches
  (per-head loss lists, one sample's step losses: one pass's values; shown as a silence; a
  total summed over a validation loader's batches is still reported); test functions; element stores into a
  preallocated tensor or through `.data` (`delta.data[mask] = v` copies values with no
  autograd history). Deciding
  this is a reachability question over the whole file, not a syntax pattern.)";

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
  offered for an evaluation-named routine that never calls backward, as a safe fix only
  when no graph can leave it (it returns nothing graph-carrying and stores nothing on an
  object) and every call in it is seen not to need autograd (a call this file does not see,
  handed a value that may be a tensor, such as an attack's `attack.perturb(x, y)`, makes it
  unsafe); a training routine with a validation loop gets the `with` advice instead.

Severity
  An error when the routine trains, or when a caller in the file is seen running it with
  autograd on. When no caller is in the file (or the function is passed on as a value, or
  called on an object of unknown class), whether its callers disable autograd is a guess:
  a warning, and the evidence says so. Then the project's other files (the files of the run,
  or the editor's workspace folders) are read, their calls matched by the routine's name (a
  naming step, so they only ever lower the finding): when every call there runs under
  no_grad / inference_mode (directly or through up to four callers) nothing is reported, and
  when no file of the project calls the routine or lets it leave as a value it is a note
  (dead code, or called from outside the project).

Not flagged
  Forward passes inside no_grad / inference_mode / set_grad_enabled(False) (block,
  decorator or statement form, and lambdas written inside such a block); routines every
  caller in the file runs under no_grad; a module's own `forward` (training and evaluation
  both call it: its callers decide); forwards whose result is discarded (warm-up and
  profiling passes) or detached where it is made (`model(s).detach()`): the graph is freed at
  once; evaluation-looking loops and routines that
  backward on purpose (adversarial attacks) or differentiate the forward with
  `torch.autograd.grad` (Jacobians), also through a helper of this file; Lightning's validation/test/predict hooks inside a
  LightningModule, which the trainer already runs under no_grad; a `model` parameter that
  every call in the file binds to an instance of a plain class of this file (no torch module:
  calling it runs its own `__call__`; shown as a silence); preprocessors loaded with
  from_pretrained (tokenizers, processors); models whose every parameter the routine froze
  before the forward (and `nn.Embedding.from_pretrained`, frozen by default), or that every
  caller in the file passes in frozen, on graph-free inputs; shape smoke tests on
  literal-shaped inputs; a policy's `evaluate_actions` / `predict_values` (PPO's training
  forwards) and routines that sample with `rsample()` (the reparameterisation trick); files of another framework (MXNet, TensorFlow, Keras, Paddle, MLX, JAX). Code
  written for PyTorch before 0.4 (`Variable(..., volatile=True)`, or inputs made by a helper
  from another file in a file that imports `Variable`) gets a note without a fix, and the
  decorator is offered as unsafe in any file that calls or imports `Variable`. A file with a
  module whose own `forward` asks autograd for gradients (a leaf made with
  `requires_grad=True`, a backward or `autograd.grad` inside it) gets at most a warning, with
  the decorator unsafe: the evaluated model may be that module. A statement-level
  `set_grad_enabled(False)` at the module's top level or in the `__init__` of the routine's
  class, with nothing in the file turning autograd back on, switches autograd off for the
  process: silent, with the reason recorded.)";

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
  local helper that does so; loops without an optimizer step (saliency maps; a micro-batch
  loop is judged with the loop around it that steps, where a clear anywhere is enough); Lightning, Fabric and distributed-autograd
  backwards, and methods of a LightningModule, whose trainer clears gradients; a fresh model
  and optimizer built on every pass; a timed benchmark (a `range` loop on inputs fixed before
  it, between two clock reads), whose summed gradients change nothing it reports; a
  `.step(loss)` handed a tensor (a differentiable inner optimizer such as higher's, which
  takes its gradients from that loss), which is no torch optimizer step.

Severity
  An error. A warning when the backward is a DeepSpeed engine's (ZeRO's optimizers clear
  gradients in `step()`, a configuration this file does not show), or when the loop calls a
  `self` method the file does not define in a class whose base comes from another module (it
  may clear gradients); a note when the backwarded loss itself comes from such a method.)";

inline constexpr std::string_view kExplainTG005 = R"(Why it costs money
  Cross-entropy is log-softmax followed by NLL: it normalises its input itself. Handing it
  probabilities normalises twice, which squashes the scores toward uniform and shrinks the
  gradient; the run does not crash, it just learns slowly or plateaus at a worse accuracy,
  and the GPU hours are spent anyway. NLL is the mirror case: it expects log-probabilities,
  so given probabilities it optimises the wrong quantity.

Example
  loss = F.cross_entropy(F.softmax(model(xb), dim=1), yb)
  head = nn.Sequential(nn.Linear(512, 10), nn.Softmax(dim=-1))   # with CrossEntropyLoss

The fix
  loss = F.cross_entropy(model(xb), yb)           # logits in; softmax only for reporting
  loss = F.nll_loss(F.log_softmax(model(xb), dim=1), yb)
  For an inline activation a fix is offered: cross-entropy gets the activation's input (the
  receiver of `z.softmax(1)`, never its dim); NLL gets `log_softmax` instead of `softmax`.
  log_softmax before cross-entropy computes the same loss (log-softmax is idempotent), so
  it is reported as a warning about redundant work, not as a convergence bug. A Sequential
  ending in Softmax is a warning: the file's loss pairing is what makes it wrong.

Not flagged
  log_softmax into NLL; NLL negated (`-F.nll_loss(probs, y, reduction='none')` reads each
  target's probability, a gather, not a loss); softmax used only for reporting probabilities;
  Softmax layers that
  are not the last layer of an nn.Sequential (attention normalisation); activations and
  criteria read from their bindings, so `self.softmax = nn.LogSoftmax(dim=1)` into NLL is
  correct however it is named, and a criterion or activation whose binding cannot be seen
  (another file, a parameter that this file's calls fill with different things) is not
  guessed; a variable is judged by the assignments that reach the loss in the same function,
  not by a same-named variable elsewhere. A model of this file whose `forward` returns
  softmax is followed into the loss it feeds (`F.nll_loss(model(x), y)`), reported once per
  forward: an error when the model's binding is in the loss's routine, a warning when the
  model or the criterion is a parameter read through this file's calls of that routine.)";

inline constexpr std::string_view kExplainTG006 = R"(Why it costs money
  BCEWithLogitsLoss / binary_cross_entropy_with_logits apply a sigmoid to their input
  themselves; BCELoss / binary_cross_entropy need probabilities in [0, 1]. A sigmoid before
  the with-logits loss squashes twice: predictions are confined to a narrow band around 0.5,
  the gradient shrinks, and the run trains for hours without learning. Raw scores into plain
  BCE make the run fail: PyTorch rejects inputs outside [0, 1] (a device-side assertion on
  CUDA; older versions produced nan). A sigmoid before plain BCE is mathematically right
  but fragile: the log of a saturated sigmoid loses precision and is clamped at -100.

Example
  crit = nn.BCEWithLogitsLoss()
  loss = crit(torch.sigmoid(model(xb)), yb)       # sigmoid applied twice

The fix
  loss = crit(model(xb), yb)                       # raw scores into the fused loss
  For an inline sigmoid before the with-logits loss a fix is offered: the call becomes its
  input (the receiver of `z.sigmoid()`). The fused loss is preferred even where the pairing
  is correct, because it is computed stably (log-sum-exp). A Sequential ending in
  nn.Sigmoid() in a file that uses the with-logits loss is a warning. A model of this file
  that returns a tuple (`x_rec, mu, log_var = model(x)`, a VAE) is followed to the element
  its forward returns.

Not flagged
  Raw scores into the with-logits loss; plain BCE on values whose chain applies a sigmoid,
  softmax or clamp (followed through the assignments reaching the loss, local helpers, and
  model classes defined in this file, e.g. a discriminator ending in nn.Sigmoid()); plain
  BCE on parameters or values whose graph cannot be shown; a tuple element whose model or
  forward cannot be read (a parameter, an imported class, a forward that returns a name);
  a forward ending in a sigmoid feeding plain BCE; criteria whose binding cannot be seen; a stand-alone nn.Sigmoid() that is not the last layer of a Sequential; a
  same-named criterion bound to another class in another function; a Sequential ending in
  nn.Sigmoid() whose every call feeds another computation (a gate handed to `lerp`, a factor
  in a product), never returned (shown as a silence); plain BCE after a sigmoid of a sum or
  difference of a few bounded values (`sigmoid(pos_score - neg_score)` of two sigmoid scores),
  which cannot saturate (shown as a silence).

Severity
  A sigmoid into plain BCE is a note inside the module's `if __name__ == "__main__":` block
  when nothing there runs a backward (a demo computing one loss: no gradient is distorted).)";

inline constexpr std::string_view kExplainTG004 = R"(Why it costs money
  With `num_workers` unset (the default is 0) or 0, the training process itself reads,
  decodes and collates every batch, and the GPU sits idle while it does: utilisation shows a
  sawtooth, busy for the step and empty for the load. On a multi-GPU node every rank pays it,
  so the idle time multiplies. Without `pin_memory=True` batches live in pageable host memory:
  the copy to the device goes through a staging buffer and cannot overlap with compute, even
  with `non_blocking=True`.

Example
  device = torch.device("cuda")
  loader = DataLoader(train_set, batch_size=128, shuffle=True)

The fix
  loader = DataLoader(train_set, batch_size=128, shuffle=True,
                      num_workers=8, pin_memory=True, persistent_workers=True)
  and move batches with `xb.to(device, non_blocking=True)`. A rule of thumb is about 4
  workers per GPU, bounded by the CPU cores. `pin_memory=True` is offered as a fix when the
  keyword is absent, labelled unsafe (applied only by --fix --unsafe-fixes): a dataset whose
  items are already CUDA tensors works unpinned but raises once pinned. The worker count is
  not offered, because the right value depends on the host.

Not flagged
  Files that do not target CUDA, read from code (a "cuda" device string, `.cuda()`,
  `torch.cuda.*`, `.to(<device index>)`, `device_ids=`, an Accelerate `Accelerator`, a DeepSpeed
  engine), never from comments or strings that merely mention it, nor from a branch whose
  flag is bound only to `False` (`"cuda" if use_cuda else "cpu"` after `use_cuda = False`);
  values that are not
  literals (`num_workers=args.workers` is trusted); keywords a `*args` / `**kwargs` splat may
  carry (and no keyword is ever appended after one); datasets already on the device, where
  workers and pinning do not apply; a `DataLoader` name bound to something other than torch's
  loader; a loader bound to a name its function never reads again (nothing loads from it;
  shown as a silence); the pin_memory note for an evaluation loader, whose every loop and every
  local function it is handed to trains nothing (shown as a silence). It is a note: the code is
  correct, only not tuned.)";

inline constexpr std::string_view kExplainTG012 = R"(Why it costs money
  Under DistributedDataParallel each process builds its own `DataLoader`. Without a
  `DistributedSampler` every rank iterates the whole dataset in the same order, so all N GPUs
  compute gradients from the same batches, all-reduce identical gradients, and the job trains
  like one GPU on the full data while paying for N. It looks like "poor scaling": epochs take as
  long as before and accuracy per epoch does not improve. `shuffle=True` does not help, since
  every rank shuffles with the same seed. An evaluation loader without a sampler scores the
  complete evaluation set on every rank: correct (often deliberately, for an exact metric
  without the sampler's padding) but N times the work, so it is only a note. Whether a loader
  feeds evaluation is read from its loops first (run under no_grad, or after `model.eval()`
  with no backward), and from its name only when no loop shows it.

Example
  dist.init_process_group("nccl")
  model = DistributedDataParallel(model, device_ids=[local_rank])
  loader = DataLoader(train_set, batch_size=64, shuffle=True)

The fix
  sampler = DistributedSampler(train_set)           # shuffles per epoch, shards by rank
  loader = DataLoader(train_set, batch_size=64, sampler=sampler)
  for epoch in range(epochs):
      sampler.set_epoch(epoch)                      # a different shuffle every epoch
  `sampler=` and `shuffle=True` cannot be combined. For evaluation use
  `DistributedSampler(val_set, shuffle=False)` and reduce the metric, or evaluate on one rank.

Not flagged
  Loaders with a sampler or batch sampler that may shard (a custom sampler, a conditional one,
  a name bound to one); datasets built with the rank (`split_dataset_by_node`, `.shard(...)`,
  a dataset class that reads the rank); loaders built on one rank only (`if rank == 0:`) or in
  the non-distributed branch (`else` of `if args.distributed:`); DDP set up in a function that
  neither builds, calls nor is called by the loader's function; files where Lightning,
  Accelerate or the Hugging Face Trainer builds and re-shards the loaders (read from calls and
  base classes, not from the words in comments); `**kwargs` that may carry the sampler;
  `deepspeed.initialize` in a file that shows no distributed launch (no init_process_group,
  torch.distributed, local rank or launcher environment variable), which may be a single
  process running ZeRO-Offload; DDP set up only under a guard that a constant makes false
  (`world_size = 1 ... if world_size > 1:`). A loader handed to a call whose result replaces
  it on every path (`..., loader = engine.make_private(data_loader=loader)`) is a note: the
  code iterates what that unseen call returns, which may shard it. So is a loader no loop of
  the file iterates that is handed, itself or in a dict, to a call the file does not define
  (`runner.train(loaders={"train": loader})`): whatever iterates it there may shard it.)";

inline constexpr std::string_view kExplainTG007 = R"(Why it costs money
  CUDA kernels run asynchronously: the host queues work and races ahead while the device
  computes. `.item()`, `.cpu()`, `.numpy()`, `.tolist()` and `torch.cuda.synchronize()` make
  the host wait until the queue is empty. Once per step that is harmless; inside a loop over
  the elements of a tensor it drains the queue for every element, so the GPU idles between
  tiny kernels and a step can take many times longer. Comprehensions and generator
  expressions are loops too. A bare `cuda.synchronize()` in the step is usually leftover
  timing code that stops the host from ever running ahead.

Example
  for xb, yb in loader:
      scores = model(xb); crit(scores, yb).backward(); opt.step()
      for j in range(scores.shape[0]):
          hits += int(scores[j].argmax().item() == yb[j])   # one sync per sample

The fix
  hits += (scores.argmax(1) == yb).sum().item()            # one reduction, one sync
  Delete a stray synchronize, or run it only while profiling.

Not flagged
  One sync per step directly in the training loop (logging `loss.item()`); loops that do not
  iterate elements (a `range(...)` loop or a loop / comprehension over a tensor is needed:
  a nested loop over a loader yields batches); per-element loops that themselves backward
  (micro-batches); validation under no_grad; a synchronize behind a flag (`if profile:`) or
  run every N steps, and per-element syncs under such a guard (an image log every N steps,
  also through a loop over trackers); a synchronize in a timing region (the step loop reads a clock such as
  `time.perf_counter()`, records CUDA timing events or uses `torch.utils.benchmark`: the
  sync is needed for a correct measurement; shown as a silence); receivers not shown to be
  tensors (`buckets[k].tolist()`); a loop that backwards over a literal list of
  configurations (`for stride, ch in [(1, 32), (2, 32)]:`), a fixed set of runs rather than
  the steps of one (shown as a silence); a synchronize next to a statement that reads a
  tensor to the host anyway (`loss.item()` just before or after it: it adds no wait of its
  own; shown as a silence); per-element reads after an unconditional synchronize earlier in
  the step, in a loop that queues no device work (the queue is already empty; shown as a
  silence). Several every-step synchronize calls in one loop are reported
  once, on the last, with the others in its evidence. Lightning's and the Hugging Face
  Trainer's `training_step` count as the body of the training loop.)";

inline constexpr std::string_view kExplainTG010 = R"(Why it costs money
  A job that needs more memory than its GPU has dies with CUDA out-of-memory after it has
  waited in the queue, been scheduled, downloaded its weights and started: the GPU hours
  until then are paid for and the result is nothing. The estimate is known before the job
  is submitted.

Example
  model = AutoModelForCausalLM.from_pretrained("meta-llama/Llama-2-7b-hf")
  opt = torch.optim.AdamW(model.parameters())      # full fine-tune, fp32 AdamW states
  loader = DataLoader(corpus, batch_size=8)
  # --target-gpu rtx4090: ~221 GiB projected against 23 GiB usable

The fix
  The hint names the smallest change that fits (from `preflight estimate`): LoRA or QLoRA,
  8-bit optimizer states, gradient checkpointing, a smaller micro-batch with accumulation,
  sharding over more devices, or a larger card.

Not flagged
  Without a target GPU (`target_gpu` in configuration, `--target-gpu`, the editor's
  `targetGpu`); when the model is not a literal `from_pretrained` reference in the bundled
  catalogue (a name computed at run time, an in-house checkpoint); when the interval still
  reaches below the card's usable memory (a likely, not certain, OOM: `preflight estimate`
  shows it). The evidence lists every value read from the script and its line.
)";

inline constexpr std::string_view kExplainTG008 = R"(Why it costs money
  Without seeds every run draws different noise, augmentations and permutations, so a
  change in the result cannot be told apart from run-to-run variance, and a good run cannot
  be reproduced. Each generator has its own state: seeding torch does nothing for NumPy or
  the `random` module, so partial seeding gives the appearance of reproducibility without
  the substance (reported as a warning). A script that seeds nothing at all is reported as
  a note: the launcher often seeds for it.

Example
  torch.manual_seed(1234)
  for xb in loader:
      shift = np.random.uniform(-1, 1)       # NumPy is never seeded

The fix
  Seed every generator the run draws from at start-up:
      random.seed(s); np.random.seed(s); torch.manual_seed(s)
  or call one helper that seeds everything (`lightning.seed_everything`,
  `transformers.set_seed`, `accelerate.utils.set_seed`).

Not flagged
  Files that never call backward; files where no loop runs a backward and nothing steps (a
  `__main__` smoke test that backwards once; shown as a silence); draws in helpers the
  training code never calls; draws through an explicit `generator=`; Lightning files; a
  library module that seeds nothing, has no entry point and no loop that backwards and steps
  (the program importing it seeds); a module with no entry point whose training loop draws
  from generators that other files of the project (the run's files, or the editor's
  workspace) all seed (a project-level step: which program runs the module is not followed);
  a library seed-everything helper (a local `set_seed` is
  judged by what its body seeds). A seed handed to another project module's function before
  the draw (`data_prep(..., args.seed)`) may seed there: the finding is then a note. Bare names
  are resolved through the
  imports (`from random import randint` is the stdlib generator). `torch.cuda.manual_seed`
  alone leaves torch's CPU generator unseeded, and `np.random.default_rng()` without a seed
  seeds nothing. A draw inside a seeding call (`torch.manual_seed(random.randint(0, 2**63))`)
  only picks the seed and is not a draw of the run. Not claimed: seeding does not make CUDA
  kernels deterministic, and implicit randomness (shuffling, dropout, initialisation) is not
  counted.)";

inline constexpr std::string_view kExplainTG013 = R"(Why it costs money
  `.to(device)` / `.cuda()` on host data copies it over PCIe and waits for the copy. Batch
  transfers are necessary; copying the same loop-invariant tensor on every iteration is not.
  The three costly shapes: a tensor built on the host in the loop (`torch.arange(16)`) and
  then moved; a loop-invariant tensor moved every pass; a model moved every pass (`Module.to`
  visits every parameter and buffer each time, even when nothing moves). `.to()` returns the
  tensor itself when it already lives on the device.

Example
  for xb, yb in loader:
      w = weights.to(device)                 # identical bytes every step
      ids = torch.arange(16).to(device)      # built on the host, then copied

The fix
  Hoist the copy above the loop (`w = weights.to(device)` once), or create the tensor on
  the device directly (`torch.arange(16, device=device)`; for random draws `device=` is the
  only fix, the draw must stay in the loop). For real batches, pinned memory with
  `non_blocking=True` overlaps the copy with compute.

Not flagged
  Batch transfers (values bound by the loop, comprehension targets, lambda parameters,
  `x = x.to(device)`); host data rebuilt or modified in the loop (`torch.tensor(stats)` after
  `stats.append(...)`: new bytes each pass, shown as a silence); downloads (`.to("cpu")`);
  dtype casts; destinations that change per iteration (a loop over devices, `.cuda()` under
  `torch.cuda.device(i)`) or cannot be shown to be a device; a model moved back after a
  `.cpu()` or a move to another device in the same loop (checkpointing, a round trip to
  collect statistics elsewhere); a copy in a loop each pass of which runs a whole training
  loop (a nested one, or a routine of this file whose loop over data backwards and steps:
  once per epoch; shown as a silence); tensors created with `device=` or moved once
  before the loop; loops that run once (`for _ in range(1)`, or `n = 0` then `while n < 1:`
  ending in `n += 1`); a loop over files, whose body opens or decodes the file its own variable
  names (`Image.open(path)`, `torch.load(path)`: the disk, not the upload, is what each pass
  waits on; shown as a silence); module code whose loops make at most ten passes in all (a
  self-test: a few copies once); copies in test functions (pytest `test_*`, unittest
  methods; shown as a silence); a copy stored under the variable of an un-nested loop that
  trains nothing (`t[key] = ... .to(device)`, or `register_buffer("%s_cov" % name, ...)`: a
  table built once per key; shown as a silence);
  a model the loop changes by a method called for its effect (`net.add_head(n)`) before moving
  it; a copy behind an every-N guard with a literal N of at least 10 (`if (i + 1) % 100 == 0:`,
  a log line or sample images; shown as a silence); transfers outside loops.

Severity
  A warning. A note when the copied value is a parameter of a module's `forward`, rebound
  nowhere in it (`t.cuda()` per block): what a training script hands its model is usually on
  the device already, where `.cuda()` copies nothing, so the upload is a guess; and when an
  every-N guard's period is not fixed in the file; and when a routine's loops walk written-out
  entries, ten passes at most (`for name, net in [("", net), ("swa_", swa)]`): a few copies per
  call, and how often the routine runs is its callers' business.)";

inline constexpr std::string_view kExplainTG011 = R"(Why it costs money
  `model.eval()` is sticky: it stays in force until something calls `model.train()`. An
  epoch loop that trains, then switches to eval mode for its validation pass and never
  switches back trains every epoch after the first with dropout disabled and batch norm
  normalising with running statistics it no longer updates. Nothing crashes; the model just
  overfits or converges to a worse result, and the loss curve gives no hint why.

Example
  model.train()                      # runs once
  for epoch in range(epochs):
      for xb, yb in train_loader: ...; loss.backward(); opt.step()
      model.eval()
      for xb, yb in val_loader: ...

The fix
  for epoch in range(epochs):
      model.train()                  # at the top of every epoch
      ...
  No autofix is offered: where the call belongs depends on the loop's structure.
  It is an error when the receiver's binding shows a model (`net = Net()`, a DDP wrapper, a
  from_pretrained result); a parameter or a name that only looks like a model is a warning.

Not flagged
  The rule needs the whole visible pattern: an epoch loop that backwards (directly or in a
  local helper it calls), a validation pass in it, and an eval() there (directly or in a
  local helper such as `evaluate(model, val_loader)`) with no train() on the same module or
  a parent anywhere in the loop (again directly or in a local helper; `train(False)` is eval
  and restores nothing). Where no validation loader shows (a hold-out scored without a loop),
  a `model.train()` before the loop and an eval() after the loop's backward show the same
  thing. Freezing a submodule (`model.backbone.eval()`) while the whole model
  is never put in eval mode is deliberate and not flagged, and so is a training helper that
  itself switches the model to eval before its own backward, with no validation pass in it
  (a linear probe on frozen features trains in eval mode on purpose; shown as a silence).
  LightningModule methods are not
  checked (the trainer switches modes). A training or evaluation helper imported from
  another module is not analysed; the rule does not guess what it does.)";

inline constexpr std::string_view kExplainTG014 = R"(Why it costs money
  Gradients from successive backward passes are summed into `.grad`. With accumulation, N
  backward passes feed one optimizer step, so unless each loss is divided by N the step
  applies N times the average gradient: an N-fold learning rate in disguise. It looks like a
  badly tuned learning rate (instability, divergence, a worse final model), and changing the
  accumulation count silently changes the effective learning rate too.

Severity follows the optimizer
  An error when the stepped optimizer is bound here to SGD (its step is proportional to the
  gradient). A note when it is bound to an optimizer that divides its update by the
  gradient's own magnitude (Adam, AdamW, RMSprop, Adagrad, Lion, ...): the sum then changes
  the step only through eps and weight decay; a warning when that loop also clips gradients
  (the clipping threshold sees the sum). A warning when the class is not visible (a
  parameter, a table lookup, Adam on one path and SGD on another); the evidence says why.

Example
  for i, (xb, yb) in enumerate(loader):
      loss = criterion(model(xb), yb)
      loss.backward()
      if (i + 1) % accum == 0:
          opt.step(); opt.zero_grad()

The fix
  (loss / accum).backward()          # or `loss = loss / accum` before backward
  This assumes the loss uses the default mean reduction; with `reduction="sum"` normalise by
  the number of samples or tokens instead. The fix is offered as unsafe (applied only by
  --fix --unsafe-fixes): it changes the effective learning rate a tuned run may depend on.

Not flagged
  Any visible scaling of the value that reaches backward, followed through reassignments,
  in-place ops and local helpers' returns (a method several classes override: every
  override that returns a value): `/ N`, `/ float(N)`, `.div(N)`, `* (1 / N)`,
  `* inv` with `inv = 1 / N`, and divisions by a value the rule cannot relate to N (such as
  a `loss_scale` variable). Gradients rescaled before the step (`scale_grads_` or an alias
  of it, `p.grad /= N`). Loops that clear gradients every iteration (nothing accumulates),
  or clear them under the step's own test just before the backward (each step applies one
  iteration's gradient; the others are wasted, not summed),
  modulo guards around something other than an optimizer step, and `% 1`. Frameworks that
  divide internally, where dividing again would be the mirror bug: Accelerate
  (`accelerator.backward`), Fabric, DeepSpeed engines, Lightning (LightningModule methods,
  strategies) and subclasses of the Hugging Face Trainer, recognised from code and
  bindings, never from comments.)";

}  // namespace preflight::rules
