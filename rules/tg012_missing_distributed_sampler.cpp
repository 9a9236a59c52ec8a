// TG012 missing-distributed-sampler: under DistributedDataParallel every rank builds the same
// `DataLoader` with no sampler that shards it, so all ranks walk the full dataset: N GPUs
// compute the same gradients (training) or score the same examples N times (evaluation).
//
// Evidence chain: the distributed setup (a call to DistributedDataParallel / DDP under any
// import alias, init_process_group, FSDP / fully_shard, or a DeepSpeed engine) that governs
// the loader (at module level, in the loader's function or one enclosing it, in a local
// helper that function calls, or in a function that calls the loader's function) -> torch's
// `DataLoader` (by its import binding) -> no sampler: no `sampler=` / `batch_sampler=`, or
// one that is `None`, a `RandomSampler` / `SequentialSampler`, or a name bound only to those
// -> no other sharding evidence -> training (error) or evaluation (note). What the loader is
// for is read from how it is used before how it is named: the loops that iterate it (in its
// function, or in a local helper it is handed to) run under no_grad / inference mode, or after
// an `X.eval()` with no backward (evaluation), or run a backward (training); an evaluation-named
// routine iterating it is a naming heuristic; only when no loop says, the name it is stored
// under (assignment target, dict key, returning function; names.cpp) decides, also a heuristic.
// Before the name: a script (an `if __name__ == "__main__":` guard) in which nothing
// backwards feeds evaluation or inference (TG012-NX25).
// Why an evaluation loader is a note: leaving it unsharded is a common, deliberate choice (every
// rank gets the exact metric, without the padding DistributedSampler adds to even out the
// shards); it costs repeated work, never a wrong model, so it is reported as a note whose
// evidence names the step (usage, or the naming heuristic) it rests on.
// DeepSpeed alone is not evidence of several processes: `deepspeed.initialize` also runs as a
// single process (ZeRO-Offload on one GPU), so when it is the only marker and the file shows no
// distributed launch (init_process_group, torch.distributed / deepspeed.comm calls or imports,
// `deepspeed.init_distributed`, a `local_rank`, the launcher's environment variables such as
// "LOCAL_RANK"; names.cpp), the loader is recorded as a silence with that reason.
// Exempt: a custom or conditional sampler that may shard; a dataset built with the rank
// (`split_dataset_by_node`, `.shard(...)`, a local dataset class that reads the rank, a
// `Subset` whose indices are computed from the world size); a
// loader built only on one rank (`if rank == 0:`, `is_main_process()`) or in the
// non-distributed branch (`else` of `if args.distributed:`); files where Lightning,
// Accelerate or the Hugging Face Trainer builds and re-shards the loaders (read from calls
// and base classes, never from comments or strings); `*args` / `**kwargs` that may carry
// the sampler; markers under a guard a constant makes false (`world_size = 1 ... if
// world_size > 1:`). A loader whose name is rebound, on every path, from an unseen call that
// receives it (`make_private(data_loader=loader)`) is a note: the claim rests on that callee.
// A dataset built by a callee this file cannot see (not torch's data libraries, MONAI,
// Hugging Face `datasets`, or a class or function of this file) may shard itself or be a
// stream: a warning whose evidence names that step, a note with `batch_size=None` (TG012-NX18).
// The framework and splat cases are silences: the loader that would have been reported is
// recorded with the framework (or the splat) that kept the rule quiet.
#include <algorithm>
#include <optional>
#include <unordered_set>

#include "analysis/frameworks.h"
#include "analysis/local_calls.h"
#include "analysis/names.h"
#include "analysis/torch_facts.h"
#include "rules/rule.h"

namespace preflight::rules {
namespace {

using namespace preflight::analysis;

constexpr unsigned kSamplerPosition = 3;
constexpr unsigned kBatchSamplerPosition = 4;

struct Candidate {
  TSNode call;
  int scope;
};

struct Marker {
  TSNode call;
  int function;  // -1: module level
};

using names::last_segment;

// The framework that builds and re-shards the loaders, and where the file shows it.
struct LoaderFramework {
  Framework framework;
  TSNode site;
};

struct Checker final : RuleCheck {
  const RuleContext& ctx;
  const Kinds& k = kinds();
  std::vector<Candidate> candidates;
  std::vector<Marker> markers;
  std::vector<std::vector<int>> callees;  // local functions each function calls
  std::optional<LoaderFramework> framework;  // the sampler-injecting framework seen, if any
  TSNode launch{};  // the first sign of a distributed launch besides deepspeed.initialize

  explicit Checker(const RuleContext& c) : ctx(c), callees(c.model.functions().size()) {
    note_framework_bases();
  }

  void enter(TSNode n, const WalkState& st) override {
    if (is_null(launch)) note_launch(n);
    if (!is(n, k.call)) return;
    int fn = ctx.model.enclosing_function(st.scope);
    if (is_torch_dataloader(ctx.model, n)) candidates.push_back({n, st.scope});
    if (never_runs(n, st.scope)) return;
    note_call(n, fn);
  }

  // Which loaders a marker governs follows calls in both directions (a caller of a function
  // that sets DDP up is distributed too), so the markers, the distributed functions and the
  // framework are context.
  void context(std::vector<ContextFact>& facts) const override {
    for (const Marker& m : markers) note_context(facts, "TG012 marker", m.call);
    if (framework) note_context(facts, "TG012 framework " + std::string(framework_name(framework->framework)), framework->site);
    note_context(facts, "TG012 launch", launch);
    if (markers.empty()) return;
    std::vector<bool> distributed = distributed_functions();
    for (size_t f = 0; f < distributed.size(); ++f) {
      TSNode name = field(ctx.model.functions()[f].node, k.f_name);
      if (distributed[f]) note_context(facts, "TG012 distributed function", name);
      // A loader in a function a distributed one calls is governed too: deleting that call
      // changes its findings although neither function's own facts change.
      else if (called_by_distributed(static_cast<int>(f), distributed))
        note_context(facts, "TG012 called by a distributed function", name);
    }
  }

