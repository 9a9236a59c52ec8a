// TG004 dataloader-starvation: a `DataLoader` in a script that trains on a CUDA device loads
// batches in the training process (`num_workers` unset or 0) or from unpinned memory, so the
// device sits idle while each batch is prepared and uploaded.
//
// Evidence chain: why the file targets CUDA, read from code (a `"cuda"` / `"cuda:N"` / `"nccl"`
// string literal, a `.cuda()` call, a `torch.cuda.*` call, `.to(<int>)`, `device_ids=`, an
// Accelerate `Accelerator()` not forced to the CPU, a DeepSpeed engine) -> the call is
// torch's `DataLoader` (by its import binding) -> the keyword that is absent or a literal
// `0` / `False` (positional arguments are read by their place in the signature).
// Exempt: values that are not literals (trusted); the workers note for a local
// IterableDataset that does not split its stream by worker (workers would duplicate it); calls with a `*args` / `**kwargs` splat
// for the keyword the splat may carry (preflight cannot see it and never appends a keyword
// after one); datasets already moved to the device (workers and pinning do not apply, and
// pinning CUDA tensors raises), seen through bindings, `device=` factories and local
// helpers' returns; `DataLoader` names bound to something other than torch's; a local
// dataset whose `__getitem__` calls nothing and indexes no stored collection (it loads
// nothing: DreamBooth's PromptDataset), or returns every item already moved to the device
// (`return seq.cuda()`), or whose `collate_fn` is a function of this file that calls `.cuda()`
// (TG004-NX28), reported as a silence. The pin_memory note is silent, with the reason
// recorded, for an evaluation loader: bound to a name (directly or through `iter(...)`) whose
// every loop in its function (or in module code) trains nothing and that no call receives but
// functions of this file that train nothing (TG004-NX21; training: a backward, directly or in a
// helper of this file, or a call that steps, clears or is handed an optimizer); and for a loader built only without
// CUDA: in the `else` of `if torch.cuda.is_available():` (or of a name bound to exactly that),
// or under `if not ...:` (TG004-NX23). Both notes are silent, with the
// reason recorded, for an index loader over `range(n)` (TG004-NX22) and for a loader bound to a
// name its function never reads (TG004-NX24), and for a loader only ever drawn from with
// `next(iter(loader))` outside any loop, a fixed batch loaded once (TG004-NX29).
// A comment or string mentioning CUDA never counts: only the syntax tree is read.
#include <optional>

#include "analysis/local_calls.h"
#include "analysis/names.h"
#include "analysis/torch_facts.h"
#include "rules/rule.h"

namespace preflight::rules {
namespace {

using namespace preflight::analysis;

// torch.utils.data.DataLoader's positional order.
constexpr unsigned kNumWorkersPosition = 5;
constexpr unsigned kPinMemoryPosition = 7;

struct Candidate {
  TSNode call;
  int scope;
};

// An argument as the call passes it: by keyword, by position, or hidden behind a splat.
struct Argument {
  TSNode value{};
  bool hidden = false;  // absent, but a `*args` / `**kwargs` may carry it
};

struct Checker final : RuleCheck {
  const RuleContext& ctx;
  const Kinds& k = kinds();
  std::vector<Candidate> candidates;
  CudaTargetScan cuda{ctx.model};

  explicit Checker(const RuleContext& c) : ctx(c) {}

  void enter(TSNode n, const WalkState& st) override {
    cuda.enter(n, st);
    if (is(n, k.call) && is_torch_dataloader(ctx.model, n)) candidates.push_back({n, st.scope});
  }

  void context(std::vector<ContextFact>& facts) const override {
    note_context(facts, "TG004 targets CUDA: " + std::string(cuda.reason()), cuda.evidence());
  }

  void finish(std::vector<Finding>& out) override {
    if (!cuda.targets_cuda()) return;
    for (const Candidate& c : candidates) check(c, out);
  }

