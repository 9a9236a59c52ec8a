// TG013 redundant-device-transfer: the same host-to-device copy runs on every iteration of a
// loop, although the data does not change between iterations.
//
// Evidence chain: the `.to(<device>)` / `.cuda()` call and why its destination is a device
// (`device=`, a cuda/mps literal, a `torch.device(...)` call or a name bound to one, a name
// containing `device`) -> the enclosing loop -> why the copied value is the same each pass:
// a host factory (`torch.arange(16)`) built in the loop without `device=`, a model, or a
// name that nothing in the loop rebinds or modifies in place (`.append`, `.add_`, ...).
// Exempt: downloads (`.to("cpu")`); dtype casts (a module's `.to(device, dtype=...)` too) and
// destinations that cannot be shown to be
// a device (`.to(dev)` with `dev` a bare parameter); destinations and values bound by the
// loop (batch transfers, `for dev in devices`), comprehension targets, lambda parameters
// (bound per call), `x = x.to(device)`; a `.cuda()` whose current device the loop sets
// (`with torch.cuda.device(i)`, `set_device(i)`) or a copy selected by a branch on the
// variable of a loop over a literal list of configurations (`if device == "cuda":`);
// a device restored after a `.cpu()` / `.to(device="cpu")` of the same object in the loop
// (checkpointing, EMA offloading) or an object refilled in place there (`load_state_dict`);
// a model on which the loop calls, as a statement of its own, a method other than torch's
// bookkeeping (`net.add_head(n)` may add parameters on the host, TG013-NX43);
// a loop that runs once (`for _ in range(1)`, TG013-NX31; `n = 0` ... `while n < 1:` ending in
// `n += 1`, TG013-NX37) or loops of literal trip counts that make at most ten passes in all
// (`for i in range(10):` in a module's self-test, module code only, TG013-NX40, recorded as a
// silence); copies in an `except` clause inside the loop (run only when the `try` body raises,
// TG013-NX53, recorded as a silence); copies in a test function (pytest `test_*`, a TestCase
// method, TG013-NX41, recorded
// as a silence); a copy assigned behind `if x is None:`
// (or `not x`), or behind `if i == 0:` on a `range` / `enumerate` counter, in the loop: made
// once (TG013-NX32, recorded as a silence); a loop over files, whose body opens or decodes
// the file its own variable names (`Image.open(path)`, `torch.load(path)`, TG013-NX36,
// recorded as a silence);
// a factory with a literal 0 in its shape, which copies no bytes (TG013-NX39, recorded as a
// silence); a copy behind an every-N guard with a literal N of at least 10 (`if (i + 1) % 100
// == 0:`, TG013-NX44, recorded as a silence; `% 4` is still reported; a period this file does not
// fix, `% args.sample_every`, makes the finding a note, TG013-NX45); a copy stored under the variable of a loop that trains nothing, nor do the loops around it
// (`for key in pde: t[key] = torch.linspace(...).to(device)`: a table built once per key,
// TG013-NX42, recorded as a silence); tensors created with `device=` or moved once before the loop (already resident, `.to`
// returns them unchanged, TG013-P06). A note: a copy in a loop of a class's `__init__` that
// trains nothing (set-up work, once per object built, TG013-NX52). A note: a parameter of a module's `forward` moved in a
// loop there (`t.cuda()` per block: its callers decide where it lives, TG013-NX46). Silent, with the reason recorded: `torch.tensor(x)` /
// `as_tensor` / `from_numpy` of data that changes in the loop (new bytes each pass: the
// transfer the loop needs; `device=` would copy the same bytes). Not a transfer: `m.to(...)`
// where `m` is a module an `import` statement binds (`data.common.to(x, device=d)`, a helper
// function of the project, TG013-NX47).
#include <algorithm>
#include <cstdlib>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "analysis/local_calls.h"
#include "analysis/names.h"
#include "analysis/reaching.h"
#include "rules/rule.h"

namespace preflight::rules {
namespace {

using namespace preflight::analysis;

constexpr std::string_view kHostFactories[] = {"tensor", "zeros", "ones",   "full",      "empty",
                                               "arange", "linspace", "eye", "as_tensor", "from_numpy",
                                               "randn",  "rand",  "randint"};
// Container methods that change the receiver's contents in place.
constexpr std::string_view kMutators[] = {"append", "extend", "insert", "pop",     "remove", "clear",
                                          "update", "setdefault", "add", "discard", "popitem", "sort",
                                          "reverse"};
// Factories whose first argument is the data they hold (the rest only shape or type it).
constexpr std::string_view kDataFactories[] = {"tensor", "as_tensor", "from_numpy"};
constexpr std::string_view kCasts[] = {"float", "half", "double", "long", "int", "bool", "bfloat16"};

template <size_t N>
bool in(const std::string_view (&list)[N], std::string_view s) {
  for (auto x : list)
    if (x == s) return true;
  return false;
}

std::string root_of(const std::string& dotted) { return dotted.substr(0, dotted.find('.')); }

struct Checker final : RuleCheck {
  const RuleContext& ctx;
  const Kinds& k = kinds();
  std::vector<Finding> out;
  mutable std::unordered_map<const void*, std::unordered_set<std::string>> assigned_cache;
  std::unordered_map<const void*, TSNode> file_reads;  // loop -> its per-pass file read (or null)
  std::unordered_map<const void*, TSNode> nested_steps;  // loop -> a backward in its body (or null)

  explicit Checker(const RuleContext& c) : ctx(c) {}

  void finish(std::vector<Finding>& sink) override {
    for (Finding& f : out) sink.push_back(std::move(f));
  }

  // Every dotted target assigned anywhere in `loop` (so a value rebound later in the body,
  // carried to the next iteration, counts as changing).
  const std::unordered_set<std::string>& assigned_in(TSNode loop) const {
    auto [it, fresh] = assigned_cache.try_emplace(node_id(loop));
    if (fresh) collect_assigned(loop, it->second);
    return it->second;
  }

  void collect_assigned(TSNode n, std::unordered_set<std::string>& set) const {
    TSSymbol s = sym(n);
    if (s == k.assignment || s == k.augmented_assignment || s == k.for_statement || s == k.for_in_clause)
      add_targets(field(n, k.f_left), set);
    else if (s == k.named_expression) add_targets(field(n, k.f_name), set);
    else if (s == k.as_pattern) add_targets(field(n, k.f_alias), set);
    else if (s == k.call) add_mutated(n, set);
    for_each_named_child(n, [&](TSNode c) { collect_assigned(c, set); });
  }

  // `stats.append(x)`, `buf.add_(g)`, `cache.update(...)`: the receiver's contents change in
  // the loop even though no assignment rebinds it, so a copy of it carries new bytes.
  void add_mutated(TSNode call, std::unordered_set<std::string>& set) const {
    TSNode callee = field(call, k.f_function);
    if (!is(callee, k.attribute)) return;
    std::string_view leaf = ctx.model.callee_leaf(call);
    TSNode recv = unparenthesize(field(callee, k.f_object));
    // `buf.add_(g)` changes a tensor; `accelerator.clip_grad_norm_(...)` changes the
    // gradients it is given, not its receiver: in place only on a value that is a tensor.
    const analysis::Value* rv = ctx.provenance.value_of(recv);
    bool tensor_receiver = rv && (rv->type == analysis::Type::Tensor || rv->type == analysis::Type::Tensors);
    bool in_place = tensor_receiver && leaf.size() > 1 && leaf.ends_with('_') && !leaf.starts_with('_') &&
                    leaf != "requires_grad_" && leaf != "share_memory_";
    if (!in_place && !in(kMutators, leaf)) return;
    while (is(recv, k.subscript)) recv = unparenthesize(field(recv, k.f_value));
    if (auto d = dotted_name(recv, ctx.source)) set.insert(*d);
  }

  void add_targets(TSNode t, std::unordered_set<std::string>& set) const {
    if (is_null(t)) return;
    if (auto d = dotted_name(t, ctx.source)) {
      set.insert(*d);
      return;
    }
    if (is(t, k.subscript)) return add_targets(field(t, k.f_value), set);
    for_each_named_child(t, [&](TSNode c) { add_targets(c, set); });
  }

  // Is `dotted` (or its root, or a prefix of it) rebound by an enclosing loop or
  // comprehension between the call and the function?
  bool varies(const std::string& dotted, TSNode at, const WalkState& st) {
    auto hit = [&](const std::unordered_set<std::string>& set) {
      if (set.count(dotted) || set.count(root_of(dotted))) return true;
      for (size_t dot = dotted.find('.'); dot != std::string::npos; dot = dotted.find('.', dot + 1))
        if (set.count(dotted.substr(0, dot))) return true;
      return false;
    };
    for (const LoopFrame& loop : st.loops)
      if (hit(assigned_in(loop.node))) return true;
    for (TSNode p = ctx.model.parent(at); !is_null(p); p = ctx.model.parent(p)) {
      TSSymbol s = sym(p);
      if (s == k.function_definition || s == k.for_statement || s == k.while_statement) break;
      if (s == k.lambda && lambda_binds(p, root_of(dotted))) return true;  // bound per call
      if (s == k.list_comprehension || s == k.set_comprehension || s == k.dictionary_comprehension ||
          s == k.generator_expression) {
        if (hit(assigned_in(p))) return true;
      }
    }
    return false;
  }