  void finish(std::vector<Finding>& out) override {
    if (markers.empty()) return;
    std::vector<bool> distributed = distributed_functions();
    for (const Candidate& c : candidates) {
      const Marker* marker = governing_marker(c, distributed);
      if (!marker) continue;
      if (has_sampler(c) || dataset_sharded(c) || guarded(c.call)) continue;
      if (framework) silent_for_framework(c, *marker);
      else if (TSNode splat = splat_of(c.call); !is_null(splat)) silent_for_splat(c, splat);
      else if (single_process_deepspeed()) silent_for_single_process(c, *marker);
      else if (TSNode by = replaced_by(c); !is_null(by)) out.push_back(replaced_finding(c, *marker, by));
      else if (TSNode to = handed_to_unseen(c); !is_null(to)) out.push_back(handed_finding(c, *marker, to));
      else out.push_back(make_finding(c, *marker));
    }
  }

  // Every marker is `deepspeed.initialize` and nothing in the file shows a distributed launch.
  bool single_process_deepspeed() const {
    if (!is_null(launch)) return false;
    for (const Marker& m : markers)
      if (auto q = ctx.model.qualified_callee(m.call); !q || *q != "deepspeed.initialize") return false;
    return true;
  }

  void silent_for_single_process(const Candidate& c, const Marker& marker) {
    stay_silent("TG012", c.call,
                "`deepspeed.initialize` also runs as a single process (ZeRO-Offload on one GPU) "
                "and this file shows no distributed launch (no init_process_group, "
                "torch.distributed, deepspeed.init_distributed, local rank or launcher "
                "environment variable), so this loader is not reported",
                {{range_of(marker.call), "the only distributed set-up in this file: " +
                                             quote_code(text_of(marker.call, ctx.source))}});
  }

  // Signs that the file runs as one of several launched processes.
  void note_launch(TSNode n) {
    if (is(n, k.identifier)) {
      std::string_view id = text_of(n, ctx.source);
      if (id.size() == std::string_view("local_rank").size() && names::is_local_rank_name(names::lower(id)))
        launch = n;
    } else if (is(n, k.string)) {
      if (names::is_launcher_string(string_content(n, ctx.source))) launch = n;
    } else if (is(n, k.dotted_name)) {
      // `import torch.distributed as dist`, `from torch.distributed import ...`,
      // `from torch import distributed`, `from deepspeed import comm`.
      TSNode p = ctx.model.parent(n);
      if (is(p, k.aliased_import)) p = ctx.model.parent(p);
      if (!is(p, k.import_statement) && !is(p, k.import_from_statement)) return;
      std::string name(text_of(n, ctx.source));
      TSNode from = is(p, k.import_from_statement) ? field(p, k.f_module_name) : TSNode{};
      if (!is_null(from) && !ts_node_eq(from, n))
        name = std::string(text_of(from, ctx.source)) + "." + name;
      if (distributed_module(name)) launch = n;
    } else if (is(n, k.call)) {
      auto q = ctx.model.qualified_callee(n);
      if (q && (distributed_module(*q) || *q == "deepspeed.init_distributed" || q->starts_with("dist.")))
        launch = n;
    }
  }

  static bool distributed_module(std::string_view q) {
    for (std::string_view m : {"torch.distributed", "deepspeed.comm"})
      if (q == m || (q.starts_with(m) && q[m.size()] == '.')) return true;
    return false;
  }

  void silent_for_framework(const Candidate& c, const Marker& marker) {
    std::string who(framework_name(framework->framework));
    stay_silent("TG012", c.call,
                who + " builds the loaders it trains on and adds a distributed sampler to them, "
                      "so this loader is not reported",
                {{range_of(framework->site), quote_code(text_of(framework->site, ctx.source)) +
                                                 " shows the file runs under " + who},
                 {range_of(marker.call), "distributed training is set up here: " +
                                             quote_code(text_of(marker.call, ctx.source))}});
  }

  void silent_for_splat(const Candidate& c, TSNode splat) {
    stay_silent("TG012", c.call,
                quote_code(text_of(splat, ctx.source)) +
                    " may carry a `sampler=` that cannot be seen here, so this loader is not reported",
                {{range_of(splat), "the arguments passed through the splat are not visible"}});
  }

  // --- facts collected during the walk ----------------------------------------------------

  void note_framework(Framework f, TSNode site) {
    if (!framework) framework = LoaderFramework{f, site};
  }

  // A LightningModule, any class built on a Lightning base, or a Hugging Face Trainer subclass.
  void note_framework_bases() {
    for (const ClassInfo& cls : ctx.model.classes()) {
      TSNode bases = field(cls.node, k.f_superclasses);
      if (cls.is_lightning) note_framework(Framework::Lightning, bases);
      for (const std::string& base : cls.bases) {
        std::optional<Framework> f = framework_of_package(base);
        if (f == Framework::Lightning || f == Framework::Fabric) note_framework(*f, bases);
        if (is_hf_trainer(base)) note_framework(Framework::HfTrainer, bases);
      }
    }
  }

  static bool is_hf_trainer(std::string_view q) {
    return framework_of_package(q) == Framework::HfTrainer && q.ends_with("Trainer");
  }

  void note_call(TSNode call, int fn) {
    auto q = ctx.model.qualified_callee(call);
    std::string_view leaf = ctx.model.callee_leaf(call);
    if (q) {
      std::string_view ql = last_segment(*q);
      std::optional<Framework> f = framework_of_package(*q);
      if ((f == Framework::Lightning || f == Framework::Fabric) && (ql == "Trainer" || ql == "Fabric"))
        note_framework(*f, call);
      if (f == Framework::Accelerate && (ql == "Accelerator" || ql == "prepare_data_loader"))
        note_framework(Framework::Accelerate, call);
      if (is_hf_trainer(*q)) note_framework(Framework::HfTrainer, call);
      if (is_marker(*q, leaf)) {
        markers.push_back({call, fn});
        if (*q != "deepspeed.initialize" && is_null(launch)) launch = call;
      }
    }
    if (fn >= 0) note_local_call(call, fn);
  }

  static bool is_marker(std::string_view q, std::string_view leaf) {
    for (std::string_view m : {"DistributedDataParallel", "DDP", "init_process_group",
                               "FullyShardedDataParallel", "FSDP", "fully_shard"})
      if (leaf == m || last_segment(q) == m) return true;
    return q == "deepspeed.initialize" || q == "deepspeed.init_distributed";
  }

  void note_local_call(TSNode call, int fn) {
    if (const std::vector<int>* fs = local_callees(ctx.model, call))
      for (int g : *fs) callees[fn].push_back(g);
  }

  // --- is the loader torch's DataLoader, and is it under DDP? -------------------------------

