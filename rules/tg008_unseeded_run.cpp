// TG008 unseeded-run: a training run draws random numbers from a generator that is never
// seeded, so two runs of the same code give different results.
//
// Evidence chain: the file trains (an attribute `.backward(...)` call) -> the first draw of
// each generator that is part of training (module level, a function that backwards, or a
// local helper such a function calls), attributed to torch / NumPy / `random` by resolving
// the callee through the file's imports (`from random import randint` is stdlib,
// TG008-N06) -> which generators are seeded anywhere in the file -> one finding at the
// first draw of the first generator left unseeded: a warning when another generator is
// seeded (the intent is visible), a note when nothing is.
// Exempt: draws passing `generator=`; draws in test functions (pytest `test_*`, TestCase
// methods: seeded by fixtures elsewhere). Silent, with the reason recorded: Lightning files;
// a library module that seeds nothing itself and has no entry point (only imports,
// definitions, constants and optional-import `try` blocks at its top level) and no loop that
// trains (a loss or step function called by a program elsewhere, TG008-NX22), where a loop
// that backwards and steps nothing does not train (TG008-NX24); a file where no
// loop runs a backward and no call steps (a `__main__` smoke test backwarding once, TG008-NX23);
// a library seed-everything helper (`seed_everything`, `set_seed`, ..., or ColossalAI's
// `launch*(seed=...)`) that is not a
// function of this file (a local `set_seed` is judged by what its body seeds). CUDA-only seeding does not seed torch's CPU
// generator; `np.random.default_rng()` without a seed seeds nothing and its draws count as
// unseeded NumPy draws (TG008-N07). A torch draw with `device=` other than the CPU comes from
// the device generators, which a CUDA seed (`torch.cuda.manual_seed*`, DeepSpeed's
// `get_accelerator().manual_seed*`) covers (TG008-NX20, PX20); so is a `*_like(t)` draw, which
// takes t's device.
// A seed handed to a function of another project module before the draw
// (`data_prep_openml(..., opt.dset_seed)`) may seed NumPy or `random` there: the claim that
// nothing seeds them rests on a guess about that callee, so the finding is a note and its
// evidence names the call (TG008-NX25). A module without an entry point whose unseeded
// generators another file of the project seeds is silent (TG008-NX27), also when it seeds
// another generator itself (TG008-NX28). A draw inside a seeding call's arguments
// (`torch.manual_seed(random.randint(0, 2**63))`) only picks a seed and is no draw of the run
// (TG008-NX26).
#include <array>
#include <optional>

#include "analysis/local_calls.h"
#include "analysis/names.h"
#include "analysis/project_index.h"
#include "rules/rule.h"