  Argument argument(TSNode call, std::string_view name, unsigned position) const {
    Argument a;
    a.value = keyword_arg(call, name, ctx.source);
    if (is_null(a.value)) a.value = positional_arg(call, position);
    if (!is_null(a.value)) return a;
    for_each_named_child(field(call, k.f_arguments), [&](TSNode c) {
      if (is(c, k.dictionary_splat) || is(c, k.list_splat)) a.hidden = true;
    });
    return a;
  }

  // `DataLoader(TensorDataset(x.cuda(), y.cuda()))`, `torch.randn(n, d, device=device)`, or a
  // dataset name / local helper whose value is such: the data already lives on the device.
  // Follows names through their bindings and local calls through their returns, four hops.
  bool on_device(TSNode e, int scope, int depth) const {
    if (is_null(e) || depth > 4) return false;
    if (is(e, k.call)) {
      TSNode callee = field(e, k.f_function);
      std::string_view leaf = ctx.model.callee_leaf(e);
      if (is(callee, k.attribute) && (leaf == "cuda" || leaf == "to")) return true;
      TSNode device = keyword_arg(e, "device", ctx.source);
      if (!is_null(device) && string_content(device, ctx.source) != "cpu") return true;
      if (is(callee, k.identifier) && returns_on_device(text_of(callee, ctx.source), depth))
        return true;
    }
    if (is(e, k.identifier) || is(e, k.attribute)) {
      auto d = dotted_name(e, ctx.source);
      if (d && bound_on_device(*d, scope, depth)) return true;
      if (is(e, k.attribute)) return false;
    }
    bool found = false;
    for_each_named_child(e, [&](TSNode c) { found = found || on_device(c, scope, depth); });
    return found;
  }

  // An instance of a local IterableDataset subclass that never calls `get_worker_info()`:
  // every worker would yield the full stream (an RL replay buffer, a generator over files).
  bool unsplit_iterable(TSNode e, int scope) const {
    if (is_null(e)) return false;
    e = unparenthesize(e);
    if (is(e, k.identifier)) {
      const std::vector<BindingSite>* sites = ctx.model.bindings_of(text_of(e, ctx.source), scope);
      return sites && sites->size() == 1 && unsplit_iterable(sites->front().value, scope);
    }
    if (!is(e, k.call) || !is(field(e, k.f_function), k.identifier)) return false;
    int cls = ctx.model.class_named(text_of(field(e, k.f_function), ctx.source));
    if (cls < 0) return false;
    const ClassInfo& info = ctx.model.classes()[cls];
    bool iterable = false;
    for (const std::string& base : info.bases) iterable = iterable || base.ends_with("IterableDataset");
    return iterable && !contains_call(info.node, "get_worker_info", ctx.source);
  }

  // An instance of a local map-style dataset whose `__getitem__` calls nothing and indexes no
  // stored collection: it hands back what it was built with and the index (DreamBooth's
  // PromptDataset yields prompt strings). Nothing is loaded, so workers and pinning buy
  // nothing. The class is read through the dataset's binding, not its name.
  // The local class `e` constructs (`Ds(...)`, or a name bound once to that), or -1.
  int local_dataset_class(TSNode e, int scope, int depth = 0) const {
    if (is_null(e) || depth > 4) return -1;
    e = unparenthesize(e);
    if (is(e, k.identifier)) {
      const std::vector<BindingSite>* sites = ctx.model.bindings_of(text_of(e, ctx.source), scope);
      return sites && sites->size() == 1 ? local_dataset_class(sites->front().value, scope, depth + 1) : -1;
    }
    if (!is(e, k.call) || !is(field(e, k.f_function), k.identifier)) return -1;
    return ctx.model.class_named(text_of(field(e, k.f_function), ctx.source));
  }

  // The `__getitem__` of local class `cls`, or null.
  const FunctionInfo* getter_of(int cls) const {
    const std::vector<int>* getters = cls < 0 ? nullptr : ctx.model.functions_named("__getitem__");
    if (getters)
      for (int f : *getters)
        if (ctx.model.functions()[f].class_index == cls) return &ctx.model.functions()[f];
    return nullptr;
  }