  // `lambda t: t.to(dev)`: the lambda's parameters are bound anew on every call, so a value
  // read through them is never the same object pass after pass.
  bool lambda_binds(TSNode lambda, const std::string& name) const {
    TSNode params = field(lambda, k.f_parameters);
    bool found = false;
    if (!is_null(params))
      for_each_named_child(params, [&](TSNode p) {
        TSNode id = is(p, k.identifier) ? p : is(p, k.default_parameter) ? field(p, k.f_name) : ts_node_named_child(p, 0);
        if (!is_null(id) && is(id, k.identifier) && text_of(id, ctx.source) == name) found = true;
      });
    return found;
  }

  // Any identifier inside `e` that the loop rebinds.
  bool reads_varying(TSNode e, const WalkState& st) {
    std::unordered_set<std::string> local;
    return reads_varying(e, st, local);
  }

  // `local`: names a comprehension inside `e` binds (`[10**i for i in range(n)]` reads `n`,
  // not a loop-carried `i`).
  bool reads_varying(TSNode e, const WalkState& st, std::unordered_set<std::string>& local) {
    if (is(e, k.identifier)) {
      std::string name(text_of(e, ctx.source));
      return !local.count(name) && varies(name, e, st);
    }
    if (is(e, k.keyword_argument)) return reads_varying(field(e, k.f_value), st, local);
    if (is(e, k.list_comprehension) || is(e, k.set_comprehension) || is(e, k.generator_expression) ||
        is(e, k.dictionary_comprehension)) {
      std::unordered_set<std::string> inner = local;
      for_each_named_child(e, [&](TSNode c) {
        if (is(c, k.for_in_clause)) collect_names(field(c, k.f_left), inner);
      });
      bool found = false;
      for_each_named_child(e, [&](TSNode c) { found = found || reads_varying(c, st, inner); });
      return found;
    }
    bool found = false;
    for_each_named_child(e, [&](TSNode c) { found = found || reads_varying(c, st, local); });
    return found;
  }

  // The iterable of a `for` is evaluated once, before the first iteration.
  bool in_iterable_of(TSNode loop, TSNode n) const {
    if (!is(loop, k.for_statement)) return false;
    TSNode right = field(loop, k.f_right);
    return !is_null(right) && ts_node_start_byte(n) >= ts_node_start_byte(right) &&
           ts_node_end_byte(n) <= ts_node_end_byte(right);
  }

  // `for _ in range(1):` runs its body once: no pass repeats the copy.
  bool single_pass(TSNode loop) const {
    if (is(loop, k.while_statement)) return counted_once(loop);
    if (!is(loop, k.for_statement)) return false;
    TSNode it = unparenthesize(field(loop, k.f_right));
    if (!is(it, k.call) || text_of(field(it, k.f_function), ctx.source) != "range") return false;
    TSNode args = field(it, k.f_arguments);
    uint32_t n = ts_node_named_child_count(args);
    auto literal = [&](TSNode a, std::string_view v) { return is(a, k.integer) && text_of(a, ctx.source) == v; };
    if (n == 1) return literal(ts_node_named_child(args, 0), "1") || literal(ts_node_named_child(args, 0), "0");
    if (n == 2) return literal(ts_node_named_child(args, 0), "0") && literal(ts_node_named_child(args, 1), "1");
    return false;
  }

  // The passes of `for _ in range(<literals>)`, nullopt when not literal.
  std::optional<long long> literal_passes(TSNode loop) const {
    if (!is(loop, k.for_statement)) return std::nullopt;
    TSNode it = unparenthesize(field(loop, k.f_right));
    if (auto n = literal_length(it, ctx.model.scope_enclosing(loop), 0)) return n;
    if (!is(it, k.call) || text_of(field(it, k.f_function), ctx.source) != "range") return std::nullopt;
    std::vector<long long> v;
    bool literal = true;
    for_each_named_child(field(it, k.f_arguments), [&](TSNode a) {
      if (!is(a, k.integer)) literal = false;
      else v.push_back(std::atoll(std::string(text_of(a, ctx.source)).c_str()));
    });
    if (!literal || v.empty() || v.size() > 3) return std::nullopt;
    long long begin = v.size() == 1 ? 0 : v[0], end = v.size() == 1 ? v[0] : v[1], step = v.size() == 3 ? v[2] : 1;
    if (step <= 0) return std::nullopt;
    return end > begin ? (end - begin + step - 1) / step : 0;
  }

  // The most entries `e` can hold: a list, tuple or set literal without splats, `a + b` of
  // such, or a name every binding of which is one (`names = [("", net)]`, then
  // `names = names + [("swa_", swa)]`: each binding's literals add up).
  std::optional<long long> literal_length(TSNode e, int scope, int depth) const {
    e = unparenthesize(e);
    if (is_null(e) || depth > 3) return std::nullopt;
    if (is(e, k.list) || is(e, k.tuple) || is(e, k.set)) {
      long long n = 0;
      bool plain = true;
      for_each_named_child(e, [&](TSNode el) {
        plain = plain && !is(el, k.list_splat) && !is(el, k.dictionary_splat) && !is(el, k.comment);
        ++n;
      });
      return plain ? std::optional<long long>(n) : std::nullopt;
    }
    if (is(e, k.binary_operator) && text_of(ts_node_child(e, 1), ctx.source) == "+") {
      TSNode left = field(e, k.f_left), right = field(e, k.f_right);
      auto named = [&](TSNode side) { return is(side, k.identifier); };
      auto l = named(left) ? std::optional<long long>(0) : literal_length(left, scope, depth + 1);
      auto r = named(right) ? std::optional<long long>(0) : literal_length(right, scope, depth + 1);
      if (!l || !r) return std::nullopt;
      return *l + *r;  // a name on either side is counted through its own bindings
    }
    if (!is(e, k.identifier)) return std::nullopt;
    const std::vector<BindingSite>* sites = ctx.model.bindings_of(text_of(e, ctx.source), scope);
    if (!sites || sites->empty() || ctx.model.parameter(text_of(e, ctx.source), scope)) return std::nullopt;
    long long total = 0;
    for (const BindingSite& b : *sites) {
      TSNode v = unparenthesize(b.value);
      if (is_null(v)) return std::nullopt;
      std::optional<long long> n = literal_length(v, scope, depth + 1);
      if (!n) return std::nullopt;
      if (is(v, k.binary_operator)) {  // `names + [...]`: the other side must be the name itself
        for (TSNode side : {field(v, k.f_left), field(v, k.f_right)})
          if (is(side, k.identifier) && text_of(side, ctx.source) != text_of(e, ctx.source)) return std::nullopt;
      }
      total += *n;
    }
    return total;
  }

  // Every loop around the copy counts a literal number of passes, at most kFewPasses in all
  // (`for i in range(10):` in a module's self-test, round 38: temporal-shift-module's
  // `__main__` compares two shift implementations ten times): the waste is a few copies
  // once, not one per batch of a run (TG013-NX40).
  // Module code only: it runs once, while a function's loop of three passes may run at every
  // step of a training loop that calls it.
  static constexpr long long kFewPasses = 10;
  bool few_passes(const WalkState& st) const {
    return ctx.model.enclosing_function(st.scope) < 0 && literal_passes_in_all(st, false);
  }
  // With `entries_only`, every loop must walk written-out entries (`for name, net in [...]`),
  // not count passes (`range(3)`).
  bool literal_passes_in_all(const WalkState& st, bool entries_only) const {
    long long total = 1;
    for (const LoopFrame& l : st.loops) {
      std::optional<long long> n;
      if (entries_only)
        n = is(l.node, k.for_statement) ? literal_length(field(l.node, k.f_right), ctx.model.scope_enclosing(l.node), 0)
                                        : std::nullopt;
      else
        n = single_pass(l.node) ? std::optional<long long>(1) : literal_passes(l.node);
      if (!n) return false;
      total *= std::max<long long>(*n, 1);
      if (total > kFewPasses) return false;
    }
    return true;
  }

  // `n = 0` just before `while n < 1:` whose body ends each pass with `n += 1` at its top
  // level (round 28: torchattacks' FAB runs its restarts loop this way, once): a counter loop
  // whose literal bounds allow one pass.
  bool counted_once(TSNode loop) const {
    TSNode cond = unparenthesize(field(loop, k.f_condition));
    if (!is(cond, k.comparison_operator) || ts_node_named_child_count(cond) != 2) return false;
    TSNode counter = ts_node_named_child(cond, 0), bound = ts_node_named_child(cond, 1);
    if (!is(counter, k.identifier) || !is(bound, k.integer)) return false;
    std::string_view op = text_of(ts_node_child(cond, 1), ctx.source);
    std::string_view name = text_of(counter, ctx.source);
    auto as_int = [&](TSNode n) { return std::atoll(std::string(text_of(n, ctx.source)).c_str()); };
    std::optional<long long> start;
    for (TSNode p = ts_node_prev_named_sibling(loop); !is_null(p) && !start; p = ts_node_prev_named_sibling(p)) {
      TSNode e = is(p, k.expression_statement) ? ts_node_named_child(p, 0) : TSNode{};
      if (!is(e, k.assignment) || text_of(field(e, k.f_left), ctx.source) != name) continue;
      if (!is(field(e, k.f_right), k.integer)) return false;
      start = as_int(field(e, k.f_right));
    }
    if (!start) return false;
    long long passes = op == "<" ? as_int(bound) - *start : op == "<=" ? as_int(bound) - *start + 1 : -1;
    if (passes != 1) return false;
    bool steps_by_one = false;
    for_each_named_child(field(loop, k.f_body), [&](TSNode st) {
      TSNode e = is(st, k.expression_statement) ? ts_node_named_child(st, 0) : TSNode{};
      if (is(e, k.augmented_assignment) && text_of(field(e, k.f_left), ctx.source) == name &&
          text_of(ts_node_child(e, 1), ctx.source) == "+=" && is(field(e, k.f_right), k.integer) &&
          as_int(field(e, k.f_right)) == 1)
        steps_by_one = true;
    });
    return steps_by_one;
  }

