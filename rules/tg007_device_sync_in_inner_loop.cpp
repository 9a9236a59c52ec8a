// TG007 device-sync-in-inner-loop: a host-device synchronisation inside the training step,
// either `cuda.synchronize()` on every step or `.item()` / `.cpu()` / `.numpy()` /
// `.tolist()` once per element, so the kernel queue drains again and again.
//
// Evidence chain: the sync call -> why its receiver is a device tensor (a tensor-shaped call
// such as `.argmax()`, a value the provenance shows carries a graph, a model, an element of
// a tensor being iterated, or — as a last resort — a tensor-like name) -> the per-element
// iteration that encloses it: a `range(...)` loop, or a loop / comprehension over a tensor
// (`for p in preds`, `enumerate(preds)`, TG007-N06) -> the training loop around it (a loop
// whose own body backwards, not one that merely wraps the training loop, or a Lightning /
// HF Trainer `training_step`).
// Exempt: one sync per step directly in the training loop (the logging idiom); loops over
// anything else (taken to yield batches, TG007-N02), and over a value provenance types as
// something other than one tensor (a model's tuple of losses, TG007-NX20); per-element loops that themselves
// backward (micro-batches); code under no_grad (validation); a synchronize guarded by a
// plain flag or run every N steps (`if profile:`, `if step % k == 0`: timing code,
// TG007-P05), and per-element syncs under such a guard (a log line every N steps, TG007-NX26,
// also across a loop between the guard and the sync that is not the training step, NX29); a loop over a literal list (`for cfg in [(1, 32), (2, 64)]:`), a fixed set of
// configurations rather than the steps of a run (TG007-NX21). Silent, with the reason recorded: a synchronize in a timing region, the
// training-step loop (or a loop inside it) that reads a clock bound through the imports
// (`time.perf_counter()`, `time.time()`, `timeit`), creates / records / reads a CUDA timing
// event, or measures with `torch.utils.benchmark`: there the sync is what makes the timing
// true. A clock read only around the whole loop does not make the per-step sync needed.
// A loop that reads the CUDA allocator's statistics measures memory: silent too (TG007-NX24).
// Also silent, with the reason recorded: a loop that backwards in a routine that never steps
// an optimizer (no call whose leaf ends in `step`): it measures gradients or their time, it
// does not train (TG007-NX22). Silent too: the action of an environment rollout,
// `obs, reward, done, info = envs.step(action.cpu().numpy())`, a step unpacked into three or
// more values whose receiver is neither an optimizer nor a scheduler: the host runs the
// environment and needs the value every pass (TG007-NX25). Silent too: a synchronize whose
// neighbouring statement reads a tensor to the host (`loss.item()`), which waits anyway
// (TG007-NX27); and all but the last of several every-step synchronize calls in one loop,
// whose finding names the others (TG007-NX28); and a synchronize a few statements after an
// unconditional host read of a tensor, with no backward, optimizer step or loop between
// (TG007-NX33): the step already waits there. Silent too: per-element reads after an
// unconditional synchronize earlier in the step, in a loop that queues no device work (only
// the reads and host builtins): the queue is already empty (TG007-NX30).
// Silent too: per-element reads of a batch straight from torch's DataLoader, not rebound since
// the loop over the loader bound it: the loader collates in host memory, so nothing waits
// (TG007-NX31; the loader's collate function, read through its `collate_fn=` binding, or a
// dataset `__getitem__` of the file that moves tensors to a device voids it, PX31; a collate
// function of another file is trusted to stay on the host).
// Silent too: a value stored in a log record under a name (`log[f"head_{i}"] = x.item()`, a
// dict comprehension with string keys, `for k in totals: totals[k] += out[k].item()`): one read
// per metric the step logs, the logging idiom, not one per element of data (TG007-NX32). How
// many metrics there are is not read (a design judgement: per-element reads of a batch stored
// under names were not seen in real code).
#include <algorithm>
#include <unordered_map>

#include "analysis/local_calls.h"
#include "analysis/names.h"
#include "analysis/reaching.h"
#include "analysis/torch_facts.h"
#include "rules/rule.h"
#include "rules/timing.h"

namespace preflight::rules {
namespace {

using namespace preflight::analysis;

constexpr std::string_view kSyncMethods[] = {"item", "cpu", "numpy", "tolist"};
constexpr std::string_view kTensorChain[] = {"detach", "clone",  "float", "half", "squeeze", "view", "reshape",
                                             "argmax", "sum",    "mean",  "softmax", "sigmoid", "max", "min"};
constexpr std::string_view kTensorish[] = {"pred", "logit", "output", "out", "target", "label", "score", "prob", "loss"};

template <size_t N>
bool in(const std::string_view (&list)[N], std::string_view s) {
  for (auto x : list)
    if (x == s) return true;
  return false;
}

using names::last_segment;

// The per-element construct around a sync: a loop, or a comprehension's `for ... in`.
struct Iteration {
  TSNode node{};      // for_statement or the comprehension
  TSNode iterable{};  // what it iterates
  TSNode target{};    // the names it binds
  bool comprehension = false;
};

struct Checker final : RuleCheck {
  const RuleContext& ctx;
  const Kinds& k = kinds();
  std::vector<Finding> out;
  std::unordered_map<const void*, TSNode> backward_in;       // loop -> its first backward call
  std::unordered_map<const void*, TSNode> step_backward_in;  // loop -> a backward directly in it
  std::unordered_map<const void*, TSNode> step_in;           // routine -> its first optimizer step
  // host_batch read the file's `__getitem__` methods: an edit to one may turn a silence into a
  // finding in a unit that does not name the dataset class (context facts). The collate
  // function is read through the loader's `collate_fn=` binding, which the units name.
  mutable bool read_getitems = false;