  int loads_nothing(TSNode e, int scope) const {
    int cls = local_dataset_class(e, scope);
    const FunctionInfo* getter = getter_of(cls);
    return getter && hands_back_only(field(getter->node, k.f_body)) ? cls : -1;
  }

  // A local dataset whose `__getitem__` returns its item already on the device (`return
  // seq.cuda()`, every return): the loader collates device tensors, which neither workers
  // (a forked worker cannot re-initialise CUDA) nor pinning (it raises on CUDA tensors) help.
  int serves_device_items(TSNode e, int scope) const {
    int cls = local_dataset_class(e, scope);
    const FunctionInfo* getter = getter_of(cls);
    if (!getter || getter->returns.empty()) return -1;
    for (TSNode ret : getter->returns)
      if (ts_node_named_child_count(ret) == 0 || !on_device(ts_node_named_child(ret, 0), getter->scope, 1)) return -1;
    return cls;
  }

  bool hands_back_only(TSNode n) const {
    if (is(n, k.call)) return false;
    if (is(n, k.subscript) && is(unparenthesize(field(n, k.f_value)), k.attribute)) return false;  // self.items[i]
    bool only = true;
    for_each_named_child(n, [&](TSNode c) { only = only && hands_back_only(c); });
    return only;
  }

  bool returns_on_device(std::string_view function, int depth) const {
    const std::vector<int>* fs = ctx.model.functions_named(function);
    if (!fs) return false;
    for (int f : *fs) {
      const FunctionInfo& info = ctx.model.functions()[f];
      for (TSNode ret : info.returns)
        if (ts_node_named_child_count(ret) > 0 &&
            on_device(ts_node_named_child(ret, 0), info.scope, depth + 1))
          return true;
    }
    return false;
  }

  bool bound_on_device(const std::string& name, int scope, int depth) const {
    if (const std::vector<BindingSite>* sites = ctx.model.bindings_of(name, scope))
      for (const BindingSite& b : *sites)
        if (on_device(b.value, scope, depth + 1)) return true;
    return false;
  }

  // --- findings ---------------------------------------------------------------------------