namespace preflight::rules {
namespace {

using namespace preflight::analysis;

enum Gen { kTorch, kNumpy, kStdlib, kGenCount };
constexpr std::array<std::string_view, kGenCount> kGenName = {"torch", "NumPy", "the `random` module"};
constexpr std::array<std::string_view, kGenCount> kSeedCall = {"torch.manual_seed(...)", "np.random.seed(...)",
                                                               "random.seed(...)"};

constexpr std::string_view kTorchDraws[] = {"rand", "randn", "randint", "randperm", "rand_like", "randn_like",
                                            "randint_like", "bernoulli", "multinomial", "normal", "poisson"};
constexpr std::string_view kStdlibDraws[] = {"random", "randint", "randrange", "choice", "choices", "shuffle",
                                             "sample", "uniform", "gauss", "normalvariate", "getrandbits"};
// numpy.random functions that draw nothing.
constexpr std::string_view kNumpyNonDraws[] = {"seed", "default_rng", "get_state", "set_state", "RandomState",
                                               "Generator", "SeedSequence", "BitGenerator", "PCG64", "MT19937"};
// Launchers that seed torch, NumPy and `random` with their `seed=` argument (ColossalAI's
// `launch*` call its own seed-everything helper).
constexpr std::string_view kSeedingLaunchers[] = {"colossalai.launch", "colossalai.launch_from_torch",
                                                  "colossalai.launch_from_slurm",
                                                  "colossalai.launch_from_openmpi"};
// Methods of a NumPy Generator that draw (rng.integers(...), rng.normal(...)).
constexpr std::string_view kGeneratorDraws[] = {"random", "integers", "normal", "uniform", "choice", "shuffle",
                                                "permutation", "standard_normal", "binomial", "poisson", "beta"};

// Top-level modules of libraries, whose functions use a seed for a generator of their own
// (`train_test_split(random_state=seed)`, `random_split(generator=...)`): a seed passed to
// them seeds no global generator.
constexpr std::string_view kLibraryModules[] = {
    "torch",  "numpy",   "random",       "sklearn",           "scipy",      "pandas",     "os",
    "sys",    "math",    "time",         "json",              "datasets",   "transformers", "lightning",
    "pytorch_lightning", "accelerate",   "timm",              "torchvision", "torchaudio", "gym",
    "gymnasium", "tensorflow", "jax",    "hydra",             "omegaconf",  "argparse",   "wandb"};

template <size_t N>
bool in(const std::string_view (&list)[N], std::string_view s) {
  for (auto x : list)
    if (x == s) return true;
  return false;
}

struct Checker final : RuleCheck {
  const RuleContext& ctx;
  const Kinds& k = kinds();
  bool trains = false;
  TSNode first_backward{};  // the call that makes `trains` true
  TSNode lightning{};  // the import or LightningModule that makes this a Lightning file
  TSNode seeds_everything{};
  std::array<TSNode, kGenCount> first_draw{}, seeded{};
  TSNode cuda_seed{};  // torch.cuda.manual_seed[_all]: CUDA generators only
  TSNode seed_handoff{};  // the first call passing a seed to another project module's function
  // The first torch draw with `device=` other than the CPU, or a `*_like(t)` draw, which
  // takes t's device (not shown to be the CPU).
  TSNode first_device_draw{};
  std::vector<char> training_function;

  explicit Checker(const RuleContext& c) : ctx(c) { mark_training_functions(); }

  // Functions that backward, and the local helpers they call (one level): a draw in
  // `augment()` called from the training loop is part of the run.
  void mark_training_functions() {
    const auto& fs = ctx.model.functions();
    training_function.assign(fs.size(), 0);
    for (size_t i = 0; i < fs.size(); ++i) {
      if (!fs[i].calls_backward) continue;
      training_function[i] = 1;
      mark_callees(fs[i].node);
    }
  }

  // Every local function a call inside `n` may run (the call table, not a walk of `n`).
  void mark_callees(TSNode n) {
    ctx.model.for_each_call_in(n, [&](TSNode call) {
      if (const std::vector<int>* fs = local_callees(ctx.model, call))
        for (int f : *fs) training_function[f] = 1;
    });
  }

  void enter(TSNode n, const WalkState& st) override {
    if (is(n, k.import_from_statement)) {
      TSNode mod = field(n, k.f_module_name);
      if (!is_null(mod) && names::contains(text_of(mod, ctx.source), "lightning") && is_null(lightning))
        lightning = n;
    } else if (is(n, k.class_definition)) {
      int c = ctx.model.class_named(text_of(field(n, k.f_name), ctx.source));
      if (c >= 0 && ctx.model.classes()[c].is_lightning && is_null(lightning))
        lightning = field(n, k.f_superclasses);
    } else if (is(n, k.call)) {
      on_call(n, st);
    }
  }