  // `self.<method>` inside a class of this file that defines `<method>` itself.
  bool local_method_named(TSNode callee, std::string_view method, int scope) const {
    if (text_of(field(callee, k.f_object), ctx.source) != "self") return false;
    int cls = ctx.model.enclosing_class(scope);
    const std::vector<int>* fs = cls < 0 ? nullptr : ctx.model.functions_named(method);
    if (fs)
      for (int f : *fs)
        if (ctx.model.functions()[f].class_index == cls) return true;
    return false;
  }

  // `data.common.to(batch[0], batch[1], device=d)` after `import data.common` (round 69:
  // DeepDeblur's helper module): the receiver is a module an `import` statement binds, and
  // `to` is its function, which moves whatever it is given; no tensor's `.to`. A name some
  // scope rebinds (a parameter, an assignment) is not the module.
  bool names_an_imported_module(std::string_view dotted, int scope) const {
    std::string_view root = dotted.substr(0, dotted.find('.'));
    const ImportBinding* imported = ctx.model.import_of(root);
    return imported && imported->is_module && !ctx.model.bindings_of(root, scope) &&
           !ctx.model.parameter(root, scope);
  }

  void enter(TSNode n, const WalkState& st) override {
    if (!is(n, k.call) || st.loops.empty()) return;
    if (std::all_of(st.loops.begin(), st.loops.end(), [&](const LoopFrame& l) { return single_pass(l.node); })) return;
    TSNode callee = field(n, k.f_function);
    if (!is(callee, k.attribute)) return;
    if (in_iterable_of(st.innermost_loop()->node, n)) return;  // `for x in [t.to(dev)]`: evaluated once
    std::string_view method = text_of(field(callee, k.f_attribute), ctx.source);
    if (method != "to" && method != "cuda") return;
    // `self.cuda(*items)` where the class defines its own `cuda` (round 22: edge-connect's
    // helper that moves each new batch): that method, not torch's transfer.
    if (local_method_named(callee, method, st.scope)) return;
    std::string why;
    TSNode dest = destination(n, method, st.scope, why);
    if (method == "to" && why.empty()) return;
    if (!is_null(dest) && reads_varying(dest, st)) return;  // a different device each pass
    if (method == "cuda" && is_null(dest) && current_device_varies(n, st)) return;
    if (selected_by_loop(n, st)) return;
    if (TSNode handler = exception_handler_in_loop(n, st); !is_null(handler)) {
      stay_silent("TG013", n,
                  "an exception handler: the copy runs only on a pass whose `try` body raises, not on every "
                  "pass of the loop",
                  {{range_of(handler), "the copy is in this `except` clause"}});
      return;
    }
    if (few_passes(st)) {
      TSNode outer = st.loops.front().node;
      TSNode head = is(outer, k.for_statement) ? field(outer, k.f_right) : outer;
      stay_silent("TG013", n,
                  "a few copies once: module code runs once, and its loops make at most " +
                      std::to_string(kFewPasses) + " passes in all",
                  {{range_of(head), quote_code(text_of(head, ctx.source)) + " counts a literal number of passes"}});
      return;
    }
    if (TSNode read = file_read_per_pass(*st.innermost_loop()); !is_null(read)) {
      stay_silent("TG013", n,
                  "a loop over files: each pass reads " + quote_code(text_of(read, ctx.source)) +
                      " from the loop's own variable, so an upload per file is not what the loop waits on",
                  {{range_of(read), quote_code(text_of(read, ctx.source)) + " opens the file this pass walks to"}});
      return;
    }
    if (TSNode store = table_entry_per_key(n, st); !is_null(store)) {
      stay_silent("TG013", n,
                  "a table built once per key: each pass stores its copy under the loop's own variable, so every "
                  "copy is a different entry kept for later, not the same upload repeated",
                  {{range_of(store), quote_code(text_of(store, ctx.source)) + " is a new entry on every pass"}});
      return;
    }
    TSNode step = step_in_nested_loop(*st.innermost_loop(), n);
    bool routine = is_null(step);
    if (routine) step = training_routine_called(st.innermost_loop()->node, n);
    if (!is_null(step)) {
      stay_silent("TG013", n,
                  "once per epoch: each pass of this loop runs a whole inner training loop, so the copy is "
                  "not repeated per step",
                  {{range_of(step), quote_code(text_of(step, ctx.source)) +
                                        (routine ? " runs a routine of this file whose own loop trains"
                                                 : " runs in a loop nested inside the one that repeats the copy")}});
      return;
    }
    if (TSNode guard = built_once(n, st); !is_null(guard)) {
      stay_silent("TG013", n,
                  "built once: the copy is assigned behind " + quote_code(text_of(guard, ctx.source)) +
                      ", so later iterations skip it",
                  {{range_of(guard), quote_code(text_of(guard, ctx.source)) + " holds only until the first assignment"}});
      return;
    }
    TSNode recv = unparenthesize(field(callee, k.f_object));
    if (auto base = base_name(recv, ctx.source); base && changed_in_loop(st.innermost_loop()->node, *base, n)) return;
    if (on_factory(n, recv, why, st)) return;
    auto r = dotted_name(recv, ctx.source);
    if (!r || varies(*r, n, st)) return;
    if (names_an_imported_module(*r, st.scope)) return;
    bool model = ctx.model.is_model(*r, st.scope);
    if (!model && already_resident(*r, st)) return;
    if (model && grown_in_loop(st.innermost_loop()->node, *r)) return;
    // `model.to(device=d, dtype=torch.float16)`: a module converted in place, its parameters
    // cast where they are; nothing of the host is uploaded again (round 14: fairscale's
    // `.to()` stress test alternates float16 and float32).
    const Value* held = ctx.provenance.value_of(recv);
    bool module_like = model || (held && held->type == Type::Object);  // a constructed wrapper
    if (module_like && !is_null(keyword_arg(n, "dtype", ctx.source))) return;
    if (in_test(n, st)) return;
    if (behind_every_n_guard(n, st)) return;
    Finding f = make_finding(n, why, model ? Shape::Model : Shape::Invariant, *r, st);
    if (!model) note_parameter_source(f, *r, st);
    note_unknown_period(f, n, st);
    note_state_guard(f, n, st);
    note_few_passes_per_call(f, st);
    note_constructor_setup(f, st);
    out.push_back(std::move(f));
  }

  // The `except` clause between the copy and its innermost loop (round 82: T2M-GPT's
  // evaluation falls back to `torch.ones(1, 1).cuda()` when sampling fails; TG013-NX53), or null.
  TSNode exception_handler_in_loop(TSNode call, const WalkState& st) const {
    const LoopFrame* loop = st.innermost_loop();
    if (!loop) return TSNode{};
    for (TSNode p = ctx.model.parent(call); !is_null(p) && !ts_node_eq(p, loop->node); p = ctx.model.parent(p))
      if (is(p, k.except_clause)) return p;
    return TSNode{};
  }

  // In a routine, loops over written-out entries, at most kFewPasses passes in all
  // (round 71: PaSST's `validation_epoch_end` walks `[("", net)]` plus an optional SWA model
  // and uploads the epoch counter for each): a few copies per call, and how often the routine
  // runs is its callers' business (a framework's once-per-epoch hook there). A note
  // (TG013-NX48); in module code such loops are silent (NX40).
  void note_few_passes_per_call(Finding& f, const WalkState& st) const {
    // Loops over written-out entries only: `for s in range(3):` in a routine counts repetitions
    // of its own work, which a caller's training loop may run on every step (TG013-NX40).
    if (ctx.model.enclosing_function(st.scope) < 0 || !literal_passes_in_all(st, true)) return;
    f.severity = Severity::Note;
    TSNode outer = st.loops.front().node;
    TSNode head = is(outer, k.for_statement) ? field(outer, k.f_right) : outer;
    f.evidence.push_back({range_of(head), quote_code(text_of(head, ctx.source)) +
                                              " makes a literal number of passes: a few copies per call of the "
                                              "routine, whose callers decide how often it runs (weak step)"});
  }

  // A loop in a class's `__init__` that trains nothing (round 80: ddae's classifier probes
  // one zero image per listed time step to size each head): the copies are set-up work, made
  // once per object built, and how often objects are built is their callers' business. A note
  // (TG013-NX52).
  void note_constructor_setup(Finding& f, const WalkState& st) const {
    int fn = ctx.model.enclosing_function(st.scope);
    if (fn < 0 || f.severity == Severity::Note) return;
    const FunctionInfo& info = ctx.model.functions()[fn];
    if (info.name != "__init__" || info.class_index < 0) return;
    for (const LoopFrame& loop : st.loops)
      if (runs_backward(ctx.model, loop.node)) return;
    f.severity = Severity::Note;
    f.evidence.push_back({range_of(info.node), "the loop runs in `" + ctx.model.classes()[info.class_index].name +
                                                   ".__init__` and trains nothing: set-up copies, once per object "
                                                   "built (weak step: a note)"});
  }