  void check(const Candidate& c, std::vector<Finding>& out) {
    Argument dataset = argument(c.call, "dataset", 0);
    if (on_device(dataset.value, c.scope, 0)) return;
    // `for perm in DataLoader(range(n), batch_size, shuffle=True)` (round 23: OGB's link
    // prediction examples): batches of indices into tensors that already live on the device.
    if (TSNode d = unparenthesize(dataset.value); is(d, k.call) && is(field(d, k.f_function), k.identifier) &&
                                                  ctx.model.callee_leaf(d) == "range" && !ctx.model.functions_named("range")) {
      stay_silent("TG004", c.call,
                  "an index loader: the dataset is `range(...)`, so each batch is a tensor of indices made in the "
                  "process; there is nothing for workers to load or to pin",
                  {{range_of(d), quote_code(text_of(d, ctx.source)) + " is the dataset"}});
      return;
    }
    if (int cls = loads_nothing(dataset.value, c.scope); cls >= 0) {
      const ClassInfo& info = ctx.model.classes()[cls];
      stay_silent("TG004", c.call,
                  "the dataset loads nothing: `" + info.name + ".__getitem__` calls nothing and indexes no stored collection",
                  {{range_of(info.node), "`" + info.name + "` is defined here"}});
      return;
    }
    if (int cls = serves_device_items(dataset.value, c.scope); cls >= 0) {
      const ClassInfo& info = ctx.model.classes()[cls];
      stay_silent("TG004", c.call,
                  "the items are already on the device: `" + info.name +
                      ".__getitem__` returns them moved there, so workers (which cannot re-initialise "
                      "CUDA when forked) and pinning (which raises on CUDA tensors) do not apply",
                  {{range_of(info.node), "`" + info.name + "` is defined here"}});
      return;
    }
    if (TSNode moved = collate_upload(ctx.model, c.call); !is_null(moved)) {
      stay_silent("TG004", c.call,
                  "the batches are already on the device: the collate function moves them there (" +
                      quote_code(text_of(moved, ctx.source)) +
                      "), so workers (which cannot re-initialise CUDA when forked) and pinning (which raises on "
                      "CUDA tensors) do not apply",
                  {{range_of(moved), "the collate function of this file moves the batch to the GPU"}});
      return;
    }
    if (TSNode target = never_read(c); !is_null(target)) {
      int f = ctx.model.enclosing_function(c.scope);
      stay_silent("TG004", c.call,
                  "an unused loader: `" + std::string(text_of(target, ctx.source)) + "` is read nowhere in `" +
                      ctx.model.functions()[f].name + "()`, so no batch is ever loaded from it",
                  {{range_of(target), quote_code(text_of(target, ctx.source)) + " is bound here and never read"}});
      return;
    }
    if (std::optional<Draws> draws = batches_drawn_once(c); draws) {
      stay_silent("TG004", c.call,
                  "a loader read for a fixed batch: `" + std::string(text_of(draws->target, ctx.source)) +
                      "` is only ever drawn from with `next(...)` outside any loop, so a few batches are loaded "
                      "once and nothing waits on it per step",
                  {{range_of(draws->first), quote_code(text_of(draws->first, ctx.source)) + " draws a batch once"}});
      return;
    }
    Argument workers = argument(c.call, "num_workers", kNumWorkersPosition);
    if (unsplit_iterable(dataset.value, c.scope)) {
      // Workers would each replay the whole stream: advising them would duplicate batches.
    } else if (!workers.hidden && is_null(workers.value)) out.push_back(workers_finding(c.call, {}));
    else if (is(workers.value, k.integer) && text_of(workers.value, ctx.source) == "0")
      out.push_back(workers_finding(c.call, workers.value));
    Argument pin = argument(c.call, "pin_memory", kPinMemoryPosition);
    if (!(!pin.hidden && is_null(pin.value)) && !is(pin.value, k.false_)) return;
    if (TSNode test = built_without_cuda(c.call, c.scope); !is_null(test)) {
      stay_silent("TG004", c.call,
                  "a loader for runs without a GPU: it is built only when " + quote_code(text_of(test, ctx.source)) +
                      " is false, where pinned memory has nothing to speed up",
                  {{range_of(test), quote_code(text_of(test, ctx.source)) + " asks whether CUDA is available"}});
      return;
    }
    if (std::vector<TSNode> loops = evaluation_loops(c); !loops.empty()) {
      std::vector<EvidenceStep> ev;
      for (TSNode use : loops)
        if (is(use, k.for_statement))
          ev.push_back({range_of(field(use, k.f_right)), quote_code(text_of(field(use, k.f_right), ctx.source)) +
                                                              " is iterated by a loop that never runs a backward"});
        else
          ev.push_back({range_of(use), quote_code(text_of(use, ctx.source)) +
                                           " hands it to a function of this file that never runs a backward"});
      stay_silent("TG004", c.call,
                  "an evaluation loader: every loop over it and every function of this file it is handed to runs "
                  "forward passes only, so no training step waits "
                  "on its copies (the pin_memory note is for loaders that feed training)",
                  std::move(ev));
      return;
    }
    out.push_back(pin_finding(c.call, is(pin.value, k.false_) ? pin.value : TSNode{}));
  }