  void on_call(TSNode call, const WalkState& st) {
    TSNode callee = ctx.model.callee_of(call);
    std::string_view leaf = ctx.model.callee_leaf(call);
    if (leaf.empty()) return;
    if (leaf == "backward" && is(callee, k.attribute) && !trains) {
      trains = true;
      first_backward = call;
    }
    auto q = ctx.model.qualified_callee(call);
    if (names::is_seed_everything_helper(leaf) && !(is(callee, k.identifier) && ctx.model.functions_named(leaf))) {
      if (is_null(seeds_everything)) seeds_everything = call;
      return;
    }
    if (seeds_the_accelerator(callee, leaf)) {
      if (is_null(cuda_seed)) cuda_seed = call;
      return;
    }
    if (!q) return;
    if (in(kSeedingLaunchers, *q) && !is_null(keyword_arg(call, "seed", ctx.source))) {
      if (is_null(seeds_everything)) seeds_everything = call;
      return;
    }
    if (record_seed(call, *q, leaf)) return;
    if (is_null(seed_handoff) && hands_a_seed_to_project_code(call, callee, *q)) seed_handoff = call;
    if (!is_null(keyword_arg(call, "generator", ctx.source)) || !part_of_training(st.scope)) return;
    if (draws_a_seed(call)) return;
    int gen = generator_of(callee, *q, leaf, st.scope);
    if (gen == kTorch && (on_a_device(call) || leaf.ends_with("_like"))) {
      if (is_null(first_device_draw)) first_device_draw = call;  // seeded by a CUDA seed
      return;
    }
    if (gen >= 0 && is_null(first_draw[gen])) first_draw[gen] = call;
  }

  // `torch.manual_seed(random.randint(0, 2**63))`: a draw inside a seeding call's arguments only
  // picks the seed (round 51: airbench re-randomises torch on purpose when no seed is given);
  // the run itself draws from the generator being seeded, not from this one (TG008-NX26).
  bool draws_a_seed(TSNode call) const {
    for (TSNode p = ctx.model.parent(call); !is_null(p); p = ctx.model.parent(p)) {
      if (is(p, k.call)) {
        std::string_view leaf = ctx.model.callee_leaf(p);
        if (leaf == "manual_seed" || leaf == "manual_seed_all" || leaf == "seed") return true;
      }
      if (is(p, k.expression_statement) || is(p, k.block) || is(p, k.lambda) || is(p, k.function_definition))
        return false;
    }
    return false;
  }

  // DeepSpeed's `get_accelerator().manual_seed(s)` / `manual_seed_all(s)` seeds the device
  // generators, as torch.cuda.manual_seed does (read by the accessor's name).
  bool seeds_the_accelerator(TSNode callee, std::string_view leaf) const {
    if ((leaf != "manual_seed" && leaf != "manual_seed_all") || !is(callee, k.attribute)) return false;
    TSNode recv = unparenthesize(field(callee, k.f_object));
    return is(recv, k.call) && ctx.model.callee_leaf(recv) == "get_accelerator";
  }

  // `torch.randn(..., device=dev)` with `dev` not the CPU: drawn from the device's generator,
  // which `torch.cuda.manual_seed` (or an accelerator's) seeds.
  bool on_a_device(TSNode call) const {
    TSNode dev = keyword_arg(call, "device", ctx.source);
    if (is_null(dev)) return false;
    std::string_view t = text_of(dev, ctx.source);
    return t.find("cpu") == std::string_view::npos;
  }

  bool record_seed(TSNode call, std::string_view q, std::string_view leaf) {
    auto set = [&](TSNode& slot) {
      if (is_null(slot)) slot = call;
      return true;
    };
    bool bare = q.find('.') == std::string::npos;
    if (leaf == "manual_seed" || leaf == "manual_seed_all") {
      if (q.starts_with("torch.cuda.")) return set(cuda_seed);
      if (q.starts_with("torch.") || bare) return set(seeded[kTorch]);
      return true;  // g.manual_seed(0) on a Generator object seeds no global generator
    }
    if (q.starts_with("numpy.random.") || q.starts_with("np.random.")) {
      if (leaf == "seed") return set(seeded[kNumpy]);
      // default_rng(seed) seeds the generator it returns; without a seed it seeds nothing.
      if (leaf == "default_rng") return is_null(positional_arg(call, 0)) || set(seeded[kNumpy]);
    }
    if (q == "random.seed") return set(seeded[kStdlib]);
    return false;
  }