  // `world_size = 1 ... if world_size > 1: model = DDP(model)`: the branch sits under a
  // comparison of a name bound only to an integer literal with an integer, and that
  // comparison is false, so nothing in it runs (TG012-NX15, round 9: opacus' benchmark).
  bool never_runs(TSNode n, int scope) const {
    TSNode child = n;
    for (TSNode p = ctx.model.parent(n); !is_null(p); child = p, p = ctx.model.parent(p)) {
      if (is(p, k.function_definition) || is(p, k.class_definition) || is(p, k.lambda)) return false;
      if ((is(p, k.if_statement) || is(p, k.elif_clause)) && ts_node_eq(field(p, k.f_consequence), child) &&
          constant_comparison(field(p, k.f_condition), scope) == false)
        return true;
    }
    return false;
  }

  std::optional<long long> integer_value(TSNode e, int scope) const {
    e = unparenthesize(e);
    if (is(e, k.identifier)) {
      std::string_view name = text_of(e, ctx.source);
      const std::vector<BindingSite>* sites = ctx.model.bindings_of(name, scope);
      if (!sites || sites->size() != 1 || (*sites)[0].arity != 1 || ctx.model.parameter(name, scope))
        return std::nullopt;
      e = unparenthesize((*sites)[0].value);
    }
    if (!is(e, k.integer)) return std::nullopt;
    std::string digits(text_of(e, ctx.source));
    if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 12)
      return std::nullopt;
    return std::stoll(digits);
  }

  // The value of `a OP b` when both sides are integer constants; nullopt otherwise.
  std::optional<bool> constant_comparison(TSNode cond, int scope) const {
    cond = unparenthesize(cond);
    if (!is(cond, k.comparison_operator) || ts_node_named_child_count(cond) != 2) return std::nullopt;
    auto a = integer_value(ts_node_named_child(cond, 0), scope);
    auto b = integer_value(ts_node_named_child(cond, 1), scope);
    if (!a || !b) return std::nullopt;
    for (auto [op, holds] : {std::pair<std::string_view, bool>{">", *a > *b}, {">=", *a >= *b},
                             {"<", *a < *b}, {"<=", *a <= *b}, {"==", *a == *b}, {"!=", *a != *b}})
      if (has_operator(cond, op)) return holds;
    return std::nullopt;
  }