  // `if use_cuda: ... DataLoader(..., pin_memory=True) else: DataLoader(..., pin_memory=False)`
  // with `use_cuda = torch.cuda.is_available()` (round 35: Bayesian-NN training scripts): the
  // loader in the `else` branch (or under `if not use_cuda:`) exists only on a machine without
  // CUDA. Returns the availability test, or null.
  TSNode built_without_cuda(TSNode call, int scope) const {
    for (TSNode child = call, p = ctx.model.parent(call); !is_null(p); child = p, p = ctx.model.parent(p)) {
      if (is(p, k.function_definition) || is(p, k.class_definition)) break;
      if (is(p, k.else_clause) && is(ctx.model.parent(p), k.if_statement)) {
        TSNode if_stmt = ctx.model.parent(p);
        bool has_elif = false;
        for_each_named_child(if_stmt, [&](TSNode c) { has_elif = has_elif || is(c, k.elif_clause); });
        TSNode cond = unparenthesize(field(if_stmt, k.f_condition));
        if (!has_elif && asks_cuda_available(cond, scope)) return cond;
      }
      if (is(p, k.if_statement) && ts_node_eq(child, field(p, k.f_consequence))) {
        TSNode cond = unparenthesize(field(p, k.f_condition));
        TSNode asked = is(cond, k.not_operator) ? unparenthesize(ts_node_named_child(cond, 0)) : TSNode{};
        if (!is_null(asked) && asks_cuda_available(asked, scope)) return asked;
      }
    }
    return TSNode{};
  }

  // `torch.cuda.is_available()`, or a name every visible binding of which is exactly that.
  bool asks_cuda_available(TSNode e, int scope) const {
    if (is(e, k.call)) {
      auto q = ctx.model.qualified_callee(e);
      return q && *q == "torch.cuda.is_available";
    }
    if (!is(e, k.identifier)) return false;
    const std::vector<BindingSite>* sites = ctx.model.bindings_of(text_of(e, ctx.source), scope);
    if (!sites || sites->empty()) return false;
    for (const BindingSite& b : *sites)
      if (b.position >= 0 || !asks_cuda_available(unparenthesize(b.value), scope)) return false;
    return true;
  }

  // `dataloader_val = DataLoader(...)` in a function that never reads the name again (round
  // 38: a detector's training script builds a validation loader and evaluates on the dataset
  // itself): nothing iterates it, so nothing waits on it (TG004-NX24). Only inside a function:
  // another module may import a module-level loader. Returns the bound name, or null.
  TSNode never_read(const Candidate& c) const {
    TSNode assignment = ctx.model.parent(c.call);
    if (!is(assignment, k.assignment) || !ts_node_eq(field(assignment, k.f_right), c.call)) return TSNode{};
    TSNode target = field(assignment, k.f_left);
    int f = ctx.model.enclosing_function(c.scope);
    if (!is(target, k.identifier) || f < 0) return TSNode{};
    bool read = !reads_of(text_of(target, ctx.source), field(ctx.model.functions()[f].node, k.f_body)).empty();
    return read ? TSNode{} : target;
  }

  // `fixed_img, fixed_att = next(iter(valid_loader))` (round 92: AttGAN's sample grid; round 93:
  // STEGO draws two batches through `it = iter(loader)`): the loader bound to a plain name whose
  // every read is `iter(name)`, inside `next(...)` or bound to a plain name only `next(...)`
  // reads, and no such `next` sits in a loop (but `for _ in range(<one digit>)`) or a
  // comprehension. Workers and pinning speed up a stream of batches, not a fixed one
  // (TG004-NX29). In module code every read in the file counts (a function may iterate it).
  struct Draws {
    TSNode target;
    TSNode first;  // the first `next(...)`
  };
  std::optional<Draws> batches_drawn_once(const Candidate& c) const {
    TSNode assignment = ctx.model.parent(c.call);
    if (!is(assignment, k.assignment) || !ts_node_eq(field(assignment, k.f_right), c.call)) return std::nullopt;
    TSNode target = field(assignment, k.f_left);
    if (!is(target, k.identifier)) return std::nullopt;
    int f = ctx.model.enclosing_function(c.scope);
    TSNode region = f >= 0 ? field(ctx.model.functions()[f].node, k.f_body) : ctx.root;
    Draws found{target, TSNode{}};
    auto draw = [&](TSNode next_call) {
      if (!outside_loops(next_call, region)) return false;
      if (is_null(found.first) || ts_node_start_byte(next_call) < ts_node_start_byte(found.first)) found.first = next_call;
      return true;
    };
    std::vector<TSNode> reads = reads_of(text_of(target, ctx.source), region);
    if (reads.empty()) return std::nullopt;
    for (TSNode r : reads) {
      TSNode iter_call = call_taking(r, "iter");
      if (is_null(iter_call)) return std::nullopt;
      if (TSNode next_call = call_taking(iter_call, "next"); !is_null(next_call)) {
        if (!draw(next_call)) return std::nullopt;
        continue;
      }
      TSNode bound = ctx.model.parent(iter_call);
      if (!is(bound, k.assignment) || !ts_node_eq(field(bound, k.f_right), iter_call) ||
          !is(field(bound, k.f_left), k.identifier))
        return std::nullopt;
      std::vector<TSNode> uses = reads_of(text_of(field(bound, k.f_left), ctx.source), region);
      if (uses.empty()) return std::nullopt;
      for (TSNode u : uses)
        if (TSNode next_call = call_taking(u, "next"); is_null(next_call) || !draw(next_call)) return std::nullopt;
    }
    return found;
  }