  // `data_prep_openml(opt.dset_id, opt.dset_seed, ...)` (round 45: SAINT's data preparation
  // seeds NumPy with it, in a module this file imports): a seed handed to a function of
  // another module of the project, which this file cannot see.
  bool hands_a_seed_to_project_code(TSNode call, TSNode callee, std::string_view q) const {
    if (is(callee, k.identifier) && ctx.model.functions_named(text_of(callee, ctx.source))) return false;
    auto d = dotted_name(callee, ctx.source);
    if (!d || !ctx.model.import_of(d->substr(0, d->find('.')))) return false;
    if (in(kLibraryModules, q.substr(0, q.find('.')))) return false;
    bool seed = false;
    for_each_named_child(field(call, k.f_arguments), [&](TSNode a) {
      seed = seed || names::names_a_seed(names::lower(text_of(a, ctx.source)));
    });
    return seed;
  }

  bool part_of_training(int scope) const {
    // A test checks one step on tiny random inputs; its seeding lives in fixtures (conftest)
    // this file cannot see.
    int f = ctx.model.enclosing_function(scope);
    return f < 0 || (training_function[f] && !ctx.model.is_test_function(f));
  }

  int generator_of(TSNode callee, std::string_view q, std::string_view leaf, int scope) const {
    bool numpy = q.starts_with("numpy.random.") || q.starts_with("np.random.");
    if (numpy) return in(kNumpyNonDraws, leaf) ? -1 : kNumpy;
    if (q.starts_with("random.")) return in(kStdlibDraws, leaf) ? kStdlib : -1;
    if (in(kTorchDraws, leaf)) {
      bool bare = is(callee, k.identifier) && !ctx.model.import_of(leaf) && !ctx.model.functions_named(leaf);
      if (q.starts_with("torch.") || bare) return kTorch;
    }
    if (is(callee, k.attribute) && in(kGeneratorDraws, leaf) && unseeded_numpy_generator(field(callee, k.f_object), scope))
      return kNumpy;
    return -1;
  }

  // `rng` bound (in a visible scope) to `np.random.default_rng()` / `RandomState()` with no seed.
  bool unseeded_numpy_generator(TSNode recv, int scope) const {
    auto d = dotted_name(recv, ctx.source);
    const std::vector<BindingSite>* sites = d ? ctx.model.bindings_of(*d, scope) : nullptr;
    if (!sites) return false;
    for (const BindingSite& b : *sites) {
      TSNode v = unparenthesize(b.value);
      if (!is(v, k.call)) return false;
      auto q = ctx.model.qualified_name(field(v, k.f_function));
      bool ctor = q && (*q == "numpy.random.default_rng" || *q == "numpy.random.RandomState");
      TSNode args = field(v, k.f_arguments);
      if (!ctor || ts_node_named_child_count(args) > 0) return false;
    }
    return true;
  }

  // TG008 judges the whole file at once: every input of `finish` is context.
  void context(std::vector<ContextFact>& facts) const override {
    note_context(facts, "TG008 trains", first_backward);
    note_context(facts, "TG008 lightning", lightning);
    note_context(facts, "TG008 seeds everything", seeds_everything);
    note_context(facts, "TG008 CUDA seed", cuda_seed);
    note_context(facts, "TG008 seed handoff", seed_handoff);
    // Read only when a draw is left with nothing seeded (the library-module silence), and
    // anchored on their first token, so an edit inside a loop or a `__main__` block leaves
    // them as they were.
    bool any_draw = !is_null(first_device_draw);
    bool any_seed = !is_null(cuda_seed);
    for (int g = 0; g < kGenCount; ++g) {
      any_draw = any_draw || !is_null(first_draw[g]);
      any_seed = any_seed || !is_null(seeded[g]);
    }
    if (trains && any_draw && !any_seed) {
      note_context(facts, "TG008 entry point", first_token(entry_point()));
      note_context(facts, "TG008 stepping loop", first_token(first_stepping_loop()));
    }
    if (trains && any_draw) {
      note_context(facts, "TG008 training loop", first_token(first_training_loop()));
      note_context(facts, "TG008 step call", first_step_call());
    }
    note_context(facts, "TG008 device draw", first_device_draw);
    for (int g = 0; g < kGenCount; ++g) {
      note_context(facts, "TG008 draw " + std::to_string(g), first_draw[g]);
      note_context(facts, "TG008 seeded " + std::to_string(g), seeded[g]);
    }
  }