  // A function is distributed when it (or a function nested in it) sets DDP up, or when it
  // calls a local function that is.
  std::vector<bool> distributed_functions() const {
    const auto& fns = ctx.model.functions();
    std::vector<bool> d(fns.size(), false);
    for (const Marker& m : markers)
      for (int f = m.function; f >= 0; f = outer_function(f)) d[f] = true;
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t f = 0; f < fns.size(); ++f)
        for (int g : callees[f])
          if (!d[f] && d[g]) d[f] = changed = true;
    }
    return d;
  }

  int outer_function(int f) const {
    int scope = ctx.model.functions()[f].scope;
    return ctx.model.enclosing_function(ctx.model.scopes()[scope].parent);
  }

  // The marker that puts this loader under DDP: module-level set-up governs every function;
  // otherwise the loader's function (or one enclosing it) must be distributed, or be called
  // by a distributed function.
  const Marker* governing_marker(const Candidate& c, const std::vector<bool>& distributed) const {
    for (const Marker& m : markers)
      if (m.function < 0) return &m;
    for (int f = ctx.model.enclosing_function(c.scope); f >= 0; f = outer_function(f)) {
      if (distributed[f] || called_by_distributed(f, distributed)) return &markers.front();
    }
    return nullptr;
  }

  bool called_by_distributed(int f, const std::vector<bool>& distributed) const {
    for (size_t g = 0; g < callees.size(); ++g)
      if (distributed[g])
        for (int h : callees[g])
          if (h == f) return true;
    return false;
  }

  // --- sharding evidence --------------------------------------------------------------------

  TSNode argument(TSNode call, std::string_view name, unsigned position) const {
    TSNode v = keyword_arg(call, name, ctx.source);
    return is_null(v) ? positional_arg(call, position) : v;
  }

  TSNode splat_of(TSNode call) const {
    TSNode found{};
    for_each_named_child(field(call, k.f_arguments), [&](TSNode c) {
      if (is_null(found) && (is(c, k.dictionary_splat) || is(c, k.list_splat))) found = c;
    });
    return found;
  }

  bool has_sampler(const Candidate& c) const {
    TSNode batch = argument(c.call, "batch_sampler", kBatchSamplerPosition);
    TSNode sampler = argument(c.call, "sampler", kSamplerPosition);
    return may_shard(batch, c.scope, 0) || may_shard(sampler, c.scope, 0);
  }

  // Could this sampler expression shard by rank? `None`, RandomSampler and SequentialSampler
  // never do; a name is followed to its bindings (any binding that may shard counts); a
  // conditional counts when a branch does; anything unknown (a custom sampler, a parameter)
  // is trusted.
  bool may_shard(TSNode e, int scope, int depth) const {
    if (is_null(e)) return false;
    e = unparenthesize(e);
    if (depth > 3) return true;
    if (is(e, k.none)) return false;
    if (is(e, k.call)) {
      std::string_view leaf = ctx.model.callee_leaf(e);
      return leaf != "RandomSampler" && leaf != "SequentialSampler";
    }
    if (is(e, k.conditional_expression)) {
      bool any = false;
      uint32_t n = ts_node_named_child_count(e);
      for (uint32_t i = 0; i < n; i += 2) any = any || may_shard(ts_node_named_child(e, i), scope, depth + 1);
      return any;
    }
    if (is(e, k.identifier) || is(e, k.attribute)) {
      const std::vector<BindingSite>* sites = bindings_of(e, scope);
      if (!sites) return true;
      for (const BindingSite& b : *sites)
        if (may_shard(b.value, scope, depth + 1)) return true;
      return false;
    }
    return true;
  }

  const std::vector<BindingSite>* bindings_of(TSNode e, int scope) const {
    auto d = dotted_name(e, ctx.source);
    return d ? ctx.model.bindings_of(*d, scope) : nullptr;
  }

  // A dataset built with the rank shards itself: `split_dataset_by_node(ds, rank=...)`,
  // `ds.shard(num_shards=world, index=rank)`, `Shards(path, rank=rank)`, or a local dataset
  // class whose body reads the rank.
  bool dataset_sharded(const Candidate& c) const {
    return shards_by_rank(argument(c.call, "dataset", 0), c.scope, 0);
  }

  // Where the loader's dataset comes from, when that is seen: a class of torch's data
  // libraries (torch, torchvision, torchaudio, torchtext, MONAI), Hugging Face `datasets`, a class or
  // function of this file, reached through names, subscripts and dataset methods
  // (`ds.map(...)`). A dataset an unseen callee builds may shard itself by rank or be a stream
  // that takes no sampler (round 12: torchrec's RandomRecDataset yields ready batches): the
  // claim that every rank walks the same data then rests on that step. Returns the weak
  // step's node (null when the origin is seen) and says why in `why`.
  TSNode unseen_dataset(TSNode e, int scope, int depth, std::string& why,
                        std::vector<const void*>* path = nullptr) const {
    std::vector<const void*> own;
    if (!path) path = &own;
    e = unparenthesize(e);
    if (is_null(e)) return e;
    if (depth > 6) {
      why = quote_code(text_of(e, ctx.source)) + " is built too far away to follow";
      return e;
    }
    if (is(e, k.call)) {
      TSNode callee = field(e, k.f_function);
      if (auto q = ctx.model.qualified_callee(e)) {
        for (std::string_view lib : {"torch.", "torchvision.", "torchaudio.", "torchtext.", "datasets.", "monai.data."})
          if (q->starts_with(lib)) return TSNode{};
      }
      if (is(callee, k.identifier) && ctx.model.class_named(text_of(callee, ctx.source)) >= 0) return TSNode{};
      // A function of this file: what every one of its returns builds.
      if (const std::vector<int>* fs = is(callee, k.identifier) ? ctx.model.functions_named(text_of(callee, ctx.source)) : nullptr) {
        bool any = false;
        for (int f : *fs)
          for (TSNode ret : ctx.model.functions()[f].returns) {
            TSNode value = ts_node_named_child(ret, 0);
            if (is_null(value)) continue;
            any = true;
            if (TSNode weak = unseen_dataset(value, ctx.model.functions()[f].scope, depth + 1, why, path); !is_null(weak))
              return weak;
          }
        if (any) return TSNode{};
      }
      static constexpr std::string_view kDatasetMethods[] = {"map", "filter", "shuffle", "select", "with_format",
                                                             "remove_columns", "rename_column", "set_format"};
      if (is(callee, k.attribute) && std::ranges::find(kDatasetMethods, ctx.model.callee_leaf(e)) != std::end(kDatasetMethods))
        return unseen_dataset(field(callee, k.f_object), scope, depth + 1, why, path);
      why = quote_code(text_of(e, ctx.source)) + " builds the dataset with a callee this file does not define: " +
            "whether it shards by rank, or is a stream that takes no sampler, is not visible";
      return e;
    }
    if (is(e, k.subscript)) return unseen_dataset(field(e, k.f_value), scope, depth + 1, why, path);
    // A name: what each of its assignments builds. A parameter or an unpacked value counts as
    // seen, as in the reference's verified cases (TG012-P01: `DataLoader(train_set, ...)` with
    // `train_set` a parameter is an error): a stream that shards itself is built, not passed.
    if (is(e, k.identifier) || is(e, k.attribute)) {
      if (const std::vector<BindingSite>* sites = bindings_of(e, scope))
        for (const BindingSite& b : *sites) {
          // `ds = ds.map(f)` refers to itself: a binding already on the path adds nothing.
          if (is_null(b.value) || b.position >= 0 || std::ranges::find(*path, node_id(b.value)) != path->end()) continue;
          path->push_back(node_id(b.value));
          TSNode weak = unseen_dataset(b.value, scope, depth + 1, why, path);
          path->pop_back();
          if (!is_null(weak)) return weak;
        }
      return TSNode{};
    }
    why = quote_code(text_of(e, ctx.source)) + " is not a dataset this analysis can see";
    return e;
  }

  // Follows names to their bindings (two hops), through calls and their arguments.
  bool shards_by_rank(TSNode e, int scope, int depth) const {
    if (is_null(e) || depth > 2) return false;
    if (mentions_rank(e) || mentions_topology(e)) return true;
    if (is(e, k.call)) {
      std::string_view leaf = ctx.model.callee_leaf(e);
      if (leaf == "split_dataset_by_node" || leaf == "shard") return true;
      TSNode callee = field(e, k.f_function);
      int cls = is(callee, k.identifier) ? ctx.model.class_named(text_of(callee, ctx.source)) : -1;
      if (cls >= 0 && mentions_rank(ctx.model.classes()[cls].node)) return true;
    }
    if (is(e, k.identifier) || is(e, k.attribute)) {
      if (const std::vector<BindingSite>* sites = bindings_of(e, scope))
        for (const BindingSite& b : *sites)
          if (shards_by_rank(b.value, scope, depth + 1)) return true;
      if (is(e, k.identifier)) return false;
    }
    bool found = false;
    for_each_named_child(e, [&](TSNode c) { found = found || shards_by_rank(c, scope, depth); });
    return found;
  }

  // `Subset(ds, range(len(sampler) * world_size, len(ds)))`: indices computed from the world
  // size are a deliberate split (the remainder a DistributedSampler dropped), not an oversight;
  // so is the launcher's topology read from the environment (`os.environ["WORLD_SIZE"]`).
  bool mentions_topology(TSNode n) const {
    if (is(n, k.identifier)) {
      std::string id = names::lower(text_of(n, ctx.source));
      return names::contains(id, "world_size") || id == "get_world_size";
    }
    // `os.environ["WORLD_SIZE"]` (round 33: a streaming dataset told the node count): the
    // launcher's topology read from the environment.
    if (is(n, k.string)) {
      std::string_view v = string_content(n, ctx.source);
      return v == "WORLD_SIZE" || v == "LOCAL_WORLD_SIZE" || v == "RANK" || v == "LOCAL_RANK" || v == "NODE_RANK";
    }
    if (is(n, k.comment)) return false;
    bool found = false;
    for_each_named_child(n, [&](TSNode c) { found = found || mentions_topology(c); });
    return found;
  }

  // An identifier naming the process's rank (`rank`, `local_rank`, `get_rank`).
  bool mentions_rank(TSNode n) const {
    if (is(n, k.identifier)) return names::contains(names::lower(text_of(n, ctx.source)), "rank");
    if (is(n, k.string) || is(n, k.comment)) return false;
    bool found = false;
    for_each_named_child(n, [&](TSNode c) { found = found || mentions_rank(c); });
    return found;
  }

  // --- one rank only, or the non-distributed branch -------------------------------------

  bool guarded(TSNode call) const {
    TSNode child = call;
    for (TSNode p = ctx.model.parent(call); !is_null(p); child = p, p = ctx.model.parent(p)) {
      if (is(p, k.function_definition) || is(p, k.class_definition)) return false;
      TSNode cond{};
      bool positive = true;
      if ((is(p, k.if_statement) || is(p, k.elif_clause)) &&
          ts_node_eq(field(p, k.f_consequence), child)) {
        cond = field(p, k.f_condition);
      } else if (is(p, k.else_clause) && is(ctx.model.parent(p), k.if_statement)) {
        cond = field(ctx.model.parent(p), k.f_condition);
        positive = false;
      }
      if (!is_null(cond) && guard_excludes_ddp(cond, positive)) return true;
      if (is(p, k.if_statement) && sibling_branch_shards(p, call)) return true;
    }
    return false;
  }

  // `if args.distributed and args.num_gpu > 1: DataLoader(..., sampler=DistributedSampler(ds))
  // else: DataLoader(..., shuffle=True)` (round 56): another branch of the same `if` builds a
  // loader with a sampler that shards, so the condition is the file's distributed switch and
  // the branch holding `call` is the path without it, whatever the condition reads.
  bool sibling_branch_shards(TSNode if_statement, TSNode call) const {
    ByteRange own = branch_of(if_statement, call);
    if (own.begin == kNoBranch) return false;
    for (const Candidate& other : candidates) {
      if (ts_node_eq(other.call, call) || !inside(other.call, if_statement)) continue;
      if (inside(other.call, own) || branch_of(if_statement, other.call).begin == kNoBranch) continue;
      if (has_sampler(other)) return true;
    }
    return false;
  }

  static constexpr uint32_t kNoBranch = UINT32_MAX;
  // The byte range of the branch (consequence, elif or else clause) of `if_statement` that
  // holds `n`; {kNoBranch, kNoBranch} when `n` sits in its condition.
  ByteRange branch_of(TSNode if_statement, TSNode n) const {
    TSNode child = n;
    for (TSNode p = ctx.model.parent(n); !is_null(p) && !ts_node_eq(p, if_statement); p = ctx.model.parent(p))
      child = p;
    if (is(child, k.block) || is(child, k.elif_clause) || is(child, k.else_clause))
      return {ts_node_start_byte(child), ts_node_end_byte(child)};
    return {kNoBranch, kNoBranch};
  }

  static bool inside(TSNode n, TSNode outer) {
    return ts_node_start_byte(n) >= ts_node_start_byte(outer) && ts_node_end_byte(n) <= ts_node_end_byte(outer);
  }
  static bool inside(TSNode n, ByteRange r) {
    return ts_node_start_byte(n) >= r.begin && ts_node_end_byte(n) <= r.end;
  }

  // True when the branch the loader sits in runs on one rank only, or only without DDP.
  bool guard_excludes_ddp(TSNode cond, bool positive) const {
    cond = unparenthesize(cond);
    if (is(cond, k.not_operator)) return guard_excludes_ddp(ts_node_named_child(cond, 0), !positive);
    if (is(cond, k.boolean_operator)) {
      // Taken only if both hold (`and`): either one restricting the branch is enough; taken if
      // either holds (`or`): both must restrict it.
      if (!positive) return false;
      bool left = guard_excludes_ddp(field(cond, k.f_left), true);
      bool right = guard_excludes_ddp(field(cond, k.f_right), true);
      return text_of(field(cond, k.f_operator), ctx.source) == "and" ? left || right : left && right;
    }
    if (positive && (single_rank_test(cond) || no_rank_test(cond))) return true;
    if (distributed_test(cond)) return positive != holds_when_distributed(cond);
    return false;
  }

  bool single_rank_test(TSNode cond) const {
    if (is(cond, k.comparison_operator))
      return mentions_rank(cond) && has_operator(cond, "==") && has_literal(cond, "0");
    auto d = is(cond, k.call) ? dotted_name(field(cond, k.f_function), ctx.source)
                              : dotted_name(cond, ctx.source);
    if (!d) return false;
    std::string_view leaf = last_segment(*d);
    for (std::string_view m : {"is_main_process", "is_local_main_process", "is_master",
                               "master_process", "is_rank_zero", "is_global_zero"})
      if (leaf == m) return true;
    return false;
  }

  // `args.local_rank == -1`: the launcher assigned no rank, so this run is not distributed.
  bool no_rank_test(TSNode cond) const {
    return is(cond, k.comparison_operator) && mentions_rank(cond) && has_operator(cond, "==") &&
           has_literal(cond, "-1");
  }

  // `args.distributed`, `ddp`, `dist.is_initialized()`, `world_size > 1`.
  bool distributed_test(TSNode cond) const {
    auto d = is(cond, k.call) ? dotted_name(field(cond, k.f_function), ctx.source)
                              : dotted_name(cond, ctx.source);
    if (d) {
      std::string leaf = names::lower(last_segment(*d));
      return names::contains(leaf, "distributed") || leaf == "ddp" || leaf == "is_initialized";
    }
    if (!is(cond, k.comparison_operator)) return false;
    bool world = false;
    for_each_named_child(cond, [&](TSNode c) {
      auto n = dotted_name(c, ctx.source);
      world = world || (n && names::contains(names::lower(last_segment(*n)), "world_size"));
    });
    return world;
  }

  // `world_size == 1` holds only without DDP; every other distributed test holds with it.
  bool holds_when_distributed(TSNode cond) const {
    return !(is(cond, k.comparison_operator) && has_operator(cond, "==") && has_literal(cond, "1"));
  }

  bool has_operator(TSNode cmp, std::string_view op) const {
    uint32_t n = ts_node_child_count(cmp);
    for (uint32_t i = 0; i < n; ++i) {
      TSNode c = ts_node_child(cmp, i);
      if (!ts_node_is_named(c) && text_of(c, ctx.source) == op) return true;
    }
    return false;
  }

  bool has_literal(TSNode cmp, std::string_view value) const {
    bool found = false;
    for_each_named_child(cmp, [&](TSNode c) {
      found = found || ((is(c, k.integer) || is(c, k.unary_operator)) && text_of(c, ctx.source) == value);
    });
    return found;
  }

  // `model, opt, loader = engine.make_private(..., data_loader=loader)`: a later binding of the
  // loader's name comes from a call that receives the loader, and that call is not seen here
  // (not a function of this file, not an iterable wrapper such as `iter` or `tqdm`). What the
  // code iterates from then on is that call's loader. Null when there is none.
  TSNode replaced_by(const Candidate& c) const {
    auto name = bound_name(c.call);
    if (!name) return TSNode{};
    const std::vector<BindingSite>* sites = ctx.model.bindings_of(*name, c.scope);
    if (!sites) return TSNode{};
    for (const BindingSite& b : *sites) {
      TSNode v = unparenthesize(b.value);
      if (!is(v, k.call) || ts_node_start_byte(v) <= ts_node_end_byte(c.call)) continue;
      if (names::is_iterable_wrapper(ctx.model.callee_leaf(v)) || defined_here(v)) continue;
      if (!runs_whenever(v, c.call)) continue;  // `if not args.disable_dp: ... = make_private(...)`
      if (receives(v, {*name})) return v;
    }
    return TSNode{};
  }

  // One of `names` is an argument of the call (positional or keyword).
  bool receives(TSNode call, const std::vector<std::string>& names) const {
    bool found = false;
    for_each_named_child(field(call, k.f_arguments), [&](TSNode a) {
      if (is(a, k.keyword_argument)) a = field(a, k.f_value);
      auto d = dotted_name(a, ctx.source);
      found = found || (d && std::find(names.begin(), names.end(), *d) != names.end());
    });
    return found;
  }

  // `x = {"train": DataLoader(...)}` / `x = [DataLoader(...)]`: `x` (nullopt otherwise).
  std::optional<std::string> literal_holder(TSNode call) const {
    TSNode p = ctx.model.parent(call);
    if (is(p, k.pair)) p = ctx.model.parent(p);
    if (!is(p, k.dictionary) && !is(p, k.list) && !is(p, k.tuple)) return std::nullopt;
    TSNode a = ctx.model.parent(p);
    if (!is(a, k.assignment) || !ts_node_eq(field(a, k.f_right), p)) return std::nullopt;
    TSNode left = field(a, k.f_left);
    if (!is(left, k.identifier) && !is(left, k.attribute)) return std::nullopt;
    return dotted_name(left, ctx.source);
  }

  // A loader whose use this file does not show (no loop iterates it) and that is handed —
  // itself or in a dict / list literal — to a call this file does not define
  // (`runner.train(loaders={"train": loader})`): whatever iterates it may shard it, so the
  // claim rests on an unknown callee. The call, or null.
  TSNode handed_to_unseen(const Candidate& c) const {
    if (purpose(c).use != Use::Unknown) return TSNode{};
    std::vector<std::string> names;
    if (auto n = bound_name(c.call)) names.push_back(*n);
    else if (auto holder = literal_holder(c.call)) names.push_back(*holder);
    if (names.empty()) return TSNode{};
    TSNode region = region_of(names.front(), c.scope);
    if (is_null(region)) return TSNode{};
    // One level of literals that hold the loader: `loaders = {"train": loader, "valid": loader}`.
    std::vector<TSNode> todo{region};
    while (!todo.empty()) {
      TSNode n = todo.back();
      todo.pop_back();
      if (is(n, k.assignment) && holds_a_name(field(n, k.f_right), names.front()))
        if (auto d = dotted_name(field(n, k.f_left), ctx.source)) names.push_back(*d);
      for_each_named_child(n, [&](TSNode ch) { todo.push_back(ch); });
    }
    TSNode found{};
    ctx.model.for_each_call_in(region, [&](TSNode call) {
      if (!is_null(found) || ts_node_start_byte(call) <= ts_node_start_byte(c.call)) return;
      if (!defined_here(call) && !shards_nothing(call) && receives(call, names)) found = call;
    });
    return found;
  }

  // A call of a function or a class this file defines: what it does with the loader is seen
  // (an `InfiniteIterator(loader)` wrapper class shards nothing the file does not show).
  bool defined_here(TSNode call) const {
    if (local_callees(ctx.model, call)) return true;
    TSNode callee = field(call, k.f_function);
    return is(callee, k.identifier) && ctx.model.class_named(text_of(callee, ctx.source)) >= 0;
  }

  // A dict / list / tuple literal with `name` among its elements or values.
  bool holds_a_name(TSNode e, const std::string& name) const {
    e = unparenthesize(e);
    if (!is(e, k.dictionary) && !is(e, k.list) && !is(e, k.tuple)) return false;
    bool found = false;
    for_each_named_child(e, [&](TSNode el) {
      if (is(el, k.pair)) el = field(el, k.f_value);
      auto d = dotted_name(el, ctx.source);
      found = found || (d && *d == name);
    });
    return found;
  }

  // Builtins and wrappers that only look at or walk a loader (`len`, `print`, `iter`,
  // `enumerate`): handing it to them shards nothing.
  bool shards_nothing(TSNode call) const {
    std::string_view leaf = ctx.model.callee_leaf(call);
    if (names::is_iterable_wrapper(leaf)) return true;
    for (std::string_view b : {"len", "print", "next", "isinstance", "str", "repr", "type", "id", "hasattr", "getattr"})
      if (leaf == b && is(field(call, k.f_function), k.identifier)) return true;
    return false;
  }

  Finding handed_finding(const Candidate& c, const Marker& marker, TSNode to) const {
    std::string callee(text_of(field(to, k.f_function), ctx.source));
    return unseen_callee_note(c, marker, to,
                              "no loop in this file iterates it: it is handed to `" + callee +
                                  "(...)`, and if what iterates it there does not shard it",
                              quote_code(callee) + " receives the loader; whether it shards it is not seen here (an unknown callee)");
  }

  // True when `later` runs whenever `first` does: no branch, loop or handler lies between
  // `later` and the block that holds `first`'s statement.
  bool runs_whenever(TSNode later, TSNode first) const {
    TSNode block{};
    for (TSNode p = first; !is_null(p); p = ctx.model.parent(p)) {
      TSNode parent = ctx.model.parent(p);
      if (!is_null(parent) && (is(parent, k.block) || is(parent, k.module))) { block = parent; break; }
    }
    for (TSNode p = ctx.model.parent(later); !is_null(p); p = ctx.model.parent(p)) {
      if (ts_node_eq(p, block)) return true;
      if (is(p, k.if_statement) || is(p, k.elif_clause) || is(p, k.else_clause) || is(p, k.for_statement) ||
          is(p, k.while_statement) || is(p, k.try_statement) || is(p, k.conditional_expression) ||
          is(p, k.function_definition) || is(p, k.lambda))
        return false;
    }
    return false;
  }

  Finding replaced_finding(const Candidate& c, const Marker& marker, TSNode by) const {
    std::string callee(text_of(field(by, k.f_function), ctx.source));
    return unseen_callee_note(c, marker, by,
                              "the code goes on with the loader `" + callee +
                                  "(...)` returns in its place: if that call does not shard it",
                              quote_code(callee) + " receives the loader and its result replaces it; "
                                                   "what it does is not seen here (an unknown callee)");
  }

  // The claim rests on a call this file does not show: a note whose evidence names it.
  Finding unseen_callee_note(const Candidate& c, const Marker& marker, TSNode call, const std::string& why_unsure,
                             std::string evidence) const {
    Finding f = make_finding(c, marker);
    f.severity = Severity::Note;
    f.message = quote_code(text_of(c.call, ctx.source)) + " has no DistributedSampler, and " + why_unsure +
                ", every rank walks the full dataset.";
    f.evidence.push_back({range_of(call), std::move(evidence)});
    return f;
  }

  // --- the finding ------------------------------------------------------------------------

  // The name the loader is stored under: an assignment target (plain or annotated), a dict
  // key, or the name of the function that returns it.
  std::string loader_name(TSNode call) const {
    TSNode child = call;
    for (TSNode p = ctx.model.parent(call); !is_null(p); child = p, p = ctx.model.parent(p)) {
      if (is(p, k.assignment)) return std::string(text_of(field(p, k.f_left), ctx.source));
      if (is(p, k.pair)) return std::string(text_of(ts_node_named_child(p, 0), ctx.source));
      if (is(p, k.return_statement)) {
        for (TSNode f = ctx.model.parent(p); !is_null(f); f = ctx.model.parent(f))
          if (is(f, k.function_definition)) return std::string(text_of(field(f, k.f_name), ctx.source));
        return {};
      }
      if (!is(p, k.argument_list) && !is(p, k.call) && !is(p, k.parenthesized_expression) &&
          !is(p, k.keyword_argument) && !is(p, k.conditional_expression))
        return {};
    }
    return {};
  }

  // --- what the loader is for -------------------------------------------------------------

  enum class Use { Unknown, Training, Evaluation };

  struct Purpose {
    Use use = Use::Unknown;
    TSNode site{};     // the loop (or the name) that shows it
    std::string why;   // the evidence step
    bool by_name = false;  // rests on a naming heuristic
  };

  // The dotted name the loader is bound to (`val_dl = DataLoader(...)`, `self.val_dl = ...`).
  std::optional<std::string> bound_name(TSNode call) const {
    TSNode p = ctx.model.parent(call);
    while (is(p, k.parenthesized_expression)) p = ctx.model.parent(p);
    if (!is(p, k.assignment) || !ts_node_eq(unparenthesize(field(p, k.f_right)), call)) return std::nullopt;
    TSNode left = field(p, k.f_left);
    if (!is(left, k.identifier) && !is(left, k.attribute)) return std::nullopt;
    return dotted_name(left, ctx.source);
  }

  // Where a bound name can be iterated: its function (closures included), the class for
  // instance state, the whole file for a module-level name.
  TSNode region_of(const std::string& name, int scope) const {
    if (name.starts_with("self.")) {
      int cls = ctx.model.enclosing_class(scope);
      return cls >= 0 ? ctx.model.classes()[cls].node : TSNode{};
    }
    int f = ctx.model.enclosing_function(scope);
    return f >= 0 ? ctx.model.functions()[f].node : ctx.root;
  }

  // The loops over `name` in `region`, and those over the parameter of a local helper the
  // name is handed to (two levels).
  void iteration_sites(const std::string& name, TSNode region, int depth, std::vector<TSNode>& loops) const {
    if (is_null(region) || depth > 2) return;
    find_loops(region, name, loops);
    ctx.model.for_each_call_in(region, [&](TSNode call) {
      const FunctionInfo* fn = local_callee(ctx.model, call);
      if (!fn) return;
      for (size_t i = 0; i < fn->params.size(); ++i) {
        TSNode arg = argument_for(*fn, call, i, ctx.source);
        auto d = is_null(arg) ? std::nullopt : dotted_name(arg, ctx.source);
        if (d && *d == name) iteration_sites(fn->params[i].name, fn->node, depth + 1, loops);
      }
    });
  }

  void find_loops(TSNode n, const std::string& name, std::vector<TSNode>& loops) const {
    if (is(n, k.for_statement))
      for (TSNode it : unwrap_iterables(field(n, k.f_right), ctx.source))
        if (auto d = dotted_name(it, ctx.source); d && *d == name) {
          loops.push_back(n);
          break;
        }
    for_each_named_child(n, [&](TSNode c) { find_loops(c, name, loops); });
  }


  // `X.eval()` earlier in the loop's function, with no `.train()` between it and the loop.
  TSNode eval_before(TSNode loop) const {
    TSNode fn{};
    for (TSNode p = ctx.model.parent(loop); !is_null(p); p = ctx.model.parent(p))
      if (is(p, k.function_definition)) { fn = p; break; }
    TSNode body = is_null(fn) ? ctx.root : field(fn, k.f_body);
    TSNode last{};
    uint32_t start = ts_node_start_byte(loop);
    ctx.model.for_each_call_in(body, [&](TSNode call) {
      if (ts_node_start_byte(call) >= start || !is(ctx.model.callee_of(call), k.attribute)) return;
      std::string_view leaf = ctx.model.callee_leaf(call);
      if (leaf == "eval" && is_null(positional_arg(call, 0))) last = call;
      else if (leaf == "train") last = TSNode{};
    });
    return last;
  }

  Purpose loop_purpose(TSNode loop, const std::string& name) const {
    std::string who = quote_code(name);
    if (ctx.provenance.in_no_grad(loop) || ctx.provenance.in_no_grad(field(loop, k.f_right)))
      return {Use::Evaluation, loop, who + " is iterated with autograd off (no_grad / inference mode): "
                                         "it feeds evaluation"};
    if (runs_backward(ctx.model, loop))
      return {Use::Training, loop, who + " is iterated by a loop that runs a backward: it feeds training"};
    if (TSNode ev = eval_before(loop); !is_null(ev))
      return {Use::Evaluation, ev, quote_code(text_of(ev, ctx.source)) + " switches to evaluation mode "
                                   "before " + who + " is iterated, and that loop runs no backward"};
    for (TSNode p = ctx.model.parent(loop); !is_null(p); p = ctx.model.parent(p))
      if (is(p, k.function_definition)) {
        std::string_view fname = text_of(field(p, k.f_name), ctx.source);
        if (names::is_evaluation_function_name(fname))
          return {Use::Evaluation, field(p, k.f_name),
                  who + " is iterated in " + quote_code(fname) + ", named like an evaluation "
                  "routine (naming heuristic), by a loop that runs no backward", true};
        break;
      }
    return {};
  }

  // Usage first: a loop that trains on it makes it a training loader, loops that only
  // evaluate make it an evaluation loader; only when no loop says, its name decides.
  Purpose purpose(const Candidate& c) const {
    if (auto name = bound_name(c.call)) {
      std::vector<TSNode> loops;
      iteration_sites(*name, region_of(*name, c.scope), 0, loops);
      Purpose eval;
      for (TSNode loop : loops) {
        Purpose p = loop_purpose(loop, *name);
        if (p.use == Use::Training) return p;
        if (p.use == Use::Evaluation && (eval.use == Use::Unknown || (eval.by_name && !p.by_name))) eval = p;
      }
      if (eval.use == Use::Evaluation) return eval;
    }
    if (TSNode guard = script_that_never_trains(); !is_null(guard))
      return {Use::Evaluation, guard,
              "this script (" + quote_code(text_of(guard, ctx.source)) +
                  ") never runs a backward: no `.backward()` or `autograd.grad` anywhere in the file, so its "
                  "loaders feed evaluation or inference"};
    std::string stored = loader_name(c.call);
    if (!stored.empty() && names::is_evaluation_loader_name(stored))
      return {Use::Evaluation, c.call, quote_code(stored) + " is named like an evaluation loader "
                                       "(naming heuristic)", true};
    return {};
  }

  // The `if __name__ == "__main__":` test of a file in which nothing backwards (round 24:
  // CodeReviewer's run_test_* / run_infer_* scripts): a script that runs and never trains. A
  // module without that guard may hand its loaders to a trainer elsewhere. Null otherwise.
  TSNode script_that_never_trains() const {
    if (!ctx.model.module_backward_calls().empty()) return TSNode{};
    for (const FunctionInfo& fn : ctx.model.functions())
      if (fn.calls_backward || fn.calls_autograd_grad) return TSNode{};
    TSNode guard{};
    for_each_named_child(ctx.root, [&](TSNode st) {
      if (!is_null(guard) || !is(st, k.if_statement)) return;
      TSNode test = field(st, k.f_condition);
      std::string_view t = text_of(test, ctx.source);
      if (t.find("__name__") != std::string_view::npos && t.find("__main__") != std::string_view::npos) guard = test;
    });
    return guard;
  }

  Finding make_finding(const Candidate& c, const Marker& marker) const {
    Finding f;
    f.code = "TG012";
    f.category = Category::ConvergenceBug;
    f.range = range_of(c.call);
    std::string loader = quote_code(text_of(c.call, ctx.source));
    f.evidence.push_back({range_of(marker.call), "distributed training is set up here: " +
                                                     quote_code(text_of(marker.call, ctx.source))});
    f.evidence.push_back({range_of(field(c.call, k.f_arguments)), sampler_evidence(c)});
    if (Purpose p = purpose(c); p.use == Use::Evaluation) {
      f.severity = Severity::Note;
      f.category = Category::PerformanceWarn;
      f.message = loader + " has no DistributedSampler and feeds evaluation: each rank scores the "
                           "complete set, so the metric is right but the same work is repeated "
                           "on every GPU.";
      f.hint = "If the repeated work matters, shard it with `sampler=DistributedSampler(dataset, "
               "shuffle=False)` and reduce the metric across ranks, or evaluate on a single rank.";
      f.evidence.push_back({range_of(p.site), p.why});
      return f;
    } else if (p.use == Use::Training) {
      f.evidence.push_back({range_of(p.site), p.why});
    }
    f.severity = Severity::Error;
    std::string unseen_why;
    if (TSNode weak = unseen_dataset(argument(c.call, "dataset", 0), c.scope, 0, unseen_why); !is_null(weak)) {
      // `batch_size=None` hands over batches the dataset makes itself: a stream's shape.
      bool ready_batches = is(unparenthesize(argument(c.call, "batch_size", 1)), k.none);
      f.severity = ready_batches ? Severity::Note : Severity::Warning;
      f.evidence.push_back({range_of(weak), unseen_why + (ready_batches ? " (and `batch_size=None`: it yields "
                                                                          "ready batches, the shape of a stream; "
                                                                          "weak step: reported as a note)"
                                                                        : " (weak step: reported as a warning)")});
    }
    f.message = loader + " has no DistributedSampler: every rank walks the full dataset, so all "
                         "ranks compute gradients from the same batches.";
    if (has_literal_true_keyword(c.call, "shuffle", ctx.source))
      f.message += " `shuffle=True` does not help: each rank shuffles the same way, which "
                   "distributes nothing.";
    f.hint = has_literal_true_keyword(c.call, "shuffle", ctx.source)
                 ? "Pass `sampler=DistributedSampler(dataset)` instead of `shuffle=True` (the two cannot "
                   "be combined) and call `sampler.set_epoch(epoch)` at the start of every epoch."
                 : "Pass `sampler=DistributedSampler(dataset)` and call `sampler.set_epoch(epoch)` at the "
                   "start of every epoch.";
    return f;
  }

  std::string sampler_evidence(const Candidate& c) const {
    TSNode sampler = argument(c.call, "sampler", kSamplerPosition);
    if (is_null(sampler))
      return "no `sampler=` or `batch_sampler=`, and no framework (Lightning, Accelerate, the "
             "Hugging Face Trainer) in this file re-shards the loader";
    return quote_code(text_of(sampler, ctx.source)) + " does not shard the data by rank";
  }
};

}  // namespace

std::unique_ptr<RuleCheck> make_tg012(const RuleContext& ctx) { return std::make_unique<Checker>(ctx); }

}  // namespace preflight::rules