  // The call `leaf(e)` when `e` is its only positional argument; null otherwise.
  TSNode call_taking(TSNode e, std::string_view leaf) const {
    TSNode args = ctx.model.parent(e);
    if (!is(args, k.argument_list) || ts_node_named_child_count(args) != 1) return TSNode{};
    TSNode call = ctx.model.parent(args);
    TSNode callee = field(call, k.f_function);
    return is(callee, k.identifier) && text_of(callee, ctx.source) == leaf ? call : TSNode{};
  }

  // No loop or comprehension between `n` and `region`, but `for _ in range(<one digit>)`.
  bool outside_loops(TSNode n, TSNode region) const {
    for (TSNode p = ctx.model.parent(n); !is_null(p) && !ts_node_eq(p, region); p = ctx.model.parent(p)) {
      if (is(p, k.while_statement) || is(p, k.list_comprehension) || is(p, k.set_comprehension) ||
          is(p, k.dictionary_comprehension) || is(p, k.generator_expression))
        return false;
      if (is(p, k.for_statement)) {
        TSNode it = unparenthesize(field(p, k.f_right));
        TSNode args = is(it, k.call) && ctx.model.callee_leaf(it) == "range" ? field(it, k.f_arguments) : TSNode{};
        TSNode count = is_null(args) || ts_node_named_child_count(args) != 1 ? TSNode{} : ts_node_named_child(args, 0);
        if (!is(count, k.integer) || text_of(count, ctx.source).size() > 1) return false;  // a few draws: 0-9
      }
    }
    return true;
  }

  // The identifiers reading `name` in `region` (plain-name assignment targets are bindings).
  std::vector<TSNode> reads_of(std::string_view name, TSNode region) const {
    std::vector<TSNode> reads, todo{region};
    while (!todo.empty()) {
      TSNode n = todo.back();
      todo.pop_back();
      if (is(n, k.assignment)) {  // a plain name on the left is bound, not read
        TSNode left = field(n, k.f_left);
        if (!is(left, k.identifier)) todo.push_back(left);
        if (TSNode right = field(n, k.f_right); !is_null(right)) todo.push_back(right);
        if (TSNode type = field(n, k.f_type); !is_null(type)) todo.push_back(type);
        continue;
      }
      if (is(n, k.identifier)) {
        if (text_of(n, ctx.source) == name) reads.push_back(n);
        continue;
      }
      for_each_named_child(n, [&](TSNode ch) { todo.push_back(ch); });
    }
    return reads;
  }