  void context(std::vector<ContextFact>& facts) const override {
    if (!read_getitems) return;
    for (const FunctionInfo& fn : ctx.model.functions())
      if (fn.name == "__getitem__") note_context(facts, "TG007 __getitem__", fn.node);
  }

  explicit Checker(const RuleContext& c) : ctx(c) {}

  void finish(std::vector<Finding>& sink) override {
    for (Finding& f : out) sink.push_back(std::move(f));
  }

  TSNode find_backward(TSNode n) const {
    if (is(n, k.call) && ctx.model.callee_leaf(n) == "backward") return n;
    TSNode found{};
    for_each_named_child(n, [&](TSNode c) {
      if (is_null(found)) found = find_backward(c);
    });
    return found;
  }

  TSNode backward_of(TSNode loop) {
    auto [it, fresh] = backward_in.try_emplace(node_id(loop));
    if (fresh) it->second = find_backward(loop);
    return it->second;
  }

  // A backward whose innermost loop is `n`'s loop: that loop runs once per training step.
  // A loop that only wraps the training loop (benchmark stages, epochs) is not the step.
  TSNode direct_backward(TSNode n, bool top) const {
    if (!top && (is(n, k.for_statement) || is(n, k.while_statement) || is(n, k.function_definition)))
      return TSNode{};
    if (is(n, k.call) && ctx.model.callee_leaf(n) == "backward") return n;
    TSNode found{};
    for_each_named_child(n, [&](TSNode c) {
      if (is_null(found)) found = direct_backward(c, false);
    });
    return found;
  }

  TSNode step_backward_of(TSNode loop) {
    auto [it, fresh] = step_backward_in.try_emplace(node_id(loop));
    if (fresh) it->second = direct_backward(loop, true);
    return it->second;
  }

  // A framework hook that *is* the body of the training loop: Lightning's `training_step`,
  // or `training_step` / `compute_loss` of a Hugging Face `Trainer` subclass.
  TSNode training_hook(int scope) const {
    int f = ctx.model.enclosing_function(scope);
    if (f < 0) return TSNode{};
    const FunctionInfo& fn = ctx.model.functions()[f];
    if (fn.class_index < 0) return TSNode{};
    const ClassInfo& cls = ctx.model.classes()[fn.class_index];
    if (cls.is_lightning && fn.name == "training_step") return field(fn.node, k.f_name);
    for (const std::string& b : cls.bases)
      if (last_segment(b).ends_with("Trainer") && (fn.name == "training_step" || fn.name == "compute_loss"))
        return field(fn.node, k.f_name);
    return TSNode{};
  }

  // The backward (or hook) that makes this the training step, looking at loops [0, upto).
  // A loop over a literal list (`for stride, ch in [(1, 32), (2, 32)]:`) walks a fixed set of
  // configurations, each its own experiment: a backward there is not a training step
  // (TG007-NX21, round 10: apex's bottleneck test); `over_configs` gets that loop.
  // A backward in a routine that never steps an optimizer computes gradients to measure
  // them (a forward/backward timing benchmark, saliency): not a training step (TG007-NX22,
  // round 12: pycls' benchmark); `measuring` gets that backward.
  TSNode training_anchor(const WalkState& st, size_t upto, TSNode* over_configs = nullptr,
                         TSNode* measuring = nullptr) {
    for (size_t i = 0; i < upto && i < st.loops.size(); ++i) {
      TSNode b = step_backward_of(st.loops[i].node);
      if (is_null(b)) continue;
      if (walks_literal_list(st.loops[i])) {
        if (over_configs) *over_configs = st.loops[i].node;
        continue;
      }
      if (!is_null(find_step(stepping_region(st)))) return b;
      if (measuring) *measuring = b;
    }
    return training_hook(st.scope);
  }

  // Where an optimizer step would be: the enclosing routine, or the outermost loop of
  // top-level code.
  TSNode stepping_region(const WalkState& st) const {
    int f = ctx.model.enclosing_function(st.scope);
    if (f >= 0) return ctx.model.functions()[f].node;
    return st.loops.empty() ? TSNode{} : st.loops.front().node;
  }

  // A call whose leaf ends in `step` (`optimizer.step()`, `scaler.step(opt)`, `engine.step()`,
  // `self.optimizer_step()`), memoised per region.
  TSNode find_step(TSNode region) {
    if (is_null(region)) return TSNode{};
    auto [it, fresh] = step_in.try_emplace(node_id(region));
    if (fresh) it->second = first_step_call(region);
    return it->second;
  }

  TSNode first_step_call(TSNode n) const {
    if (is(n, k.call) && ctx.model.callee_leaf(n).ends_with("step")) return n;
    TSNode found{};
    for (TSNode c : named_children(n))
      if (is_null(found)) found = first_step_call(c);
    return found;
  }

  bool walks_literal_list(const LoopFrame& loop) const {
    TSNode it = unparenthesize(loop.iterable);
    return !is_null(it) && (is(it, k.list) || is(it, k.tuple) || is(it, k.set));
  }