  // `t.cuda()` where `t` is a parameter of a module's `forward`, rebound nowhere in it: whether
  // `t` is in host memory is its callers' business, and a tensor handed to a forward is usually on the
  // device already, where `.cuda()` / `.to()` copy nothing (round 66: VQ-Diffusion's `t.cuda()`
  // per transformer block, `t` drawn on the device by the caller; TG013-NX46). A note.
  void note_parameter_source(Finding& f, const std::string& name, const WalkState& st) const {
    if (name.find('.') != std::string::npos) return;
    const Parameter* p = ctx.model.parameter(name, st.scope);
    if (!p) return;
    // Only a module's `forward`: what a training script hands its model is on the model's
    // device; a routine's other parameters (class weights, a table) may well be host tensors.
    int fn = ctx.model.enclosing_function(st.scope);
    if (fn < 0) return;
    const FunctionInfo& info = ctx.model.functions()[fn];
    if (info.name != "forward" || info.class_index < 0 || !ctx.model.classes()[info.class_index].is_module) return;
    int found = -1;
    if (ctx.model.bindings_of(name, st.scope, &found) && found == st.scope) return;
    f.severity = Severity::Note;
    f.evidence.push_back({range_of(p->node), "`" + name + "` is a parameter: whether it is in host memory is its callers' "
                                             "business, and a tensor already on the device is not copied (weak step: "
                                             "a note)"});
  }

  // A test function (pytest `test_*`, a unittest.TestCase method) copies small inputs to
  // the device while it checks a result: its loops run over dtypes and cases, not training
  // steps, and the copies cost the test's seconds, not a job's GPU hours (round 39:
  // pytorch-metric-learning's loss tests, TG013-NX41). Recorded as a silence.
  bool in_test(TSNode call, const WalkState& st) {
    int f = ctx.model.enclosing_function(st.scope);
    if (f < 0 || !ctx.model.is_test_function(f)) return false;
    const FunctionInfo& fn = ctx.model.functions()[f];
    // A `test_*` method of a class that is no test class (StarGAN's `Solver.test_multi` runs
    // the model over the test split) is an evaluation routine, not a test pytest collects.
    if (fn.class_index >= 0 && !ctx.model.classes()[fn.class_index].name.starts_with("Test") &&
        !ctx.model.is_test_case(fn.class_index))
      return false;
    stay_silent("TG013", call,
                "a test: `" + fn.name + "` checks results on small inputs, so a copy per pass costs the test's time, "
                "not a training job's",
                {{range_of(field(fn.node, k.f_name)), "`" + fn.name + "` is a test function"}});
    return true;
  }

  enum class Period { None, Small, TenOrMore, Unknown };
  // Recorded as a silence when the copy would be reported but runs behind an every-N guard.
  bool behind_every_n_guard(TSNode call, const WalkState& st) {
    TSNode guard = every_n_passes(call, st.innermost_loop()->node, st.scope, Period::TenOrMore);
    if (is_null(guard)) return false;
    stay_silent("TG013", call,
                "not every iteration: the copy runs behind " + quote_code(text_of(guard, ctx.source)) +
                    ", once every N passes (N >= 10: logging, sampling, checkpoints)",
                {{range_of(guard), quote_code(text_of(guard, ctx.source)) + " holds on one pass in N"}});
    return true;
  }

  // The condition of an `if` / `elif` between the copy and `loop` whose test holds a numeric
  // modulo by a literal of at least 10 (`if (i + 1) % 100 == 0:`): the branch runs on one pass in N (round 53: a GAN's
  // sample images drawn and uploaded with its log line, TG013-NX44). A copy in its `else` runs on
  // the other passes, so only the consequence counts. Null when there is none.
  TSNode every_n_passes(TSNode call, TSNode loop, int scope, Period wanted) const {
    return guarding_test(call, loop, [&](TSNode test) { return period_of(test, scope) == wanted; });
  }

  // The test of the innermost `if` / `elif` between `call` and `loop` whose consequence holds the
  // call and for which `accept(test)` holds; null when none.
  template <typename Accept>
  TSNode guarding_test(TSNode call, TSNode loop, Accept&& accept) const {
    TSNode child = call;
    for (TSNode p = ctx.model.parent(call); !is_null(p) && !ts_node_eq(p, loop); child = p, p = ctx.model.parent(p)) {
      if (!is(p, k.if_statement) && !is(p, k.elif_clause)) continue;
      if (!ts_node_eq(field(p, k.f_consequence), child)) continue;
      if (TSNode test = field(p, k.f_condition); accept(test)) return test;
    }
    return TSNode{};
  }

  // How often the test's modulo holds. A literal of at least 10 (or a name every binding of
  // which is one) is TenOrMore; `% 4` (every fourth step) still repeats the copy often
  // (round 51's airbench proxy steps, read true); a period the file does not fix
  // (`% sampling_steps` read from the arguments) is Unknown.
  Period period_of(TSNode test, int scope) const {
    TSNode modulo = first_modulo(test, ctx.source);
    if (is_null(modulo)) return Period::None;
    TSNode period = unparenthesize(field(modulo, k.f_right));
    if (is(period, k.integer)) return literal_period(period);
    auto d = dotted_name(period, ctx.source);
    if (!d) return Period::Unknown;
    std::vector<TSNode> values = reaching_values(ctx.model, *d, period, scope);
    if (values.empty()) return Period::Unknown;
    Period joined = Period::None;
    for (TSNode v : values) {
      Period one = is(unparenthesize(v), k.integer) ? literal_period(unparenthesize(v)) : Period::Unknown;
      if (one == Period::Small || joined == Period::Small) joined = Period::Small;
      else if (one == Period::Unknown || joined == Period::Unknown) joined = Period::Unknown;
      else joined = one;
    }
    return joined;
  }
  Period literal_period(TSNode integer) const {
    long long n = std::strtoll(std::string(text_of(integer, ctx.source)).c_str(), nullptr, 0);
    return n >= 10 ? Period::TenOrMore : Period::Small;
  }

  // A copy behind an every-N guard whose N this file does not fix (round 55: a diffusion
  // trainer samples behind `if global_step == 1 or global_step % sampling_steps == 0:`,
  // 10,000 steps by default): the copy repeats on one pass in N, and whether that costs
  // anything rests on N, so the finding is a note whose evidence names the guard.
  void note_unknown_period(Finding& f, TSNode call, const WalkState& st) const {
    TSNode guard = every_n_passes(call, st.innermost_loop()->node, st.scope, Period::Unknown);
    if (is_null(guard)) return;
    f.severity = Severity::Note;
    f.evidence.push_back({range_of(guard), quote_code(text_of(guard, ctx.source)) +
                                               " holds on one pass in N, and N is not fixed in this file: a note, "
                                               "since how often the copy runs rests on N"});
  }

  // `if player.done: player.hx = torch.zeros(1, h).cuda()` (round 96: an A3C worker resets its
  // recurrent state when an episode ends): the branch's test is a flag the loop assigns, or
  // an attribute of an object the loop calls a method on (`player.action_train()`), so the copy
  // runs on the passes where that state holds, not on every one. A note, naming the guard
  // (TG013-NX55).
  void note_state_guard(Finding& f, TSNode call, const WalkState& st) const {
    TSNode loop = st.innermost_loop()->node;
    TSNode changer{};
    TSNode test = guarding_test(call, loop, [&](TSNode t) {
      // A flag (`done`, `player.done`, `not env.alive`): a comparison with a counter the loop
      // moves (`step == target` with `target += 2`, NX54) keeps its own reading.
      TSNode flag = unparenthesize(t);
      while (is(flag, k.not_operator)) flag = unparenthesize(ts_node_named_child(flag, 0));
      if (!is(flag, k.identifier) && !is(flag, k.attribute)) return false;
      changer = loop_changes_test(t, loop);
      return !is_null(changer);
    });
    if (is_null(test)) return;
    f.severity = Severity::Note;
    f.evidence.push_back({range_of(test), quote_code(text_of(test, ctx.source)) + " reads state the loop changes (" +
                                              quote_code(text_of(changer, ctx.source)) +
                                              "): the copy runs on the passes where it holds, not on every one"});
  }

  // What in `loop` changes a name or attribute `test` reads: an assignment to it, or a method
  // call on the attribute's object. Null when nothing does.
  TSNode loop_changes_test(TSNode test, TSNode loop) const {
    std::vector<std::string> read;
    collect_dotted(test, read);
    TSNode found{};
    walk_loop(loop, [&](TSNode n) {
      if (!is_null(found)) return;
      if (is(n, k.assignment) || is(n, k.augmented_assignment)) {
        std::vector<std::string> bound;  // `obs, reward, done, info = env.step(a)` binds `done`
        collect_dotted(field(n, k.f_left), bound);
        for (const std::string& b : bound)
          if (std::find(read.begin(), read.end(), b) != read.end()) found = n;
      } else if (is(n, k.call) && is(field(n, k.f_function), k.attribute)) {
        auto obj = dotted_name(field(field(n, k.f_function), k.f_object), ctx.source);
        // A module's function (`torch.cuda.synchronize()`) changes no state a test reads; a
        // call on `self` (`self.G(z)`, any submodule's forward) is not read as changing the
        // object's flags (`if self.cuda:`, round 53's WGAN).
        if (obj && *obj != "self" && !ctx.model.import_of(std::string(root_of_dotted(*obj))))
          for (const std::string& r : read)
            if (r.size() > obj->size() && r.starts_with(*obj + ".")) found = n;
      }
    });
    return found;
  }