  // `eval_loader = DataLoader(...)` then `for batch in tqdm(eval_loader):` in the same function
  // (round 19: BERT-NER's evaluate / predict, nested-UNet's val.py): the loader is bound to a
  // plain name, every `for` over that name in the binding's function (through enumerate /
  // tqdm / zip) runs no backward, directly or in a helper of this file it calls, and the name
  // is not handed to any other call (a helper that trains on it). Returns the loops, or none
  // when the loader may feed training.
  // Also `test_iter = iter(DataLoader(...))`, and a loader handed to a function of this file
  // that runs no backward itself or in its helpers (round 45: a world model's `evaluate(...,
  // test_iter, ...)`, a federated-learning script's `test(net, test_loader)`); the evidence
  // then names that call.
  std::vector<TSNode> evaluation_loops(const Candidate& c) const {
    TSNode bound = c.call;
    if (TSNode wrap = ctx.model.parent(ctx.model.parent(c.call));
        is(ctx.model.parent(c.call), k.argument_list) && is(wrap, k.call) && ctx.model.callee_leaf(wrap) == "iter" &&
        is(field(wrap, k.f_function), k.identifier) && !ctx.model.functions_named("iter"))
      bound = wrap;
    TSNode assignment = ctx.model.parent(bound);
    if (!is(assignment, k.assignment) || !ts_node_eq(field(assignment, k.f_right), bound)) return {};
    TSNode target = field(assignment, k.f_left);
    if (!is(target, k.identifier)) return {};
    std::string_view name = text_of(target, ctx.source);
    int f = ctx.model.enclosing_function(c.scope);
    // A loader of module code: its uses in module code (a script's top level).
    TSNode body = f < 0 ? ctx.root : field(ctx.model.functions()[f].node, k.f_body);
    std::vector<TSNode> loops, receivers;
    collect_uses(body, name, loops, receivers);
    for (TSNode call : receivers) {
      // Handed to a function of this file that trains nothing: an evaluation use; to anything
      // else (a callable parameter, another module's trainer): it may feed training there.
      // (Its body and the helpers it calls: two levels from here.)
      const FunctionInfo* fn = local_callee(ctx.model, call);
      if (!fn || may_train(field(fn->node, k.f_body), fn->scope)) return {};
      loops.push_back(call);
    }
    if (loops.empty()) return {};
    for (TSNode loop : loops)
      if (is(loop, k.for_statement) && may_train(field(loop, k.f_body), c.scope)) return {};
    return loops;
  }

  // A region that backwards (directly or through a helper of this file), or that steps or
  // clears an optimizer or hands one (bound to an optimizer, or named `*optim*`) to a call: a
  // backward may run in a helper this file does not show (round 45's re-measurement:
  // Uformer's `loss_scaler(loss, optimizer, ...)`).
  bool may_train(TSNode region, int scope) const {
    if (runs_backward(ctx.model, region)) return true;
    bool trains = false;
    ctx.model.for_each_call_in(region, [&](TSNode call) {
      std::string_view leaf = ctx.model.callee_leaf(call);
      if (names::names_a_step(leaf) || leaf.find("zero_grad") != std::string_view::npos) trains = true;
      for_each_named_child(field(call, k.f_arguments), [&](TSNode a) {
        TSNode v = is(a, k.keyword_argument) ? field(a, k.f_value) : a;
        if (auto d = dotted_name(v, ctx.source); d && hands_an_optimizer(*d, scope)) trains = true;
      });
    });
    return trains;
  }

  // Bound to an optimizer; the name is read only when the binding says nothing.
  bool hands_an_optimizer(const std::string& dotted, int scope) const {
    ValueKind kind = ctx.model.kind_of(dotted, scope);
    if (kind != ValueKind::Unknown) return kind == ValueKind::Optimizer;
    return names::names_an_optimizer(names::lower(names::last_segment(dotted)));
  }