  void finish(std::vector<Finding>& out) override {
    if (!trains) return;
    // A draw on a device is unseeded unless a CUDA seed covers it.
    if (!is_null(first_device_draw) && is_null(cuda_seed) &&
        (is_null(first_draw[kTorch]) || ts_node_start_byte(first_device_draw) < ts_node_start_byte(first_draw[kTorch])))
      first_draw[kTorch] = first_device_draw;
    std::vector<int> missing, have;
    for (int g = 0; g < kGenCount; ++g) {
      if (!is_null(seeded[g])) have.push_back(g);
      else if (!is_null(first_draw[g])) missing.push_back(g);
    }
    if (missing.empty()) return;
    TSNode draw = first_draw[missing.front()];
    if (!is_null(seeds_everything))
      return stay_silent("TG008", draw,
                         "a seed-everything helper from a library seeds every generator, so the "
                         "unseeded draw is not reported",
                         {{range_of(seeds_everything), quote_code(text_of(seeds_everything, ctx.source)) +
                                                           " seeds torch, NumPy and `random` together"}});
    if (!is_null(lightning))
      return stay_silent("TG008", draw,
                         "Lightning runs are seeded with `seed_everything`, usually in a launcher "
                         "this file does not show, so an unseeded draw in a Lightning file is not "
                         "reported",
                         {{range_of(lightning), quote_code(text_of(lightning, ctx.source)) +
                                                    " makes this a Lightning file"}});
    // Nothing is seeded here and the module has no entry point: whether the run is seeded is
    // decided by the program that imports it (round 35: TRADES' loss module, seeded by every
    // training script that imports it).
    // A loop that backwards but steps nothing (round 42: a virtual-adversarial perturbation's
    // power iteration in a decoder module) computes a gradient for its caller and trains
    // nothing itself (TG008-NX24).
    // The same module with its own training loop, and another file of the project seeds every
    // generator it draws from: the program that runs it starts there (round 63: TreeLSTM's
    // trainer, seeded by main.py; round 64: a DQN agent module, seeded by the `learn` helper
    // that loads it). Which file runs which is not followed: a project-level step.
    // Also when this module seeds another generator itself (round 86: mjrl's dynamics model
    // seeds torch in its constructor, and the run scripts seed NumPy, TG008-NX28).
    if (is_null(entry_point()) && ctx.project) {
      static constexpr uint8_t kBit[kGenCount] = {kSeedsTorch, kSeedsNumpy, kSeedsRandom};
      std::vector<EvidenceStep> ev;
      for (int g : missing)
        if (std::string at = ctx.project->seeded_elsewhere(kBit[g], ctx.project_path); !at.empty())
          ev.push_back({range_of(draw), "the project seeds " + std::string(kGenName[g]) + " at " + at +
                                            " (another file: a project-level step)"});
      if (ev.size() == missing.size())
        return stay_silent("TG008", draw,
                           "a module without an entry point, run by a program elsewhere in the project, and "
                           "another file of the project seeds every generator it draws from",
                           std::move(ev));
    }
    if (have.empty() && is_null(cuda_seed) && is_null(entry_point()) && is_null(first_stepping_loop()))
      return stay_silent("TG008", draw,
                         "a library module: its top level only imports, defines and assigns constants and no "
                         "loop in it trains (backwards and steps), so it runs inside a program that seeds (or "
                         "not) at its own start-up");
    // No loop trains and nothing steps: the backward runs once, outside every loop (a module's
    // `__main__` smoke test of a backbone's output and gradient, round 38: RT-DETR's HGNetv2).
    // Nothing is trained, so nothing is unrepeatable about a training run (TG008-NX23).
    if (is_null(first_training_loop()) && is_null(first_step_call()))
      return stay_silent("TG008", draw,
                         "no training run: no loop in this file runs a backward and nothing steps, so its "
                         "backward is a one-off check of gradients, not training",
                         {{range_of(first_backward), quote_code(text_of(first_backward, ctx.source)) + " runs outside every loop"}});
    out.push_back(make_finding(missing, have));
  }