  void enter(TSNode n, const WalkState& st) override {
    if (!is(n, k.call) || ctx.provenance.in_no_grad(n)) return;
    TSNode callee = ctx.model.callee_of(n);
    if (is_synchronize(n)) return on_synchronize(n, st);
    if (!is(callee, k.attribute) || !in(kSyncMethods, text_of(field(callee, k.f_attribute), ctx.source))) return;
    on_sync_method(n, st);
  }

  void on_synchronize(TSNode call, const WalkState& st) {
    TSNode configs{}, measuring{};
    TSNode train = training_anchor(st, st.loops.size(), &configs, &measuring);
    if (is_null(train) && !is_null(configs) && !guarded_as_timing(call))
      stay_silent("TG007", call,
                  "loop over configurations: the loop that backwards walks a literal list, a fixed set of "
                  "runs, not the steps of one training run",
                  {{range_of(field(configs, k.f_right)), "the literal list the loop walks"}});
    if (is_null(train) && !is_null(measuring))
      stay_silent("TG007", call,
                  "no optimizer step: the loop backwards but its routine never steps an optimizer, so it "
                  "measures gradients (a benchmark, a saliency map) rather than training",
                  {{range_of(measuring), quote_code(text_of(measuring, ctx.source)) + " is the loop's backward"}});
    if (is_null(train) || guarded_as_timing(call)) return;
    std::string clock_why;
    if (TSNode clock = timing_region(st, clock_why); !is_null(clock)) {
      stay_silent("TG007", call,
                  "timing region: " + clock_why +
                      ", and a sync there is what makes the measured time include the queued GPU work",
                  {{range_of(clock), quote_code(text_of(clock, ctx.source)) + " reads a clock in the timed loop"},
                   {range_of(train), quote_code(text_of(train, ctx.source)) + " is the step being timed"}});
      return;
    }
    if (TSNode reading = memory_reading(train, st); !is_null(reading)) {
      stay_silent("TG007", call,
                  "memory measurement: the loop reads the CUDA allocator's statistics, and the sync fences "
                  "each measured phase",
                  {{range_of(reading), quote_code(text_of(reading, ctx.source)) + " reads device memory in the loop"}});
      return;
    }
    if (TSNode read = adjacent_blocking_read(call); !is_null(read)) {
      stay_silent("TG007", call,
                  "the statement next to it reads a tensor to the host, which waits for the same queued "
                  "work: this synchronize adds no stall of its own",
                  {{range_of(read), quote_code(text_of(read, ctx.source)) + " blocks on the device here anyway"}});
      return;
    }
    if (TSNode read = earlier_blocking_read(call); !is_null(read)) {
      stay_silent("TG007", call,
                  "the step already waits for the device: a tensor is read to the host a few statements "
                  "earlier, with no backward or optimizer step between, so this synchronize waits only for "
                  "what was queued since",
                  {{range_of(read), quote_code(text_of(read, ctx.source)) + " blocks on the device earlier in the step"}});
      return;
    }
    std::vector<TSNode> earlier, later;
    for (TSNode c : step_synchronizes(st))
      if (!ts_node_eq(c, call)) (ts_node_start_byte(c) < ts_node_start_byte(call) ? earlier : later).push_back(c);
    if (!later.empty()) {
      stay_silent("TG007", call,
                  "the step synchronizes again later, so it is reported once, there; by the time the next "
                  "step reaches this one the device has already been drained",
                  {{range_of(later.front()), quote_code(text_of(later.front(), ctx.source)) + " also waits on every step"}});
      return;
    }
    Finding f = base_finding(call);
    f.message = quote_code(text_of(call, ctx.source)) +
                " runs on every training step: the host waits for the device to finish all queued work, so "
                "it can never run ahead and the GPU idles while the next step is prepared.";
    f.hint = "Delete it, or run it only while timing (behind a profiling flag).";
    add_training_step(f, train);
    for (TSNode c : earlier)
      f.evidence.push_back({range_of(c), quote_code(text_of(c, ctx.source)) +
                                             " waits in the same step too (reported here, once)"});
    out.push_back(std::move(f));
  }

  bool is_synchronize(TSNode c) const {
    auto q = ctx.model.qualified_callee(c);
    return q && (q->ends_with("cuda.synchronize") || *q == "cuda.synchronize");
  }

  // Every-step synchronize calls of the innermost loop (round 27: k-diffusion brackets each
  // step's CUDA-event timing with one at the start and one at the end), in source order.
  std::vector<TSNode> step_synchronizes(const WalkState& st) const {
    std::vector<TSNode> syncs;
    if (st.loops.empty()) return syncs;
    ctx.model.for_each_call_in(st.loops.back().node, [&](TSNode c) {
      if (is_synchronize(c) && !guarded_as_timing(c) && !ctx.provenance.in_no_grad(c)) syncs.push_back(c);
    });
    return syncs;
  }

  // `torch.cuda.synchronize()` as a statement whose neighbour (the statement just before or
  // just after, in the same block, unconditional) reads a tensor to the host: `.item()`,
  // `.tolist()`, `.cpu()`, `.numpy()` (round 27: iBOT's `torch.cuda.synchronize()` followed
  // by `metric_logger.update(loss=loss.item())`). Returns that read, or null.
  TSNode adjacent_blocking_read(TSNode call) const {
    TSNode stmt = ctx.model.parent(call);
    if (!is(stmt, k.expression_statement)) return TSNode{};
    auto skip_comments = [&](TSNode n, bool forward) {
      while (!is_null(n) && is(n, k.comment)) n = forward ? ts_node_next_named_sibling(n) : ts_node_prev_named_sibling(n);
      return n;
    };
    for (TSNode next : {skip_comments(ts_node_next_named_sibling(stmt), true),
                        skip_comments(ts_node_prev_named_sibling(stmt), false)}) {
      if (is_null(next) || (!is(next, k.expression_statement) && !is(next, k.return_statement))) continue;
      if (TSNode read = host_read_in(next); !is_null(read)) return read;
    }
    return TSNode{};
  }