  static std::string_view root_of_dotted(std::string_view d) { return d.substr(0, d.find('.')); }

  void collect_dotted(TSNode e, std::vector<std::string>& out) const {
    if (is(e, k.identifier) || is(e, k.attribute)) {
      if (auto d = dotted_name(e, ctx.source)) {
        out.push_back(*d);
        return;
      }
    }
    for_each_named_child(e, [&](TSNode c) { collect_dotted(c, out); });
  }

  template <typename F>
  void walk_loop(TSNode n, F&& visit) const {
    visit(n);
    for_each_named_child(n, [&](TSNode c) {
      if (!is(c, k.function_definition) && !is(c, k.lambda) && !is(c, k.class_definition)) walk_loop(c, visit);
    });
  }

  // `queue = torch.zeros(n).cuda()` inside `if queue is None:` (or `if ... and not queue:`)
  // within the loop: the branch runs until the first assignment, so the copy is made once
  // (TG013-NX32, round 12: wilds' SwAV queue). Returns the test that guards it.
  // Also a copy behind `if step == 0:` with `step` the counter of a `range(...)` loop (or the
  // index of an `enumerate(...)`): it runs on one pass (round 13: trlx's `token == 0`).
  TSNode built_once(TSNode call, const WalkState& st) const {
    TSNode stmt = ctx.model.parent(call);
    while (!is_null(stmt) && !is(stmt, k.assignment) && !is(stmt, k.block)) stmt = ctx.model.parent(stmt);
    std::optional<std::string> target;
    if (!is_null(stmt) && is(stmt, k.assignment)) target = dotted_name(field(stmt, k.f_left), ctx.source);
    const LoopFrame& loop = *st.innermost_loop();
    for (TSNode p = ctx.model.parent(call); !is_null(p) && !ts_node_eq(p, loop.node); p = ctx.model.parent(p)) {
      if (!is(p, k.if_statement) || !contains(field(p, k.f_consequence), call)) continue;
      TSNode cond = field(p, k.f_condition);
      if (TSNode t = target ? unset_test(cond, *target) : TSNode{}; !is_null(t)) return t;
      if (TSNode t = first_pass_test(cond, loop); !is_null(t)) return t;
    }
    return TSNode{};
  }

  // `i == 0` (alone or as a conjunct of an `and`) with `i` the loop's counter: true on one pass;
  // also `i == <arithmetic over names the loop never binds>` (TG013-NX54).
  TSNode first_pass_test(TSNode cond, const LoopFrame& loop) const {
    cond = unparenthesize(cond);
    if (is(cond, k.boolean_operator) && text_of(field(cond, k.f_operator), ctx.source) == "and") {
      TSNode l = first_pass_test(field(cond, k.f_left), loop);
      return is_null(l) ? first_pass_test(field(cond, k.f_right), loop) : l;
    }
    if (!is(cond, k.comparison_operator) || ts_node_named_child_count(cond) != 2 || comparison_op(cond) != "==")
      return TSNode{};
    std::string counter = loop_counter(loop);
    TSNode a = ts_node_named_child(cond, 0), b = ts_node_named_child(cond, 1);
    auto is_counter = [&](TSNode n) { return is(n, k.identifier) && !counter.empty() && text_of(n, ctx.source) == counter; };
    bool matches = (is_counter(a) && invariant_in(b, loop.node)) || (is_counter(b) && invariant_in(a, loop.node));
    return matches ? cond : TSNode{};
  }

  // An integer, or arithmetic over integers and names the loop never binds (`(cov_id - 1) *
  // param_per_cov`, round 83: HRank's mask for one layer index): the same value on every pass,
  // so a counter equals it on one pass at most.
  bool invariant_in(TSNode e, TSNode loop) const {
    e = unparenthesize(e);
    if (is(e, k.integer)) return true;
    if (is(e, k.identifier)) return !assigned_in(loop).count(std::string(text_of(e, ctx.source)));
    if (is(e, k.binary_operator))
      return invariant_in(field(e, k.f_left), loop) && invariant_in(field(e, k.f_right), loop);
    if (is(e, k.unary_operator)) return invariant_in(ts_node_named_child(e, 0), loop);
    return false;
  }

  // The name that counts passes: the target of `for i in range(...)`, or the first target of
  // `for i, x in enumerate(...)`. Empty for any other loop (its values may repeat).
  std::string loop_counter(const LoopFrame& loop) const {
    if (!is(loop.node, k.for_statement)) return {};
    TSNode it = unparenthesize(field(loop.node, k.f_right));
    TSNode left = field(loop.node, k.f_left);
    if (!is(it, k.call)) return {};
    std::string_view fn = ctx.model.callee_leaf(it);
    if (fn == "range" && is(left, k.identifier)) return std::string(text_of(left, ctx.source));
    if (fn == "enumerate" && (is(left, k.pattern_list) || is(left, k.tuple_pattern)) && ts_node_named_child_count(left) == 2 &&
        is(ts_node_named_child(left, 0), k.identifier))
      return std::string(text_of(ts_node_named_child(left, 0), ctx.source));
    return {};
  }

  std::string comparison_op(TSNode cond) const {
    std::string op;
    for (uint32_t i = 0; i < ts_node_child_count(cond); ++i) {
      TSNode c = ts_node_child(cond, i);
      if (!ts_node_is_named(c)) op += std::string(text_of(c, ctx.source));
    }
    return op;
  }

  // `x is None` / `not x`, alone or as a conjunct of an `and`.
  TSNode unset_test(TSNode cond, const std::string& name) const {
    cond = unparenthesize(cond);
    if (is(cond, k.boolean_operator) && text_of(field(cond, k.f_operator), ctx.source) == "and") {
      TSNode l = unset_test(field(cond, k.f_left), name);
      return is_null(l) ? unset_test(field(cond, k.f_right), name) : l;
    }
    if (is(cond, k.not_operator)) {
      auto d = dotted_name(unparenthesize(ts_node_named_child(cond, 0)), ctx.source);
      return d && *d == name ? cond : TSNode{};
    }
    if (!is(cond, k.comparison_operator) || ts_node_named_child_count(cond) != 2) return TSNode{};
    auto d = dotted_name(ts_node_named_child(cond, 0), ctx.source);
    bool is_none = is(ts_node_named_child(cond, 1), k.none);
    return d && *d == name && is_none && comparison_op(cond) == "is" ? cond : TSNode{};
  }

  static bool contains(TSNode outer, TSNode inner) {
    return !is_null(outer) && ts_node_start_byte(inner) >= ts_node_start_byte(outer) &&
           ts_node_end_byte(inner) <= ts_node_end_byte(outer);
  }

  // `.cuda()` copies to the current device: under `with torch.cuda.device(d):` or after
  // `torch.cuda.set_device(d)` with `d` bound by the loop, that is a different device each
  // pass (a test run once per GPU).
  bool current_device_varies(TSNode call, const WalkState& st) {
    auto sets_device = [&](TSNode c) {
      auto q = ctx.model.qualified_callee(c);
      if (!q || !(q->ends_with("cuda.device") || q->ends_with("cuda.set_device"))) return false;
      TSNode args = field(c, k.f_arguments);
      return !is_null(args) && reads_varying(args, st);
    };
    for (TSNode p = ctx.model.parent(call); !is_null(p); p = ctx.model.parent(p)) {
      if (is(p, k.function_definition)) break;
      if (!is(p, k.with_statement)) continue;
      bool found = false;
      ctx.model.for_each_call_in(with_header(p), [&](TSNode c) { found = found || sets_device(c); });
      if (found) return true;
    }
    for (const LoopFrame& loop : st.loops) {
      bool found = false;
      ctx.model.for_each_call_in(loop.node, [&](TSNode c) {
        found = found || (ctx.model.callee_leaf(c) == "set_device" && sets_device(c));
      });
      if (found) return true;
    }
    return false;
  }

  // The `with` statement's items (its header, without the body).
  TSNode with_header(TSNode with) const {
    TSNode items{};
    for_each_named_child(with, [&](TSNode c) {
      if (is_null(items) && is(c, k.with_clause)) items = c;
    });
    return is_null(items) ? with : items;
  }