  // The first call whose callee's last segment mentions `step` (`optimizer.step()`,
  // `scaler.step(opt)`, `train_step(batch)`): a run that may update parameters. Null when none.
  TSNode first_step_call() const {
    if (!step_call_) {
      TSNode found{};
      ctx.model.for_each_call_in(ctx.root, [&](TSNode c) {
        if (is_null(found) && mentions_step(c)) found = c;
      });
      step_call_ = found;
    }
    return *step_call_;
  }
  mutable std::optional<TSNode> step_call_;

  bool mentions_step(TSNode call) const { return names::names_a_step(ctx.model.callee_leaf(call)); }

  // Read by `finish` and again by `context`: each found once.
  TSNode first_training_loop() const {
    if (!training_loop_) training_loop_ = find_loop(false);
    return *training_loop_;
  }
  // The first such loop that also holds a call whose callee mentions `step`
  // (`optimizer.step()`, `scaler.step(opt)`): a loop that updates parameters.
  TSNode first_stepping_loop() const {
    if (!stepping_loop_) stepping_loop_ = find_loop(true);
    return *stepping_loop_;
  }
  TSNode entry_point() const {
    if (!entry_point_) entry_point_ = find_entry_point();
    return *entry_point_;
  }
  mutable std::optional<TSNode> training_loop_, stepping_loop_, entry_point_;

  // A loop anywhere in the file that backwards (directly or through a local helper): the file
  // runs training passes itself, whoever calls it (TG008-P01's `fit`). With `must_step`, only
  // a loop that also steps. Null when none.
  TSNode find_loop(bool must_step) const {
    TSNode found{};
    auto steps = [&](TSNode loop) {
      bool any = false;
      ctx.model.for_each_call_in(loop, [&](TSNode c) { any = any || mentions_step(c); });
      return any;
    };
    auto visit = [&](auto&& self, TSNode n) -> void {
      if (!is_null(found)) return;
      if ((is(n, k.for_statement) || is(n, k.while_statement)) && runs_backward(ctx.model, n) &&
          (!must_step || steps(n))) {
        found = n;
        return;
      }
      for_each_named_child(n, [&](TSNode c) { self(self, c); });
    };
    visit(visit, ctx.root);
    return found;
  }

  // The first top-level statement that makes this file a program rather than a library: a
  // call, a loop, an `if __name__ == "__main__":` block, an assignment computed by a call...
  // Null when the top level only imports, defines classes and functions, and binds constants.
  TSNode find_entry_point() const {
    TSNode found{};
    for_each_named_child(ctx.root, [&](TSNode st) {
      if (is_null(found) && !library_statement(st)) found = st;
    });
    return found;
  }