  // The first `.item()` / `.tolist()` / `.cpu()` / `.numpy()` call in `stmt` (no argument:
  // `.cpu(x)` is not a tensor read), or null.
  TSNode host_read_in(TSNode stmt) const {
    TSNode read{};
    ctx.model.for_each_call_in(stmt, [&](TSNode c) {
      TSNode callee = field(c, k.f_function);
      if (is_null(read) && is(callee, k.attribute) &&
          in(kSyncMethods, text_of(field(callee, k.f_attribute), ctx.source)) && is_null(positional_arg(c, 0)))
        read = c;
    });
    return read;
  }

  bool holds_loop(TSNode n) const {
    if (is(n, k.for_statement) || is(n, k.while_statement)) return true;
    bool found = false;
    for_each_named_child(n, [&](TSNode c) { found = found || holds_loop(c); });
    return found;
  }

  // `loss_meter.update(loss.item()); acc_meter.update(acc); torch.cuda.synchronize()` (round 96:
  // TransReID, and Equiformer with an EMA update between): an unconditional host read of a
  // tensor at most four statements before the synchronize in its block, with no backward, no
  // optimizer step and no loop between (an `if` between may hold neither). TG007-NX33.
  TSNode earlier_blocking_read(TSNode call) const {
    TSNode stmt = ctx.model.parent(call);
    if (!is(stmt, k.expression_statement)) return TSNode{};
    int seen = 0;
    for (TSNode s = ts_node_prev_named_sibling(stmt); !is_null(s) && seen < 4; s = ts_node_prev_named_sibling(s)) {
      if (is(s, k.comment)) continue;
      ++seen;
      bool trains = false;
      ctx.model.for_each_call_in(s, [&](TSNode c) {
        std::string_view leaf = ctx.model.callee_leaf(c);
        trains = trains || leaf == "backward" || leaf == "step";
      });
      if (trains) return TSNode{};
      if (is(s, k.if_statement)) {
        if (holds_loop(s)) return TSNode{};
        continue;  // conditional: not a read the step always makes
      }
      if (!is(s, k.expression_statement)) return TSNode{};
      if (TSNode read = host_read_in(s); !is_null(read)) return read;
    }
    return TSNode{};
  }

  // The loop being timed: the training-step loop (the outermost loop whose own body
  // backwards) or a loop inside it, where a clock is read per step (`time.perf_counter()`,
  // `time.time()`, `timeit`, bound through the imports), a CUDA timing event is created,
  // recorded or read, or `torch.utils.benchmark` measures. Returns the call that shows it.
  bool counts_steps(const LoopFrame& loop) const {
    if (is(loop.node, k.while_statement)) return true;
    TSNode it = unparenthesize(loop.iterable);
    if (!is(it, k.call)) return false;
    std::string_view leaf = ctx.model.callee_leaf(it);
    return leaf == "range" || leaf == "count" || leaf == "repeat";
  }

  TSNode timing_region(const WalkState& st, std::string& why) {
    size_t first = st.loops.size();
    for (size_t i = 0; i < st.loops.size(); ++i)
      if (!is_null(step_backward_of(st.loops[i].node))) {
        first = i;
        break;
      }
    // A benchmark times a fixed number of steps (`for _ in range(iters)`); a training run that
    // iterates a loader and reads a clock for its logs (`batch_time.update(time.time() - end)`)
    // is still a training run, and a per-step sync still stalls it.
    if (first < st.loops.size() && !counts_steps(st.loops[first])) return TSNode{};
    std::vector<TSNode> regions;
    for (size_t i = first; i < st.loops.size(); ++i) regions.push_back(st.loops[i].node);
    if (regions.empty()) {  // a framework's training_step: its body is the step
      int f = ctx.model.enclosing_function(st.scope);
      if (f >= 0) regions.push_back(ctx.model.functions()[f].node);
    }
    for (TSNode region : regions) {
      TSNode found{};
      ctx.model.for_each_call_in(region, [&](TSNode c) {
        if (is_null(found) && is_timing_call(ctx.model, c, st.scope, ctx.source, why)) found = c;
      });
      if (!is_null(found)) return found;
    }
    return TSNode{};
  }

  // A call of the CUDA allocator's statistics (`torch.cuda.max_memory_allocated()`,
  // `reset_peak_memory_stats()`) in the loop whose backward makes `train` the step: the loop
  // measures memory phase by phase, and a synchronize there fences the phases (TG007-NX24,
  // round 13: Transformer Engine's backward-override memory report).
  TSNode memory_reading(TSNode train, const WalkState& st) const {
    TSNode region{};
    for (const LoopFrame& l : st.loops)
      if (ts_node_start_byte(train) >= ts_node_start_byte(l.node) && ts_node_end_byte(train) <= ts_node_end_byte(l.node))
        region = l.node;  // the innermost loop holding the step's backward
    if (is_null(region)) return TSNode{};
    TSNode found{};
    ctx.model.for_each_call_in(region, [&](TSNode c) {
      if (!is_null(found)) return;
      if (!is_memory_stat_read(ctx.model, c)) return;
      // Read on every pass, not logged now and then (`if step % 100 == 0:` keeps it a training loop).
      for (TSNode p = ctx.model.parent(c); !ts_node_eq(p, region); p = ctx.model.parent(p))
        if (is(p, k.if_statement) || is_null(p)) return;
      found = c;
    });
    return found;
  }