  // `for device in ["cpu", "cuda"]: if device == "cuda": x = inp.cuda()`: the loop enumerates
  // configurations and a branch on its variable decides whether this copy runs, so it runs
  // for some of them only, once each: the transfer belongs to the configuration, not a
  // repeat.
  // Likewise `for inp in inputs: if inp == "input_ids": ...` over any iterable: the branch
  // runs for the one element equal to the literal (once per distinct name), not every pass.
  bool selected_by_loop(TSNode call, const WalkState& st) const {
    std::unordered_set<std::string> selectors, loop_names;
    for (const LoopFrame& loop : st.loops) {
      if (!is(loop.node, k.for_statement)) continue;
      bool literal = false;
      for (TSNode it : unwrap_iterables(loop.iterable, ctx.source)) {
        TSNode bare = unparenthesize(it);
        literal = literal || is(bare, k.list) || is(bare, k.tuple) || is(bare, k.set);
      }
      if (literal) collect_names(field(loop.node, k.f_left), selectors);
      collect_names(field(loop.node, k.f_left), loop_names);
    }
    if (selectors.empty() && loop_names.empty()) return false;
    TSNode inner = st.innermost_loop()->node;
    for (TSNode child = call, p = ctx.model.parent(call); !is_null(p) && !ts_node_eq(p, inner);
         child = p, p = ctx.model.parent(p)) {
      TSNode test{};
      if (is(p, k.if_statement) || is(p, k.elif_clause)) test = field(p, k.f_condition);
      else if (is(p, k.conditional_expression)) test = ts_node_named_child(p, 1);
      if (is_null(test) || ts_node_eq(test, child)) continue;
      if (equals_a_literal(test, loop_names)) return true;
      std::unordered_set<std::string> read;
      collect_names(test, read);
      for (const std::string& name : read)
        if (selectors.count(name)) return true;
    }
    return false;
  }

  // `name == "literal"` (either side) with `name` one of `names`.
  bool equals_a_literal(TSNode test, const std::unordered_set<std::string>& names) const {
    test = unparenthesize(test);
    if (!is(test, k.comparison_operator) || ts_node_named_child_count(test) != 2) return false;
    TSNode op = ts_node_child(test, 1);
    if (text_of(op, ctx.source) != "==") return false;
    TSNode a = unparenthesize(ts_node_named_child(test, 0)), b = unparenthesize(ts_node_named_child(test, 1));
    auto literal = [&](TSNode n) { return is(n, k.string) || is(n, k.integer) || is(n, k.float_); };
    auto named = [&](TSNode n) { return is(n, k.identifier) && names.count(std::string(text_of(n, ctx.source))); };
    return (named(a) && literal(b)) || (named(b) && literal(a));
  }

  void collect_names(TSNode n, std::unordered_set<std::string>& set) const {
    if (is_null(n)) return;
    if (is(n, k.identifier)) {
      set.insert(std::string(text_of(n, ctx.source)));
      return;
    }
    if (is(n, k.attribute)) return collect_names(field(n, k.f_object), set);
    for_each_named_child(n, [&](TSNode c) { collect_names(c, set); });
  }

  // Why this call moves data to an accelerator ("" when it cannot be shown); the node
  // naming the destination, if any.
  TSNode destination(TSNode call, std::string_view method, int scope, std::string& why) const {
    if (method == "cuda") {
      why = "`.cuda()` copies to the GPU";
      return positional_arg(call, 0);
    }
    if (TSNode kw = keyword_arg(call, "device", ctx.source); !is_null(kw)) {
      if (!is_cpu(kw)) why = "`device=` names the destination";
      return kw;
    }
    TSNode a = unparenthesize(positional_arg(call, 0));
    if (is_null(a) || is_cpu(a)) return a;
    if (is_device_literal(a)) why = quote_code(text_of(a, ctx.source)) + " is an accelerator device";
    else if (is_device_call(a)) why = quote_code(text_of(a, ctx.source)) + " is a device";
    else if (auto d = dotted_name(a, ctx.source)) {
      if (names::contains(names::lower(*d), "device")) why = "`" + *d + "` names a device";
      else if (bound_to_device(*d, scope)) why = "`" + *d + "` is bound to a device";
    }
    return a;
  }

  bool is_device_literal(TSNode a) const {
    if (!is(a, k.string)) return false;
    std::string s = names::lower(text_of(a, ctx.source));
    return (names::contains(s, "cuda") || names::contains(s, "mps")) && !names::contains(s, "cpu");
  }

  bool is_device_call(TSNode a) const {
    if (!is(a, k.call) || ctx.model.callee_leaf(a) != "device") return false;
    TSNode first = unparenthesize(positional_arg(a, 0));
    return is_device_literal(first);
  }

  bool is_cpu(TSNode a) const {
    a = unparenthesize(a);
    if (is(a, k.string)) return names::contains(names::lower(text_of(a, ctx.source)), "cpu");
    if (is(a, k.call) && ctx.model.callee_leaf(a) == "device") return is_cpu(positional_arg(a, 0));
    return false;
  }

  // `dev = torch.device("cuda")` / `dev = "cuda:0"` in a visible scope (TG013-N10).
  bool bound_to_device(const std::string& name, int scope) const {
    const std::vector<BindingSite>* sites = ctx.model.bindings_of(name, scope);
    if (!sites) return false;
    for (const BindingSite& b : *sites) {
      TSNode v = unparenthesize(b.value);
      if (b.position >= 0 || !(is_device_literal(v) || is_device_call(v))) return false;
    }
    return true;
  }

  // `.to("cpu")` / `.to(device="cpu")` / `.cpu()`: a download, the opposite direction.
  bool moves_to_cpu(TSNode call, std::string_view leaf) const {
    if (leaf == "cpu") return true;
    if (leaf != "to") return false;
    TSNode kw = keyword_arg(call, "device", ctx.source);
    return is_cpu(is_null(kw) ? positional_arg(call, 0) : kw);
  }

  // `t[key] = torch.linspace(...).to(device)` in `for key in pde:` (round 45: a PDE data
  // generator's grids, one per resolution): a loop that is not nested in another and trains
  // nothing, storing the copy under its own variable, builds a table once (TG013-NX42).
  // Returns the subscript stored to, or null.
  // Also the copy handed to a call whose other argument names the entry by the loop's
  // variable (`module.register_buffer("%s_cov" % name, torch.zeros(n).cuda())` over a module's
  // parameter names, round 73: SWAG's Laplace posterior builds one buffer per parameter).
  // Nested loops too when none of them trains and the table is a new one on every pass of the
  // loop around (`for user in range(n): ci = {}; for k in keys: ci[k] = torch.zeros(...).to(
  // device)`, round 79: FedRep's per-user control variates, built once before training); a
  // table bound outside them is refilled with the same copies (TG013-PX42).
  TSNode table_entry_per_key(TSNode call, const WalkState& st) const {
    const LoopFrame* inner = st.innermost_loop();
    if (!inner || !is(inner->node, k.for_statement)) return TSNode{};
    std::unordered_set<std::string> targets;
    add_targets(field(inner->node, k.f_left), targets);
    TSNode entry = entry_keyed_by(call, targets);
    if (is_null(entry)) return TSNode{};
    for (const LoopFrame& loop : st.loops)
      if (runs_backward(ctx.model, loop.node)) return TSNode{};
    if (st.loops.size() > 1 && !new_table_per_outer_pass(entry, st.loops[st.loops.size() - 2].node, call))
      return TSNode{};
    return entry;
  }

  bool new_table_per_outer_pass(TSNode entry, TSNode outer, TSNode call) const {
    if (!is(entry, k.subscript)) return false;
    auto table = dotted_name(field(entry, k.f_value), ctx.source);
    return table && !is_null(last_assignment(*table, field(outer, k.f_body), ts_node_start_byte(call), ctx.source));
  }

  TSNode entry_keyed_by(TSNode call, const std::unordered_set<std::string>& targets) const {
    TSNode parent = ctx.model.parent(call);
    if (is(parent, k.assignment) && ts_node_eq(field(parent, k.f_right), call)) {
      TSNode left = field(parent, k.f_left);
      if (!is(left, k.subscript)) return TSNode{};
      TSNode key = unparenthesize(field(left, k.f_subscript));
      return is(key, k.identifier) && targets.count(std::string(text_of(key, ctx.source))) ? left : TSNode{};
    }
    if (!is(parent, k.argument_list)) return TSNode{};
    TSNode keyed{};
    for_each_named_child(parent, [&](TSNode a) {
      if (!is_null(keyed) || ts_node_eq(a, call) || (!is(a, k.binary_operator) && !is(a, k.string) && !is(a, k.call)))
        return;
      if (mentions_any(a, targets)) keyed = a;
    });
    return is_null(keyed) ? TSNode{} : ctx.model.parent(parent);
  }

  // A call in the loop's body that opens or decodes a file named by the loop's own variable
  // (`with Image.open(input_img_path) as image:` in `for input_img_path in all_img_paths:`,
  // round 27: a video-sampling script's per-image loop): the loop walks files, and a per-pass
  // upload of a few bytes is nothing next to the disk. Returns that call, or null.
  TSNode file_read_per_pass(const LoopFrame& loop) {
    auto [it, fresh] = file_reads.try_emplace(node_id(loop.node));
    if (fresh) it->second = find_file_read(loop);
    return it->second;
  }