  bool library_statement(TSNode st) const {
    TSSymbol s = sym(st);
    if (s == k.import_statement || s == k.import_from_statement || s == k.function_definition ||
        s == k.class_definition || s == k.decorated_definition || s == k.comment ||
        std::string_view(ts_node_type(st)) == "future_import_statement")
      return true;
    if (s == k.expression_statement) {
      TSNode e = ts_node_named_child(st, 0);
      if (is(e, k.string)) return true;  // a docstring
      if (!is(e, k.assignment)) return false;
      bool calls = false;
      if (TSNode right = field(e, k.f_right); !is_null(right))
        ctx.model.for_each_call_in(right, [&](TSNode) { calls = true; });
      return !calls;  // a constant (or an annotation alone)
    }
    // `try: import apex` / `except ImportError: apex = None`: an optional import.
    if (s == k.try_statement) {
      bool only = true;
      auto block_of = [&](TSNode part) {
        if (is(part, k.block)) return part;
        TSNode b{};
        for_each_named_child(part, [&](TSNode c) { if (is(c, k.block)) b = c; });
        return b;
      };
      for_each_named_child(st, [&](TSNode part) {
        if (TSNode b = block_of(part); !is_null(b))
          for_each_named_child(b, [&](TSNode x) { only = only && library_statement(x); });
      });
      return only;
    }
    return false;
  }


  static std::string join_names(const std::vector<int>& gens, const std::array<std::string_view, kGenCount>& what) {
    std::string s;
    for (size_t i = 0; i < gens.size(); ++i) {
      if (i) s += i + 1 == gens.size() ? " and " : ", ";
      s += what[gens[i]];
    }
    return s;
  }

  Finding make_finding(const std::vector<int>& missing, const std::vector<int>& have) const {
    Finding f;
    f.code = "TG008";
    f.category = Category::ConvergenceBug;
    TSNode anchor = first_draw[missing.front()];
    f.range = range_of(anchor);
    std::string drawn = join_names(missing, kGenName);
    bool partial = !have.empty() || !is_null(cuda_seed);
    bool handed_off = !is_null(seed_handoff) && ts_node_start_byte(seed_handoff) < ts_node_start_byte(anchor);
    f.severity = partial && !handed_off ? Severity::Warning : Severity::Note;
    if (partial) {
      std::string seeded_names = have.empty() ? "torch's CUDA generator" : join_names(have, kGenName);
      f.message = seeded_names + (have.size() > 1 ? " are" : " is") + " seeded but " + drawn +
                  ", which the run also draws from, " + (missing.size() > 1 ? "are" : "is") +
                  " not: seeding one generator does nothing for another, so results still change "
                  "between runs.";
    } else {
      f.message = drawn + (missing.size() > 1 ? " are" : " is") +
                  " drawn from and nothing is seeded, so the run is not repeatable and a changed "
                  "result cannot be pinned on a code change.";
    }
    f.hint = "At start-up call " + join_names(missing, kSeedCall) +
             ", or one helper that seeds everything (`seed_everything` / `set_seed`).";
    for (int g : missing)
      f.evidence.push_back({range_of(first_draw[g]), quote_code(text_of(first_draw[g], ctx.source)) + " draws from " +
                                                         std::string(kGenName[g]) +
                                                         (handed_off ? ", which nothing in this file seeds" : ", which nothing seeds")});
    for (int g : have)
      f.evidence.push_back({range_of(seeded[g]), quote_code(text_of(seeded[g], ctx.source)) + " seeds " +
                                                     std::string(kGenName[g]) + " only"});
    if (!is_null(cuda_seed))
      f.evidence.push_back({range_of(cuda_seed), quote_code(text_of(cuda_seed, ctx.source)) +
                                                     " seeds only the CUDA generators, not torch's CPU generator"});
    if (handed_off)
      f.evidence.push_back({range_of(seed_handoff),
                            quote_code(text_of(seed_handoff, ctx.source)) + " hands a seed to `" +
                                std::string(ctx.model.callee_leaf(seed_handoff)) +
                                "`, which this file does not show: whether it seeds " + drawn +
                                " is a guess (weak step: at most a note)"});
    return f;
  }
};

}  // namespace

std::unique_ptr<RuleCheck> make_tg008(const RuleContext& ctx) { return std::make_unique<Checker>(ctx); }

}  // namespace preflight::rules