  // `if profile:` / `if not args.fast:` / `if step % k == 0:` between the call and its loop.
  // With `train` given (per-element syncs), loops between the call and the training step
  // are crossed (`for tracker in accelerator.trackers:` under `if step % k == 1:`, round 30:
  // an image-translation trainer's wandb image log); the step's own loop is not.
  bool guarded_as_timing(TSNode call, TSNode train = TSNode{}) const {
    for (TSNode p = ctx.model.parent(call); !is_null(p); p = ctx.model.parent(p)) {
      TSSymbol s = sym(p);
      if (s == k.function_definition) return false;
      if (s == k.for_statement || s == k.while_statement) {
        if (is_null(train) || encloses(p, train)) return false;
        continue;
      }
      if (s != k.if_statement && s != k.elif_clause) continue;
      TSNode test = unparenthesize(field(p, k.f_condition));
      if (is(test, k.not_operator)) test = unparenthesize(ts_node_named_child(test, 0));
      if (dotted_name(test, ctx.source) || has_modulo(test)) return true;
    }
    return false;
  }

  bool has_modulo(TSNode e) const {
    if (is(e, k.binary_operator) && text_of(field(e, k.f_operator), ctx.source) == "%") return true;
    bool found = false;
    for_each_named_child(e, [&](TSNode c) { found = found || has_modulo(c); });
    return found;
  }

  void on_sync_method(TSNode call, const WalkState& st) {
    auto it = per_element_iteration(call, st);
    if (!it) return;
    // A log line printed every N steps (`if step % 100 == 0:`) or behind a flag reads its
    // values once per N steps, not once per step (round 23: a GAN inversion's progress print).
    TSNode train = it->comprehension ? training_anchor(st, st.loops.size()) : training_anchor(st, st.loops.size() - 1);
    if (is_null(train) || guarded_as_timing(call, train)) return;
    TSNode recv = unparenthesize(field(field(call, k.f_function), k.f_object));
    std::string why = device_tensor_reason(recv, *it, st.scope);
    if (why.empty()) return;
    if (auto batch = host_batch(it->iterable, st.scope))
      return stay_silent("TG007", call,
                         "host memory: " + quote_code(text_of(it->iterable, ctx.source)) +
                             " is a batch straight from torch's DataLoader, not yet moved to a device, so "
                             "reading its elements waits for nothing",
                         {{range_of(batch->loop_target), quote_code(text_of(batch->loop_target, ctx.source)) +
                                                             " binds the batches of " +
                                                             quote_code(text_of(batch->loader, ctx.source))}});
    if (TSNode drained = synchronized_before(it->node, train); !is_null(drained) && launches_nothing(it->node))
      return stay_silent("TG007", call,
                         "the queue is already empty: the step synchronises the device before this loop, and the "
                         "loop launches no device work between its reads",
                         {{range_of(drained), quote_code(text_of(drained, ctx.source)) +
                                                  " waits for every queued kernel earlier in the same step"}});
    if (TSNode key = log_record_key(call); !is_null(key))
      return stay_silent("TG007", call,
                         "a log record: the value is stored under the name " + quote_code(text_of(key, ctx.source)) +
                             ", one read per named metric of the step (the logging idiom), not per element of data",
                         {{range_of(key), quote_code(text_of(key, ctx.source)) + " names the entry the value is logged under"}});
    if (TSNode env_step = environment_step_taking(call, st.scope); !is_null(env_step))
      return stay_silent("TG007", call,
                         "an environment rollout: the value is the action handed to the environment's `step()`, "
                         "which runs on the host, so it must reach the host on every pass",
                         {{range_of(env_step), quote_code(text_of(env_step, ctx.source)) +
                                                   " takes the host value and returns observation, reward and done, as an environment does"}});
    std::string m(text_of(field(field(call, k.f_function), k.f_attribute), ctx.source));
    auto d = dotted_name(recv, ctx.source);
    Finding f = base_finding(call);
    f.message = (d ? "`" + *d + "." + m + "()`" : "`." + m + "()`") +
                " forces a host-device synchronisation in a loop nested inside the training step, so the "
                "kernel queue empties for every element instead of once per step.";
    f.hint = "Compute the aggregate as one tensor operation and read it back once, for example "
             "`.sum().item()` over an element-wise comparison.";
    f.evidence.push_back({range_of(recv), why});
    f.evidence.push_back({range_of(it->iterable), quote_code(text_of(it->iterable, ctx.source)) +
                                                      " is iterated element by element"});
    add_training_step(f, train);
    out.push_back(std::move(f));
  }