  // The `for` loops iterating `name` (through wrappers) and the calls it is passed to as an
  // argument (`len(name)` and the loops' own wrappers excepted).
  void collect_uses(TSNode n, std::string_view name, std::vector<TSNode>& loops, std::vector<TSNode>& receivers) const {
    TSSymbol s = sym(n);
    if (s == k.function_definition || s == k.class_definition || s == k.lambda) return;
    if (s == k.for_statement) {
      for (TSNode it : unwrap_iterables(field(n, k.f_right), ctx.source))
        if (is(it, k.identifier) && text_of(it, ctx.source) == name) {
          loops.push_back(n);
          collect_uses(field(n, k.f_body), name, loops, receivers);
          return;
        }
    }
    if (s == k.argument_list && ctx.model.callee_leaf(ctx.model.parent(n)) != "len") {
      bool passed = false;
      for_each_named_child(n, [&](TSNode a) {
        TSNode v = is(a, k.keyword_argument) ? field(a, k.f_value) : a;
        passed = passed || (is(v, k.identifier) && text_of(v, ctx.source) == name);
      });
      if (passed) receivers.push_back(ctx.model.parent(n));
    }
    for_each_named_child(n, [&](TSNode ch) { collect_uses(ch, name, loops, receivers); });
  }

  Finding base_finding(TSNode call) const {
    Finding f;
    f.code = "TG004";
    f.severity = Severity::Note;
    f.category = Category::PerformanceWarn;
    f.range = range_of(call);
    f.evidence.push_back({range_of(cuda.evidence()), "the file targets CUDA: " + std::string(cuda.reason()) +
                                                         ", " + quote_code(text_of(cuda.evidence(), ctx.source))});
    return f;
  }

  Finding workers_finding(TSNode call, TSNode zero) const {
    Finding f = base_finding(call);
    if (is_null(zero)) {
      f.message = quote_code(text_of(call, ctx.source)) +
                  " sets no `num_workers` (the default is 0): every batch is prepared in the "
                  "training process while the CUDA device waits.";
      f.evidence.push_back({range_of(field(call, k.f_arguments)), "no `num_workers=` argument"});
    } else {
      f.message = "`num_workers=0` makes the training process prepare every batch itself, "
                  "leaving the CUDA device idle in between.";
      f.evidence.push_back({range_of(ctx.model.parent(zero)), "a literal 0: no worker processes"});
    }
    f.hint = "Pass `num_workers=` about 4 per GPU, bounded by the CPU cores, and "
             "`persistent_workers=True` to keep the workers across epochs.";
    return f;
  }

  Finding pin_finding(TSNode call, TSNode literal_false) const {
    Finding f = base_finding(call);
    f.message = "Batches come from pageable (unpinned) host memory, so their copy to the CUDA "
                "device cannot overlap with compute.";
    f.hint = "Pass `pin_memory=True` and move batches with `.to(device, non_blocking=True)`.";
    if (!is_null(literal_false)) {
      f.evidence.push_back({range_of(ctx.model.parent(literal_false)), "pinning is switched off"});
      return f;  // an explicit False may be deliberate: no fix
    }
    TSNode args = field(call, k.f_arguments);
    f.evidence.push_back({range_of(args), "no `pin_memory=` argument"});
    f.fixes.push_back(pin_fix(args));
    return f;
  }

  // Append `pin_memory=True` after the last argument (before any trailing comma). Only
  // reached when no splat is present, so the keyword cannot be duplicated. Unsafe: a dataset
  // whose items are already CUDA tensors (made in another file, in `__getitem__`) works
  // unpinned, but pinning it raises "cannot pin 'torch.cuda.FloatTensor'".
  Fix pin_fix(TSNode args) const {
    TSNode last{};
    for_each_named_child(args, [&](TSNode c) {
      if (!is(c, k.comment)) last = c;
    });
    Fix fix{"add pin_memory=True", FixSafety::Unsafe, {}};
    if (is_null(last)) {
      uint32_t at = ts_node_start_byte(args) + 1;
      fix.edits.push_back({{at, at}, "pin_memory=True"});
    } else {
      uint32_t at = ts_node_end_byte(last);
      fix.edits.push_back({{at, at}, ", pin_memory=True"});
    }
    return fix;
  }
};

}  // namespace

std::unique_ptr<RuleCheck> make_tg004(const RuleContext& ctx) { return std::make_unique<Checker>(ctx); }

}  // namespace preflight::rules