  TSNode find_file_read(const LoopFrame& loop) const {
    static constexpr std::string_view kFileReaders[] = {
        "open",           "PIL.Image.open",  "cv2.imread",    "imageio.imread", "imageio.v2.imread",
        "imageio.v3.imread", "torchaudio.load", "soundfile.read", "librosa.load",  "numpy.load",
        "torch.load",     "torchvision.io.read_image", "skimage.io.imread"};
    if (!is(loop.node, k.for_statement)) return TSNode{};
    std::unordered_set<std::string> targets;
    add_targets(field(loop.node, k.f_left), targets);
    if (targets.empty()) return TSNode{};
    TSNode found{};
    ctx.model.for_each_call_in(field(loop.node, k.f_body), [&](TSNode c) {
      if (!is_null(found)) return;
      auto q = ctx.model.qualified_callee(c);
      bool builtin_open = is(field(c, k.f_function), k.identifier) && ctx.model.callee_leaf(c) == "open" &&
                          !ctx.model.import_of("open") && !ctx.model.functions_named("open");
      if (!builtin_open && (!q || *q == "open" || !in(kFileReaders, *q))) return;
      TSNode path = positional_arg(c, 0);
      if (!is_null(path) && mentions_any(path, targets)) found = c;
    });
    return found;
  }

  bool mentions_any(TSNode n, const std::unordered_set<std::string>& names) const {
    if (is(n, k.identifier)) return names.count(std::string(text_of(n, ctx.source))) > 0;
    bool hit = false;
    for_each_named_child(n, [&](TSNode c) { hit = hit || mentions_any(c, names); });
    return hit;
  }

  // A `.backward()` call in a loop nested in `loop` that does not hold `call` (round 32:
  // Depth-Anything-V2 builds its validation accumulators with `torch.tensor([0.0]).cuda()` in
  // the epoch loop, around the step loop): `loop` is the epoch loop, the copy runs once per
  // epoch, and fresh accumulators each epoch are the point. Returns that call, or null.
  TSNode step_in_nested_loop(const LoopFrame& loop, TSNode call) {
    auto [it, fresh] = nested_steps.try_emplace(node_id(loop.node));
    if (fresh) it->second = find_nested_step(field(loop.node, k.f_body));
    TSNode step = it->second;
    if (is_null(step)) return step;
    for (TSNode p = ctx.model.parent(step); !is_null(p) && !ts_node_eq(p, loop.node); p = ctx.model.parent(p))
      if ((is(p, k.for_statement) || is(p, k.while_statement)) && !contains(p, call)) return step;
    return TSNode{};
  }

  TSNode find_nested_step(TSNode body) const {
    TSNode found{};
    ctx.model.for_each_call_in(body, [&](TSNode c) {
      if (is_null(found) && is(field(c, k.f_function), k.attribute) && ctx.model.callee_leaf(c) == "backward")
        found = c;
    });
    return found;
  }

  // `train_epoch(model, loader, ...)` in the loop, a function of this file whose own loop
  // over data backwards and steps (round 73: a VAE script draws 64 prior samples per epoch after it): each pass
  // runs a whole training loop, so the copy is once per epoch. Returns that call.
  TSNode training_routine_called(TSNode loop, TSNode copy) const {
    TSNode found{};
    ctx.model.for_each_call_in(field(loop, k.f_body), [&](TSNode c) {
      if (!is_null(found) || contains(c, copy)) return;
      if (const std::vector<int>* fs = local_callees(ctx.model, c))
        for (int f : *fs)
          if (is_null(found) && loops_over_a_backward(ctx.model.functions()[f].node)) found = c;
    });
    return found;
  }

  bool counts(TSNode iterable) const {
    iterable = unparenthesize(iterable);
    return is(iterable, k.call) && ctx.model.callee_leaf(iterable) == "range";
  }

  // An optimizer's `.step()` in `loop` (`opt.step()`, or `scaler.step(opt)` handed one): with a
  // backward, it trains. A loop that only backwards computes gradients (an attack's per-class
  // gradients), and an environment's `env.step(a)` steps no parameters.
  bool steps(TSNode loop) const {
    bool found = false;
    ctx.model.for_each_call_in(field(loop, k.f_body), [&](TSNode c) {
      TSNode callee = field(c, k.f_function);
      if (found || !is(callee, k.attribute) || ctx.model.callee_leaf(c) != "step") return;
      int scope = ctx.model.scope_enclosing(c);
      auto recv = dotted_name(field(callee, k.f_object), ctx.source);
      auto arg = dotted_name(positional_arg(c, 0), ctx.source);
      found = (recv && ctx.model.is_optimizer(*recv, scope)) ||
              (arg && ctx.model.kind_of(*arg, scope) == ValueKind::Optimizer);
    });
    return found;
  }

  bool loops_over_a_backward(TSNode function) const {
    bool found = false;
    auto visit = [&](auto&& self, TSNode n) -> void {
      if (found || (is(n, k.function_definition) && !ts_node_eq(n, function)) || is(n, k.class_definition)) return;
      // A loop over data (`for x, y in loader:`), not a count of repeats of one step
      // (`for _ in range(self.d_repeats):` in a GAN's per-batch discriminator update).
      if (is(n, k.for_statement) && !counts(field(n, k.f_right)) && runs_backward(ctx.model, n) && steps(n)) {
        found = true;
        return;
      }
      for_each_named_child(n, [&](TSNode c) { self(self, c); });
    };
    visit(visit, function);
    return found;
  }

  // The same object is downloaded (`net.cpu()`, an EMA offloaded with `.to(device="cpu")`)
  // or refilled in place (`ema.load_state_dict(...)`, `buf.copy_(...)`) somewhere in the
  // loop: each upload then carries new bytes, not the ones already on the device.
  // `net.add_head(n)` then `net.to(device)` in a loop over tasks (round 48: a class-incremental
  // learning framework): a method of the model other than torch's own bookkeeping, called for
  // its effect (a statement of its own), may add parameters on the host, which the copy then
  // moves. True when the loop calls one.
  bool grown_in_loop(TSNode loop, const std::string& model) const {
    static constexpr std::string_view kKeepsModule[] = {
        "eval",  "train",   "forward",   "parameters", "named_parameters", "buffers", "named_buffers",
        "modules", "named_modules", "children", "named_children", "state_dict", "zero_grad", "to",
        "cuda",  "cpu",     "half",      "float",      "double",           "bfloat16", "requires_grad_",
        "register_forward_hook", "apply"};
    bool grown = false;
    ctx.model.for_each_call_in(field(loop, k.f_body), [&](TSNode call) {
      TSNode callee = field(call, k.f_function);
      // Called for its effect: the call is a statement of its own, its result dropped
      // (`y = model.recognize(x)` uses the model; `net.add_head(n)` changes it).
      if (grown || !is(callee, k.attribute) || !is(ctx.model.parent(call), k.expression_statement)) return;
      auto d = dotted_name(field(callee, k.f_object), ctx.source);
      if (d && *d == model && !in(kKeepsModule, text_of(field(callee, k.f_attribute), ctx.source))) grown = true;
    });
    return grown;
  }

  // Also a move of the same object to another device in the loop (`model.to(args.swa_device)`,
  // then `collect_model(model)`, then `model.to(args.device)`: round 73, SWAG collects its
  // moments on the CPU and trains on the GPU): a round trip, each move carrying it back.
  bool changed_in_loop(TSNode n, const std::string& base, TSNode transfer) const {
    if (is(n, k.call) && !ts_node_eq(n, transfer)) {
      TSNode callee = field(n, k.f_function);
      std::string_view leaf = ctx.model.callee_leaf(n);
      bool refilled = leaf == "load_state_dict" || leaf == "copy_";
      if (is(callee, k.attribute) && (refilled || moves_to_cpu(n, leaf) || moves_elsewhere(n, leaf, transfer))) {
        auto b = base_name(field(callee, k.f_object), ctx.source);
        if (b && *b == base) return true;
      }
    }
    bool found = false;
    for_each_named_child(n, [&](TSNode c) { found = found || changed_in_loop(c, base, transfer); });
    return found;
  }

  // `call` is a `.to(D)` whose destination is written differently from `transfer`'s `.to(E)`.
  bool moves_elsewhere(TSNode call, std::string_view leaf, TSNode transfer) const {
    if (leaf != "to" || ctx.model.callee_leaf(transfer) != "to") return false;
    // The same object by name (`model`), not two tensors a factory builds.
    auto moved = dotted_name(unparenthesize(field(field(call, k.f_function), k.f_object)), ctx.source);
    auto again = dotted_name(unparenthesize(field(field(transfer, k.f_function), k.f_object)), ctx.source);
    if (!moved || !again || *moved != *again) return false;
    std::string why, unused;  // `why`: a device by the rule's own reading (not a dtype)
    TSNode a = destination(call, leaf, ctx.model.scope_enclosing(call), why);
    TSNode b = destination(transfer, "to", ctx.model.scope_enclosing(transfer), unused);
    return !why.empty() && !is_null(a) && !is_null(b) && text_of(a, ctx.source) != text_of(b, ctx.source);
  }