  // An unconditional `torch.cuda.synchronize()` statement before the per-element loop, in the
  // same block or a block around it inside the training step (round 38: lingua's AU-Net logs
  // its per-level token counts with `.item()` after the step's synchronize). Null when none.
  TSNode synchronized_before(TSNode loop, TSNode train) const {
    for (TSNode n = loop, p = ctx.model.parent(loop); !is_null(p); n = p, p = ctx.model.parent(p)) {
      if (is(p, k.block))
        for (TSNode s = ts_node_prev_named_sibling(n); !is_null(s); s = ts_node_prev_named_sibling(s)) {
          TSNode e = is(s, k.expression_statement) ? unparenthesize(ts_node_named_child(s, 0)) : TSNode{};
          if (is(e, k.call) && is_synchronize(e)) return e;
        }
      if (is(p, k.function_definition) || is(p, k.lambda)) break;
      if ((is(p, k.for_statement) || is(p, k.while_statement)) && encloses(p, train)) break;
    }
    return TSNode{};
  }

  // The per-element loop calls nothing that could queue device work: only the host reads
  // themselves and host builtins. After the first read drains the queue, the rest find it empty.
  bool launches_nothing(TSNode loop) const {
    static constexpr std::string_view kHost[] = {"item", "tolist", "cpu",  "numpy", "float", "int",  "str",
                                                 "len",  "round",  "print", "append", "format", "bool", "range"};
    bool only_host = true;
    ctx.model.for_each_call_in(loop, [&](TSNode c) {
      if (only_host && !in(kHost, ctx.model.callee_leaf(c))) only_host = false;
    });
    return only_host;
  }

  // `log[f"head_{i}"] = t[i].mean().item()`, `{"loss_%d" % i: l.item() for ...}`, `for k in
  // totals: totals[k] += out[k].item()` (round 93: GANgealing logs one scalar per cluster head;
  // round 90: PPUU and CiiV one per named loss term): the synced value, through host
  // conversions and arithmetic, is stored in a mapping under a name (a string key, or the key
  // of a loop over that same mapping). That is the step's log record, one read per metric it
  // names, not per element of a batch (TG007-NX32). Returns the key, or null.
  TSNode log_record_key(TSNode sync) const {
    TSNode v = sync;
    for (TSNode p = ctx.model.parent(v); !is_null(p); v = p, p = ctx.model.parent(p)) {
      TSSymbol s = sym(p);
      if (s == k.binary_operator || s == k.unary_operator || s == k.parenthesized_expression) continue;
      if (s == k.attribute || (s == k.call && ts_node_eq(field(p, k.f_function), v))) continue;  // `.item()` on it
      if (s == k.argument_list) {  // float(x.item()), round(x.item(), 4)
        std::string_view leaf = ctx.model.callee_leaf(ctx.model.parent(p));
        if (leaf != "float" && leaf != "int" && leaf != "round") return TSNode{};
        v = p = ctx.model.parent(p);  // on from the conversion's call
        continue;
      }
      if (s == k.pair && ts_node_eq(field(p, k.f_value), v)) {
        TSNode key = ts_node_named_child(p, 0);
        return names_an_entry(key) ? key : TSNode{};
      }
      if ((s == k.assignment || s == k.augmented_assignment) && ts_node_eq(field(p, k.f_right), v)) {
        TSNode left = unparenthesize(field(p, k.f_left));
        if (!is(left, k.subscript)) return TSNode{};
        TSNode key = unparenthesize(field(left, k.f_subscript));
        if (names_an_entry(key) || iterates_its_keys(key, unparenthesize(field(left, k.f_value)))) return key;
      }
      return TSNode{};
    }
    return TSNode{};
  }

  // A string, an f-string, `"a" "b"`, `"x_{}".format(i)`, `"x_%d" % i`, `"x_" + str(i)`.
  bool names_an_entry(TSNode key) const {
    key = unparenthesize(key);
    if (is(key, k.string) || is(key, k.concatenated_string)) return true;
    if (is(key, k.binary_operator)) return names_an_entry(field(key, k.f_left));
    if (is(key, k.call) && ctx.model.callee_leaf(key) == "format") {
      TSNode callee = field(key, k.f_function);
      return is(callee, k.attribute) && names_an_entry(field(callee, k.f_object));
    }
    return false;
  }

  // `for name in totals: totals[name] ...` (or `totals.keys()`): the key walks the mapping's own keys.
  bool iterates_its_keys(TSNode key, TSNode mapping) const {
    if (!is(key, k.identifier)) return false;
    auto holder = dotted_name(mapping, ctx.source);
    if (!holder) return false;
    std::string name(text_of(key, ctx.source));
    for (TSNode p = ctx.model.parent(key); !is_null(p); p = ctx.model.parent(p)) {
      if (is(p, k.function_definition) || is(p, k.lambda) || is(p, k.class_definition)) break;
      if (!is(p, k.for_statement) || !binds(field(p, k.f_left), name) || !is(field(p, k.f_left), k.identifier)) continue;
      TSNode it = unparenthesize(field(p, k.f_right));
      if (is(it, k.call) && ctx.model.callee_leaf(it) == "keys" && is(field(it, k.f_function), k.attribute))
        it = field(field(it, k.f_function), k.f_object);
      auto iterated = dotted_name(it, ctx.source);
      return iterated && *iterated == *holder;
    }
    return false;
  }

  // `obs, reward, done, info = envs.step(action.cpu().numpy())` (round 19: an A2C rollout):
  // the synced value, through further host conversions and indexing, is an argument of a
  // `R.step(...)` whose result is unpacked into three or more names (Gym's API) and whose
  // receiver is bound to neither an optimizer nor a scheduler. Returns that call, or null.
  TSNode environment_step_taking(TSNode sync, int scope) const {
    TSNode v = sync;
    for (TSNode p = ctx.model.parent(v); !is_null(p); v = p, p = ctx.model.parent(p)) {
      TSSymbol s = sym(p);
      if (s == k.attribute || s == k.subscript || s == k.parenthesized_expression) continue;
      if (s == k.call && ts_node_eq(field(p, k.f_function), v)) continue;  // `.numpy()` on it
      if (s == k.keyword_argument) continue;
      if (s != k.argument_list) return TSNode{};
      TSNode consumer = ctx.model.parent(p);
      TSNode callee = field(consumer, k.f_function);
      if (ctx.model.callee_leaf(consumer) != "step" || !is(callee, k.attribute)) return TSNode{};
      auto recv = dotted_name(field(callee, k.f_object), ctx.source);
      if (!recv) return TSNode{};
      if (ctx.model.kind_of(*recv, scope) == ValueKind::Scheduler || ctx.model.is_optimizer(*recv, scope))
        return TSNode{};
      // Gym's shape: `obs, reward, done, info = env.step(a)`; an optimizer's or a scheduler's
      // step returns at most one value.
      TSNode assignment = ctx.model.parent(consumer);
      if (!is(assignment, k.assignment) || !ts_node_eq(field(assignment, k.f_right), consumer)) return TSNode{};
      TSNode left = field(assignment, k.f_left);
      if ((!is(left, k.pattern_list) && !is(left, k.tuple_pattern)) || ts_node_named_child_count(left) < 3)
        return TSNode{};
      return consumer;
    }
    return TSNode{};
  }

  // Innermost comprehension around the call (up to its loop), else the innermost loop when
  // it iterates per element and does not itself backward.
  std::optional<Iteration> per_element_iteration(TSNode call, const WalkState& st) {
    for (TSNode p = ctx.model.parent(call); !is_null(p); p = ctx.model.parent(p)) {
      TSSymbol s = sym(p);
      if (s == k.for_statement || s == k.while_statement || s == k.function_definition || s == k.lambda) break;
      if (s != k.list_comprehension && s != k.set_comprehension && s != k.dictionary_comprehension &&
          s != k.generator_expression)
        continue;
      TSNode clause{};
      for_each_named_child(p, [&](TSNode c) {
        if (is(c, k.for_in_clause)) clause = c;
      });
      if (is_null(clause)) return std::nullopt;
      Iteration it{p, field(clause, k.f_right), field(clause, k.f_left), true};
      if (!per_element(it.iterable, st.scope)) return std::nullopt;
      return it;
    }
    const LoopFrame* loop = st.innermost_loop();
    if (!loop || !is(loop->node, k.for_statement) || !is_null(backward_of(loop->node))) return std::nullopt;
    Iteration it{loop->node, field(loop->node, k.f_right), field(loop->node, k.f_left), false};
    if (!per_element(it.iterable, st.scope)) return std::nullopt;
    return it;
  }

  // `for images, targets in loader: ... [t.tolist() for t in targets]` (round 56: a detection
  // trainer turns its labels into lists before it builds the targets it uploads): the iterated
  // name is bound by the target of an enclosing loop over torch's DataLoader (through
  // enumerate / tqdm / zip, a name bound to one, or a function of this file returning one)
  // and not rebound before this statement. The loader collates in host memory; a collate_fn
  // of this file or a dataset `__getitem__` that moves tensors to a device voids that.
  struct HostBatch {
    TSNode loop_target;
    TSNode loader;
  };
  std::optional<HostBatch> host_batch(TSNode iterable, int scope) const {
    TSNode bare = unparenthesize(iterable);
    if (!is(bare, k.identifier) || getitem_moves_to_device()) return std::nullopt;
    std::string name(text_of(bare, ctx.source));
    TSNode stmt = bare;
    while (!is_null(ctx.model.parent(stmt)) && !is(ctx.model.parent(stmt), k.block)) stmt = ctx.model.parent(stmt);
    for (TSNode p = ctx.model.parent(bare); !is_null(p); p = ctx.model.parent(p)) {
      if (is(p, k.function_definition) || is(p, k.lambda) || is(p, k.class_definition)) break;
      if (!is(p, k.for_statement) || !binds(field(p, k.f_left), name)) continue;
      if (!is_null(last_assignment(name, field(p, k.f_body), ts_node_start_byte(stmt), ctx.source)))
        return std::nullopt;
      for (TSNode it : unwrap_iterables(field(p, k.f_right), ctx.source))
        if (yields_torch_batches(it, scope, 0)) return HostBatch{field(p, k.f_left), it};
      return std::nullopt;
    }
    return std::nullopt;
  }

  // A torch DataLoader call whose collate function does not upload the batch, a name every
  // reaching binding of which is one, or a call of a function of this file whose every return
  // is one.
  bool yields_torch_batches(TSNode e, int scope, int depth) const {
    e = unparenthesize(e);
    if (is_null(e) || depth > 3) return false;
    if (is(e, k.call)) {
      if (is_torch_dataloader(ctx.model, e)) return is_null(collate_upload(ctx.model, e));
      const FunctionInfo* fn = local_callee(ctx.model, e);
      if (!fn || fn->returns.empty()) return false;
      for (TSNode ret : fn->returns)
        if (ts_node_named_child_count(ret) == 0 || !yields_torch_batches(ts_node_named_child(ret, 0), fn->scope, depth + 1))
          return false;
      return true;
    }
    auto d = dotted_name(e, ctx.source);
    if (!d) return false;
    std::vector<TSNode> values = reaching_values(ctx.model, *d, e, scope);
    if (values.empty()) return false;
    for (TSNode v : values)
      if (!yields_torch_batches(v, scope, depth + 1)) return false;
    return true;
  }