  // A host factory (looking through dtype casts) copied over: reported here. Returns true
  // when the call was decided (reported or exempt).
  bool on_factory(TSNode call, TSNode recv, const std::string& why, const WalkState& st) {
    while (is(recv, k.call) && in(kCasts, ctx.model.callee_leaf(recv)) &&
           is(field(recv, k.f_function), k.attribute))
      recv = unparenthesize(field(field(recv, k.f_function), k.f_object));
    if (!is(recv, k.call)) return false;
    std::string_view leaf = ctx.model.callee_leaf(recv);
    if (!in(kHostFactories, leaf)) return false;
    auto q = ctx.model.qualified_name(field(recv, k.f_function));
    bool bare = is(field(recv, k.f_function), k.identifier) && !ctx.model.import_of(leaf) &&
                !ctx.model.functions_named(leaf);
    if (!q || !(q->starts_with("torch.") || bare)) return false;
    if (!is_null(keyword_arg(recv, "device", ctx.source))) return true;  // already allocated there
    if (TSNode zero = zero_dimension(recv, leaf); !is_null(zero)) {
      stay_silent("TG013", call,
                  "an empty tensor: a dimension of size 0 means the copy moves no bytes",
                  {{range_of(zero), "a literal 0 in the shape"}});
      return true;
    }
    if (in(kDataFactories, leaf)) {
      // `torch.tensor(step_stats).to(dev)` with `step_stats` rebuilt or appended to in the
      // loop: each upload carries the new values, the transfer a loop needs (with `device=`
      // the same bytes still cross the bus).
      TSNode data = positional_arg(recv, 0);
      if (!is_null(data) && (reads_varying(data, st) || advances_an_iterator(data))) {
        stay_silent("TG013", call,
                    "new host data each iteration: " + quote_code(text_of(data, ctx.source)) +
                        " changes in the loop, so every upload carries new bytes and is not a repeat",
                    {{range_of(data), quote_code(text_of(data, ctx.source)) +
                                          " is rebound, modified or drawn from an iterator inside the loop"}});
        return true;
      }
    }
    bool per_batch = reads_varying(field(recv, k.f_arguments), st);
    Shape shape = leaf.starts_with("rand") ? Shape::RandomFactory
                  : per_batch              ? Shape::BatchFactory
                                           : Shape::Factory;
    if (in_test(call, st) || behind_every_n_guard(call, st)) return true;
    Finding f = make_finding(call, why, shape, std::string(leaf), st);
    note_unknown_period(f, call, st);
    note_state_guard(f, call, st);
    note_few_passes_per_call(f, st);
    note_constructor_setup(f, st);
    if (shape == Shape::Factory)
      if (TSNode write = written_in_place(call, st); !is_null(write)) {
        // Hoisting would carry one pass's values into the next (round 33: per-domain losses
        // written into `torch.zeros(n).to(device)` each step): only `device=` is right.
        f.hint = "Pass `device=` to `torch." + std::string(leaf) +
                 "(...)`; it is written in place later in the loop, so it must stay fresh each pass.";
        f.evidence.push_back({range_of(write), quote_code(text_of(write, ctx.source)) +
                                                   " writes into it: each pass needs a new one"});
      }
    out.push_back(std::move(f));
    return true;
  }

  // `buf = torch.zeros(n).to(dev)` then, later in the loop, `buf[i] = ...`, `buf += ...` or
  // `buf.add_(...)`: the first such write (null when none, or the copy is not assigned to a name).
  TSNode written_in_place(TSNode call, const WalkState& st) const {
    TSNode stmt = ctx.model.parent(call);
    if (is_null(stmt) || !is(stmt, k.assignment) || !ts_node_eq(unparenthesize(field(stmt, k.f_right)), call))
      return TSNode{};
    TSNode left = field(stmt, k.f_left);
    if (!is(left, k.identifier)) return TSNode{};
    std::string_view name = text_of(left, ctx.source);
    auto names_it = [&](TSNode n) {
      n = unparenthesize(n);
      while (is(n, k.subscript)) n = unparenthesize(field(n, k.f_value));
      return is(n, k.identifier) && text_of(n, ctx.source) == name;
    };
    TSNode found{};
    std::vector<TSNode> todo{field(st.innermost_loop()->node, k.f_body)};
    while (!todo.empty() && is_null(found)) {
      TSNode n = todo.back();
      todo.pop_back();
      if (ts_node_end_byte(n) <= ts_node_end_byte(stmt) && !contains(n, stmt)) continue;
      if (ts_node_start_byte(n) >= ts_node_end_byte(stmt)) {
        if (is(n, k.assignment) && is(unparenthesize(field(n, k.f_left)), k.subscript) && names_it(field(n, k.f_left)))
          found = n;
        else if (is(n, k.augmented_assignment) && names_it(field(n, k.f_left)))
          found = n;
        else if (is(n, k.call) && is(field(n, k.f_function), k.attribute) &&
                 ctx.model.callee_leaf(n).ends_with("_") && !ctx.model.callee_leaf(n).ends_with("__") &&
                 names_it(field(field(n, k.f_function), k.f_object)))
          found = n;
        if (!is_null(found)) break;
      }
      for_each_named_child(n, [&](TSNode c) { todo.push_back(c); });
    }
    return found;
  }

  // `torch.zeros((4, 0))` / `torch.empty(0, d)`: a literal 0 in the shape of a shape-taking
  // factory (round 35: a seed token list grown from an empty tensor). Null when there is none.
  TSNode zero_dimension(TSNode factory, std::string_view leaf) const {
    static constexpr std::string_view kShaped[] = {"zeros", "ones", "empty", "full", "randn", "rand"};
    if (!in(kShaped, leaf)) return TSNode{};
    std::vector<TSNode> dims;
    if (leaf == "full") {
      dims.push_back(positional_arg(factory, 0));
    } else {
      for_each_named_child(field(factory, k.f_arguments), [&](TSNode a) {
        if (!is(a, k.keyword_argument) && !is(a, k.comment)) dims.push_back(a);
      });
    }
    TSNode found{};
    for (TSNode d : dims) {
      d = unparenthesize(d);
      auto check = [&](TSNode n) {
        if (is_null(found) && is(n, k.integer) && text_of(n, ctx.source) == "0") found = n;
      };
      if (is(d, k.tuple) || is(d, k.list)) for_each_named_child(d, check);
      else check(d);
    }
    return found;
  }

  // `next(train_iter)` in the data: each pass takes the iterator's next batch (round 13:
  // score_sde's `torch.from_numpy(next(train_iter)["image"]._numpy())`).
  bool advances_an_iterator(TSNode n) const {
    if (is(n, k.call) && is(field(n, k.f_function), k.identifier) && ctx.model.callee_leaf(n) == "next") return true;
    bool found = false;
    for_each_named_child(n, [&](TSNode c) { found = found || advances_an_iterator(c); });
    return found;
  }

  // Every binding of `name` visible here creates it with `device=` or moves it to a device
  // before the loop: `.to()` returns the tensor itself, nothing is copied (TG013-P06).
  bool already_resident(const std::string& name, const WalkState& st) const {
    int s = st.scope;
    const std::vector<BindingSite>* sites = ctx.model.bindings_of(name, st.scope, &s);
    if (!sites) return false;
    for (const BindingSite& b : *sites) {
      TSNode v = unparenthesize(b.value);
      if (b.position >= 0 || !is(v, k.call)) return false;
      TSNode kw = keyword_arg(v, "device", ctx.source);
      if (!is_null(kw) && !is_cpu(kw)) continue;
      std::string_view leaf = ctx.model.callee_leaf(v);
      std::string moved;
      if (leaf == "cuda" || leaf == "to") destination(v, leaf, s, moved);
      if (moved.empty()) return false;
    }
    return true;
  }

  enum class Shape { Factory, BatchFactory, RandomFactory, Model, Invariant };

  Finding make_finding(TSNode call, const std::string& why, Shape shape, const std::string& what,
                       const WalkState& st) const {
    Finding f;
    f.code = "TG013";
    f.severity = Severity::Warning;
    f.category = Category::PerformanceWarn;
    f.range = range_of(call);
    std::string c = quote_code(text_of(call, ctx.source));
    switch (shape) {
      case Shape::Factory:
      case Shape::BatchFactory:
      case Shape::RandomFactory:
        f.message = c + " builds `torch." + what + "(...)` in host memory on every iteration and then copies it to the device.";
        // `torch.from_numpy` takes no `device=`: it wraps the array's own memory.
        if (what == "from_numpy")
          f.hint = "Create it once before the loop and move it there; `torch.from_numpy` has no `device=`.";
        else
          f.hint = shape == Shape::Factory
                       ? "Create it once before the loop, or pass `device=` to `torch." + what + "(...)`."
                       : "Pass `device=` to `torch." + what + "(...)` so it is created on the device directly.";
        break;
      case Shape::Model:
        f.message = c + " moves the model on every iteration: `Module.to` visits every parameter and buffer each time, even when nothing moves.";
        f.hint = "Move the model once, before the loop.";
        break;
      case Shape::Invariant:
        f.message = c + ": `" + what + "` is not reassigned in the loop, so the same bytes are uploaded to the device on every pass.";
        f.hint = "Copy it once before the loop and reuse the result.";
        break;
    }
    if (!why.empty()) f.evidence.push_back({range_of(call), why});
    TSNode loop = st.innermost_loop()->node;
    TSNode header = is(loop, k.for_statement) ? field(loop, k.f_right) : field(loop, k.f_condition);
    std::string loop_step = shape == Shape::Invariant ? "this loop never rebinds `" + what + "`"
                            : shape == Shape::Model  ? "the move repeats on every iteration of this loop"
                                                     : "the factory runs again on every iteration of this loop";
    f.evidence.push_back({range_of(is_null(header) ? loop : header), loop_step});
    return f;
  }
};

}  // namespace

std::unique_ptr<RuleCheck> make_tg013(const RuleContext& ctx) { return std::make_unique<Checker>(ctx); }

}  // namespace preflight::rules