  // Some dataset `__getitem__` of this file moves tensors to a device.
  bool getitem_moves_to_device() const {
    read_getitems = true;
    for (const FunctionInfo& fn : ctx.model.functions()) {
      if (fn.name != "__getitem__") continue;
      bool moves = false;
      ctx.model.for_each_call_in(fn.node, [&](TSNode c) {
        std::string_view leaf = ctx.model.callee_leaf(c);
        moves = moves || leaf == "cuda" || leaf == "to";
      });
      if (moves) return true;
    }
    return false;
  }

  // `range(...)`, or a tensor iterated directly (through enumerate / zip / tqdm).
  bool per_element(TSNode iterable, int scope) const {
    TSNode bare = unparenthesize(iterable);
    if (is(bare, k.call) && ctx.model.callee_leaf(bare) == "range") return true;
    for (TSNode it : unwrap_iterables(iterable, ctx.source)) {
      if (is(it, k.call) && ctx.model.callee_leaf(it) == "range") return true;
      // A value known to be something other than one tensor (a model's tuple of losses, a
      // list, an object) yields its items, not a tensor's elements (round 8: DeepSpeed's
      // multi-output test).
      if (const Value* v = ctx.provenance.value_of(it); v && v->type != Type::Tensor && v->type != Type::Unknown)
        continue;
      if (bound_to_mappings(it, scope)) continue;  // a mapping yields its keys (round 90: PPUU's total_losses)
      if (!tensor_name_reason(it, scope).empty()) return true;
    }
    return false;
  }

  // Every binding of the name is a mapping: a dict display or comprehension, or a call of
  // `dict`, `OrderedDict` or `defaultdict`.
  bool bound_to_mappings(TSNode e, int scope) const {
    auto d = dotted_name(e, ctx.source);
    const std::vector<BindingSite>* sites = d ? ctx.model.bindings_of(*d, scope) : nullptr;
    if (!sites || sites->empty()) return false;
    for (const BindingSite& b : *sites) {
      TSNode v = unparenthesize(b.value);
      if (b.arity > 1 || is_null(v)) return false;
      if (is(v, k.dictionary) || is(v, k.dictionary_comprehension)) continue;
      std::string_view leaf = is(v, k.call) ? ctx.model.callee_leaf(v) : std::string_view{};
      if (leaf != "dict" && leaf != "OrderedDict" && leaf != "defaultdict") return false;
    }
    return true;
  }

  // Why a dotted expression is a device tensor, or "" when nothing shows it.
  std::string tensor_name_reason(TSNode e, int scope) const {
    auto d = dotted_name(e, ctx.source);
    if (!d) return {};
    if (const Value* v = ctx.provenance.value_of(e); v && v->has_graph() && !v->naming_only)
      return "`" + *d + "` carries an autograd graph here, so it is a device tensor";
    if (ctx.model.is_model(*d, scope)) return "`" + *d + "` is a model";
    std::string last = names::lower(last_segment(*d));
    for (auto w : kTensorish)
      if (names::contains(last, w)) return "`" + *d + "` is named like a tensor";
    return {};
  }

  std::string device_tensor_reason(TSNode recv, const Iteration& it, int scope) const {
    if (is(recv, k.call)) {
      std::string_view leaf = ctx.model.callee_leaf(recv);
      if (is(field(recv, k.f_function), k.attribute) && in(kTensorChain, leaf))
        return "`." + std::string(leaf) + "()` returns a tensor";
      return {};
    }
    if (is(recv, k.subscript)) {
      std::string why = tensor_name_reason(field(recv, k.f_value), scope);
      return why.empty() ? why : why + "; one element is read per iteration";
    }
    auto d = dotted_name(recv, ctx.source);
    if (!d) return {};
    if (binds(it.target, d->substr(0, d->find('.'))) && !(is(unparenthesize(it.iterable), k.call) &&
                                                         callee_leaf(unparenthesize(it.iterable), ctx.source) == "range"))
      return "`" + *d + "` is an element of the tensor being iterated";
    return tensor_name_reason(recv, scope);
  }

  bool binds(TSNode target, const std::string& name) const {
    if (is_null(target)) return false;
    if (is(target, k.identifier)) return text_of(target, ctx.source) == name;
    bool found = false;
    for_each_named_child(target, [&](TSNode c) { found = found || binds(c, name); });
    return found;
  }

  Finding base_finding(TSNode call) const {
    Finding f;
    f.code = "TG007";
    f.severity = Severity::Warning;
    f.category = Category::PerformanceWarn;
    f.range = range_of(call);
    return f;
  }

  void add_training_step(Finding& f, TSNode train) const {
    if (is(train, k.call))
      f.evidence.push_back({range_of(train), quote_code(text_of(train, ctx.source)) +
                                                 " makes the enclosing loop the training step"});
    else
      f.evidence.push_back({range_of(train), "`" + std::string(text_of(train, ctx.source)) +
                                                 "` runs once per training step under the framework's loop"});
  }
};

}  // namespace

std::unique_ptr<RuleCheck> make_tg007(const RuleContext& ctx) { return std::make_unique<Checker>(ctx); }

}  // namespace preflight::rules
