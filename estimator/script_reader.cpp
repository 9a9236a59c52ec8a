#include "estimator/script_reader.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <utility>

#include "analysis/module_model.h"
#include "analysis/syntax.h"
#include "analysis/torch_facts.h"
#include "estimator/deepspeed.h"
#include "estimator/module_params.h"

namespace preflight::estimator {

using namespace preflight::analysis;

std::string_view entry_kind_name(EntryKind k) {
  switch (k) {
    case EntryKind::TrainingLoop: return "training loop";
    case EntryKind::HfTrainer: return "Hugging Face Trainer";
    case EntryKind::LightningFit: return "Lightning Trainer.fit";
    case EntryKind::Generation: return "generation";
  }
  return "?";
}

namespace {

constexpr int kMaxFoldDepth = 8;  // chains of constants deeper than this are not followed

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }
bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}
std::string_view leaf_of(std::string_view dotted) {
  size_t dot = dotted.rfind('.');
  return dot == std::string_view::npos ? dotted : dotted.substr(dot + 1);
}

// A value the script states, folded from literals, constants, argparse defaults, dataclass
// field defaults and simple arithmetic. `site` is the literal the value finally came from.
struct Folded {
  enum class Kind { Int, Float, Str, Bool, Dotted } kind = Kind::Int;
  int64_t i = 0;
  double f = 0;
  std::string s;  // Str: the text; Dotted: the qualified name (`torch.bfloat16`)
  bool b = false;
  TSNode site{};
  std::string via;  // "argparse default", "module constant", ...
};

Folded folded(Folded::Kind kind) {
  Folded f;
  f.kind = kind;
  return f;
}

// Where a field was read, or why it could not be.
struct Reading {
  std::optional<Folded> value;
  TSNode use{};                // the expression the script passes (keyword value, argument)
  std::string blocking;        // when value is empty: the expression that did not fold
};

class Reader {
 public:
  explicit Reader(const ModuleModel& model) : src_(model.source()), root_(model.root()), model_(model), k_(kinds()) {
    collect(root_, 0, 0);
  }

  std::vector<ScriptJob> jobs();

 private:
  struct Call {
    TSNode node;
    int scope;
    std::string callee;  // qualified where imports make it known, else as written; may be empty
  };

  // --- collection ----------------------------------------------------------------------
  void collect(TSNode n, int scope, int depth) {
    if (depth > 400) return;  // the engine refuses such files; never recurse that deep
    int opened = model_.scope_opened_by(n);
    if (opened >= 0) scope = opened;
    if (is(n, k_.call)) {
      auto q = model_.qualified_name(field(n, k_.f_function));
      calls_.push_back({n, scope, q.value_or("")});
    }
    if (is(n, k_.for_statement)) loops_.push_back(n);
    if (is(n, k_.dictionary)) dicts_.push_back({n, scope});
    for_each_named_child(n, [&](TSNode c) { collect(c, scope, depth + 1); });
  }

  std::string text(TSNode n) const { return std::string(text_of(n, src_)); }

  // --- folding -------------------------------------------------------------------------
  std::optional<Folded> fold(TSNode e, int scope, int depth = 0) const {
    if (is_null(e) || depth > kMaxFoldDepth) return std::nullopt;
    e = unparenthesize(e);
    TSSymbol s = sym(e);
    if (s == k_.integer) return fold_integer(e);
    if (s == k_.float_) return literal_float(e);
    if (s == k_.true_ || s == k_.false_) {
      Folded f = folded(Folded::Kind::Bool);
      f.b = s == k_.true_;
      f.site = e;
      return f;
    }
    if (s == k_.string) return literal_string(e);
    if (s == k_.unary_operator) return fold_negation(e, scope, depth);
    if (s == k_.binary_operator) return fold_arithmetic(e, scope, depth);
    if (s == k_.identifier) return fold_name(e, scope, depth);
    if (s == k_.attribute) return fold_attribute(e, scope, depth);
    return std::nullopt;
  }

  std::optional<Folded> fold_integer(TSNode e) const {
    std::string digits;
    for (char c : text_of(e, src_))
      if (c != '_') digits += c;
    int64_t v = 0;
    int base = 10;
    std::string_view body = digits;
    if (body.size() > 2 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X')) base = 16, body.remove_prefix(2);
    auto [ptr, ec] = std::from_chars(body.data(), body.data() + body.size(), v, base);
    if (ec != std::errc() || ptr != body.data() + body.size()) return std::nullopt;
    Folded f = folded(Folded::Kind::Int);
    f.i = v;
    f.site = e;
    return f;
  }

  std::optional<Folded> literal_float(TSNode e) const {
    std::string t;
    for (char c : text_of(e, src_))
      if (c != '_') t += c;
    try {
      Folded f = folded(Folded::Kind::Float);
      f.f = std::stod(t);
      f.site = e;
      return f;
    } catch (...) {
      return std::nullopt;
    }
  }

  std::optional<Folded> literal_string(TSNode e) const {
    // An f-string with replacement fields is not a constant.
    for (uint32_t i = 0; i < ts_node_named_child_count(e); ++i)
      if (std::string_view(ts_node_type(ts_node_named_child(e, i))) == "interpolation") return std::nullopt;
    Folded f = folded(Folded::Kind::Str);
    f.s = std::string(string_content(e, src_));
    f.site = e;
    return f;
  }

  std::optional<Folded> fold_negation(TSNode e, int scope, int depth) const {
    TSNode op = ts_node_child(e, 0);
    if (text_of(op, src_) != "-") return std::nullopt;
    auto v = fold(ts_node_named_child(e, 0), scope, depth + 1);
    if (!v || (v->kind != Folded::Kind::Int && v->kind != Folded::Kind::Float)) return std::nullopt;
    if (v->kind == Folded::Kind::Int && v->i == INT64_MIN) return std::nullopt;
    v->i = -v->i;
    v->f = -v->f;
    return v;
  }

  std::optional<Folded> fold_arithmetic(TSNode e, int scope, int depth) const {
    auto a = fold(field(e, k_.f_left), scope, depth + 1);
    auto b = fold(field(e, k_.f_right), scope, depth + 1);
    if (!a || !b || a->kind != Folded::Kind::Int || b->kind != Folded::Kind::Int) return std::nullopt;
    std::string_view op = text_of(field(e, k_.f_operator), src_);
    Folded f = folded(Folded::Kind::Int);
    f.site = e;
    f.via = "arithmetic";
    std::optional<int64_t> v = int_arithmetic(op, a->i, b->i);
    if (!v) return std::nullopt;
    f.i = *v;
    return f;
  }

  // Python's integers do not overflow; a value past int64 is no size we could use, so it
  // does not fold (rather than wrap into a plausible-looking one). `//` floors as Python does.
  static std::optional<int64_t> int_arithmetic(std::string_view op, int64_t a, int64_t b) {
    int64_t r = 0;
    if (op == "+") return __builtin_add_overflow(a, b, &r) ? std::nullopt : std::optional(r);
    if (op == "-") return __builtin_sub_overflow(a, b, &r) ? std::nullopt : std::optional(r);
    if (op == "*") return __builtin_mul_overflow(a, b, &r) ? std::nullopt : std::optional(r);
    if (op == "//") {
      if (b == 0 || (a == INT64_MIN && b == -1)) return std::nullopt;
      r = a / b;
      if ((a % b != 0) && ((a < 0) != (b < 0))) --r;
      return r;
    }
    if (op == "**" && b >= 0) {
      if (a == 0 || a == 1) return b == 0 ? 1 : a;
      if (a == -1) return b % 2 ? -1 : 1;
      r = 1;  // |a| >= 2: overflows within 63 steps, so the loop is short
      for (int64_t n = 0; n < b; ++n)
        if (__builtin_mul_overflow(r, a, &r)) return std::nullopt;
      return r;
    }
    return std::nullopt;
  }

  // A name with exactly one visible assignment folds to that value; several assignments
  // (a value chosen at run time) do not.
  std::optional<Folded> fold_name(TSNode e, int scope, int depth) const {
    std::string name = text(e);
    int found = -1;
    const auto* sites = model_.bindings_of(name, scope, &found);
    if (!sites) {
      if (const ImportBinding* imp = model_.import_of(name)) return dotted(imp->qualified, e);
      return std::nullopt;
    }
    if (sites->size() != 1 || (*sites)[0].position >= 0) return std::nullopt;
    auto v = fold((*sites)[0].value, found, depth + 1);
    if (v && v->via.empty()) v->via = "constant `" + name + "`";
    return v;
  }

  Folded dotted(std::string qualified, TSNode site) const {
    Folded f = folded(Folded::Kind::Dotted);
    f.s = std::move(qualified);
    f.site = site;
    return f;
  }

  // `args.batch_size` (argparse), `cfg.lr` (a dataclass instance), `torch.bfloat16`.
  std::optional<Folded> fold_attribute(TSNode e, int scope, int depth) const {
    TSNode object = unparenthesize(field(e, k_.f_object));
    std::string attr = text(field(e, k_.f_attribute));
    if (is(object, k_.identifier)) {
      if (TSNode value = single_value(text(object), scope); !is_null(value) && is(value, k_.call)) {
        std::string_view leaf = callee_leaf(value, src_);
        if (leaf == "parse_args" || leaf == "parse_known_args") return argparse_default(attr);
        if (auto v = dataclass_default(value, attr, depth)) return v;
      }
    }
    // `torch.bfloat16`: a dotted name whose base is an import. Anything else (`x.y` of a
    // local object) is not a constant we can see.
    auto base = base_name(e, src_);
    if (!base || !model_.import_of(*base)) return std::nullopt;
    if (auto q = model_.qualified_name(e)) return dotted(*q, e);
    return std::nullopt;
  }

  TSNode single_value(const std::string& name, int scope) const {
    const auto* sites = model_.bindings_of(name, scope);
    if (!sites || sites->size() != 1 || (*sites)[0].position >= 0) return TSNode{};
    return unparenthesize((*sites)[0].value);
  }

  // `parser.add_argument("--batch-size", "-b", type=int, default=32)` for `args.batch_size`.
  std::optional<Folded> argparse_default(const std::string& attr) const {
    for (const Call& c : calls_) {
      if (callee_leaf(c.node, src_) != "add_argument") continue;
      if (!argument_names(c.node, attr)) continue;
      TSNode def = keyword_arg(c.node, "default", src_);
      auto v = fold(def, c.scope, 1);
      if (!v) return std::nullopt;
      v->via = "argparse default of `" + attr + "`";
      return v;
    }
    return std::nullopt;
  }

  bool argument_names(TSNode add_argument, const std::string& attr) const {
    if (TSNode dest = keyword_arg(add_argument, "dest", src_); !is_null(dest))
      return is(dest, k_.string) && string_content(dest, src_) == attr;
    for (unsigned i = 0;; ++i) {
      TSNode a = positional_arg(add_argument, i);
      if (is_null(a)) return false;
      if (!is(a, k_.string)) continue;
      std::string name(string_content(a, src_));
      size_t dashes = name.find_first_not_of('-');
      if (dashes == 0 || dashes == std::string::npos) {
        if (dashes == 0 && name == attr) return true;  // a positional argument
        continue;
      }
      name = name.substr(dashes);
      std::replace(name.begin(), name.end(), '-', '_');
      if (name == attr && dashes == 2) return true;
    }
  }

  // `cfg = TrainConfig()` with `class TrainConfig: batch_size: int = 32` (a dataclass or
  // any class whose body assigns the attribute once), unless the call passes it.
  std::optional<Folded> dataclass_default(TSNode call, const std::string& attr, int depth) const {
    if (TSNode passed = keyword_arg(call, attr, src_); !is_null(passed)) return fold(passed, model_.scope_enclosing(call), depth + 1);
    auto callee = dotted_name(field(call, k_.f_function), src_);
    if (!callee) return std::nullopt;
    int cls = model_.class_named(*callee);
    if (cls < 0) return std::nullopt;
    int class_scope = model_.scope_opened_by(model_.classes()[cls].node);
    if (class_scope < 0) return std::nullopt;
    const auto& bindings = model_.scopes()[class_scope].bindings;
    auto it = bindings.find(attr);
    if (it == bindings.end() || it->second.size() != 1) return std::nullopt;
    auto v = fold(it->second[0].value, class_scope, depth + 1);
    if (v) v->via = "default of `" + model_.classes()[cls].name + "." + attr + "`";
    return v;
  }

  Reading read(TSNode use, int scope) const {
    Reading r;
    r.use = use;
    if (is_null(use)) return r;
    r.value = fold(use, scope);
    if (!r.value) r.blocking = text(use);
    return r;
  }

  // A keyword as passed: `name=...`, or inside a `**kwargs` whose binding is a dict literal
  // (`train_kwargs = {"batch_size": args.batch_size}`; DataLoader(ds, **train_kwargs)).
  Reading keyword(const Call& c, std::string_view name) const {
    TSNode direct = keyword_arg(c.node, name, src_);
    if (!is_null(direct)) return read(direct, c.scope);
    TSNode args = field(c.node, k_.f_arguments);
    for (uint32_t i = 0; i < ts_node_named_child_count(args); ++i) {
      TSNode a = ts_node_named_child(args, i);
      if (!is(a, k_.dictionary_splat)) continue;
      TSNode dict = unparenthesize(ts_node_named_child(a, 0));
      int scope = c.scope;
      if (is(dict, k_.identifier)) {
        int found = -1;
        const auto* sites = model_.bindings_of(text(dict), c.scope, &found);
        if (!sites || sites->size() != 1) continue;
        dict = unparenthesize((*sites)[0].value);
        scope = found;
      }
      if (!is(dict, k_.dictionary)) continue;
      for (uint32_t j = 0; j < ts_node_named_child_count(dict); ++j) {
        TSNode pair = ts_node_named_child(dict, j);
        if (!is(pair, k_.pair)) continue;
        TSNode key = ts_node_child_by_field_name(pair, "key", 3);
        if (is(key, k_.string) && string_content(key, src_) == name) return read(field(pair, k_.f_value), scope);
      }
    }
    return read(TSNode{}, c.scope);
  }

  // The Source of a field read at `r` (`what` names it as the script spells it).
  Source source_of(const Reading& r, std::string_view what) const {
    Source s;
    s.range = range_of(r.value ? r.value->site : r.use);
    s.detail = std::string(what) + "=" + text(r.use);
    if (r.value) {
      s.kind = SourceKind::Script;
      if (!r.value->via.empty() && r.value->site.id != r.use.id) s.detail += " (" + r.value->via + ")";
    } else {
      s.kind = SourceKind::Unknown;
      s.blocking_expression = r.blocking;
    }
    return s;
  }

  // The largest value a field of type T (an integer, or an optional one) holds.
  template <class T>
  static constexpr int64_t largest() {
    if constexpr (requires { typename T::value_type; }) return std::numeric_limits<typename T::value_type>::max();
    else return std::numeric_limits<T>::max();
  }

  template <class T>
  void set_int(Field<T>& f, const Reading& r, std::string_view what) const {
    if (is_null(r.use)) return;
    // A value past what the field holds (`2 ** 40` as a batch size) is not read: narrowed,
    // it would be some other, plausible number.
    if (r.value && r.value->kind == Folded::Kind::Int && r.value->i > 0 &&
        r.value->i <= largest<T>()) {
      f.set(static_cast<T>(r.value->i), source_of(r, what));
    } else {
      Reading unknown = r;
      if (r.value) unknown.value.reset(), unknown.blocking = text(r.use);
      f.source = source_of(unknown, what);
    }
  }

  void set_bool(Field<bool>& f, const Reading& r, std::string_view what) const {
    if (is_null(r.use)) return;
    if (r.value && r.value->kind == Folded::Kind::Bool) f.set(r.value->b, source_of(r, what));
    else f.source = source_of(Reading{std::nullopt, r.use, text(r.use)}, what);
  }

  Source call_source(const Call& c, std::string detail) const {
    Source s{SourceKind::Script, std::move(detail), range_of(c.node), {}};
    return s;
  }

  // --- the pieces of the job -------------------------------------------------------------
  bool from_transformers(const Call& c) const {
    return starts_with(c.callee, "transformers.") || starts_with(c.callee, "peft.") || starts_with(c.callee, "trl.");
  }

  const Call* model_load() const {
    for (const Call& c : calls_) {
      if (!ends_with(c.callee, ".from_pretrained") || !from_transformers(c)) continue;
      const std::string owner = c.callee.substr(0, c.callee.size() - std::string_view(".from_pretrained").size());
      std::string_view cls = leaf_of(owner);
      for (std::string_view not_a_model : {"Tokenizer", "Processor", "Config", "FeatureExtractor", "ImageProcessor"})
        if (cls.find(not_a_model) != std::string_view::npos) goto next;
      return &c;
    next:;
    }
    return nullptr;
  }

  void read_model(JobSpec& job) {
    if (const Call* load = model_load()) {
      read_pretrained(*load, job);
      return;
    }
    for (const Call& c : calls_) {
      // torchvision's registry (`get_model("resnet50")`): the model is its first argument,
      // not the function's name.
      if ((c.callee == "torchvision.models.get_model" || c.callee == "torchvision.models.get_model_builder")) {
        Reading r = read(positional_arg(c.node, 0), c.scope);
        if (is_null(r.use)) r = keyword(c, "name");
        if (r.value && r.value->kind == Folded::Kind::Str) job.model.set(r.value->s, source_of(r, leaf_of(c.callee)));
        else if (!is_null(r.use)) job.model.source = source_of(Reading{std::nullopt, r.use, text(r.use)}, leaf_of(c.callee));
        return;
      }
      if (starts_with(c.callee, "torchvision.models.") && leaf_of(c.callee) != "__init__") {
        job.model.set(std::string(leaf_of(c.callee)), call_source(c, text(field(c.node, k_.f_function)) + "()"));
        return;
      }
      if (c.callee == "timm.create_model") {
        Reading r = read(positional_arg(c.node, 0), c.scope);
        if (r.value && r.value->kind == Folded::Kind::Str) job.model.set(r.value->s, source_of(r, "timm.create_model"));
        else if (!is_null(r.use)) job.model.source = source_of(Reading{std::nullopt, r.use, text(r.use)}, "timm.create_model");
        return;
      }
    }
    if (const Call* c = local_model_instantiation()) read_local_model(*c, job);
  }

  // The first `Net(...)` of a local nn.Module class that no other local module builds: the
  // model the script trains (its submodules are counted inside it).
  const Call* local_model_instantiation() const {
    for (const Call& c : calls_) {
      int ci = model_.class_named(c.callee);
      if (ci < 0 || !model_.classes()[ci].is_module || inside_module_class(c.scope)) continue;
      return &c;
    }
    return nullptr;
  }

  bool inside_module_class(int scope) const {
    for (int s = scope; s >= 0; s = model_.scopes()[s].parent) {
      int ci = model_.scopes()[s].class_index >= 0 ? model_.scopes()[s].class_index : model_.enclosing_class(s);
      if (ci >= 0 && model_.classes()[ci].is_module) return true;
    }
    return false;
  }

  void read_local_model(const Call& c, JobSpec& job) const {
    int ci = model_.class_named(c.callee);
    const std::string name = model_.classes()[ci].name;
    ModuleParams p = count_module_params(model_, ci, c.node);
    const std::string detail = "local class `" + name + "`, counted from its layer shapes";
    if (p.count) job.params.set(*p.count, Source{SourceKind::Script, detail, range_of(c.node), {}});
    else job.params.source = Source{SourceKind::Unknown, detail, range_of(c.node), p.blocking};
  }

  void read_pretrained(const Call& c, JobSpec& job) {
    Reading id = read(positional_arg(c.node, 0), c.scope);
    if (is_null(id.use)) id = keyword(c, "pretrained_model_name_or_path");
    if (id.value && id.value->kind == Folded::Kind::Str) job.model.set(id.value->s, source_of(id, "from_pretrained"));
    else if (!is_null(id.use)) job.model.source = source_of(Reading{std::nullopt, id.use, text(id.use)}, "from_pretrained");
    const std::string owner = c.callee.substr(0, c.callee.rfind('.'));
    std::string_view cls = leaf_of(owner);
    if (cls.find("ForCausalLM") != std::string_view::npos) job.head.set(Head::CausalLm, call_source(c, std::string(cls)));
    else if (cls.find("ForMaskedLM") != std::string_view::npos) job.head.set(Head::MaskedLm, call_source(c, std::string(cls)));
    else if (cls.find("ForSequenceClassification") != std::string_view::npos)
      job.head.set(Head::SequenceClassification, call_source(c, std::string(cls)));
    else if (cls == "AutoModel") job.head.set(Head::None, call_source(c, std::string(cls)));
    read_weight_dtype(c);
    read_quantization(c, job);
    read_attention(c, job);
  }

  // `attn_implementation="eager" | "sdpa" | "flash_attention_2"` (or the older
  // `use_flash_attention_2=True`). A value that does not fold, or names a kernel without a
  // memory model here, is Unknown: the interval then spans eager through SDPA.
  void read_attention(const Call& c, JobSpec& job) const {
    Reading attn = keyword(c, "attn_implementation");
    if (is_null(attn.use)) {
      Reading flash2 = keyword(c, "use_flash_attention_2");
      if (flash2.value && flash2.value->kind == Folded::Kind::Bool && flash2.value->b)
        job.attention.set(Attention::Flash, source_of(flash2, "use_flash_attention_2"));
      return;
    }
    if (attn.value && attn.value->kind == Folded::Kind::Str) {
      const std::string& a = attn.value->s;
      if (a == "eager") return job.attention.set(Attention::Eager, source_of(attn, "attn_implementation"));
      if (a == "sdpa") return job.attention.set(Attention::Sdpa, source_of(attn, "attn_implementation"));
      if (starts_with(a, "flash_attention")) return job.attention.set(Attention::Flash, source_of(attn, "attn_implementation"));
    }
    job.attention.source = source_of(Reading{std::nullopt, attn.use, text(attn.use)}, "attn_implementation");
  }

  // `torch_dtype=` / `dtype=` of the load: the weights' dtype (decides pure vs mixed).
  void read_weight_dtype(const Call& c) {
    for (std::string_view kw : {"torch_dtype", "dtype"}) {
      Reading r = keyword(c, kw);
      if (is_null(r.use)) continue;
      weight_dtype_ = dtype_of(r);
      weight_dtype_source_ = source_of(r, kw);
      return;
    }
  }

  // "bf16" / "fp16" / "fp32" / "" (auto or not foldable) from a dtype expression.
  static std::string dtype_of(const Reading& r) {
    if (!r.value) return "";
    std::string v = r.value->s;
    if (r.value->kind == Folded::Kind::Dotted) v = std::string(leaf_of(v));
    if (v == "bfloat16" || v == "bf16") return "bf16";
    if (v == "float16" || v == "half" || v == "fp16") return "fp16";
    if (v == "float32" || v == "float" || v == "fp32") return "fp32";
    return "";
  }

  void read_quantization(const Call& load, JobSpec& job) {
    auto from_flags = [&](const Call& c, const char* detail) {
      Reading four = keyword(c, "load_in_4bit"), eight = keyword(c, "load_in_8bit");
      if (four.value && four.value->kind == Folded::Kind::Bool && four.value->b) {
        job.quantization.set(Quantization::Nf4, source_of(four, "load_in_4bit"));
        Reading dq = keyword(c, "bnb_4bit_use_double_quant");
        if (dq.value && dq.value->kind == Folded::Kind::Bool) job.double_quant.set(dq.value->b, source_of(dq, "bnb_4bit_use_double_quant"));
        else job.double_quant.set(false, call_source(c, std::string(detail) + " without bnb_4bit_use_double_quant"));
        return true;
      }
      if (eight.value && eight.value->kind == Folded::Kind::Bool && eight.value->b) {
        job.quantization.set(Quantization::Int8, source_of(eight, "load_in_8bit"));
        return true;
      }
      return false;
    };
    if (from_flags(load, "from_pretrained")) return;
    TSNode config = keyword_arg(load.node, "quantization_config", src_);
    if (is_null(config)) return;
    TSNode call = unparenthesize(config);
    if (is(call, k_.identifier)) call = single_value(text(call), load.scope);
    for (const Call& c : calls_)
      if (!is_null(call) && c.node.id == call.id && leaf_of(c.callee) == "BitsAndBytesConfig" && from_flags(c, "BitsAndBytesConfig"))
        return;
    job.quantization.source = source_of(Reading{std::nullopt, config, text(config)}, "quantization_config");
  }

  // TrainingArguments / SFTConfig / Seq2SeqTrainingArguments and friends.
  bool is_training_arguments(const Call& c) const {
    std::string_view leaf = leaf_of(c.callee);
    // trl's SFTConfig / DPOConfig / GRPOConfig subclass TrainingArguments; transformers'
    // own *Config classes are model configurations and are not.
    if (starts_with(c.callee, "transformers.")) return ends_with(leaf, "TrainingArguments");
    return starts_with(c.callee, "trl.") && (ends_with(leaf, "TrainingArguments") || ends_with(leaf, "Config"));
  }

  void read_training_arguments(JobSpec& job) {
    for (const Call& c : calls_) {
      if (!is_training_arguments(c)) continue;
      set_int(job.batch_size, keyword(c, "per_device_train_batch_size"), "per_device_train_batch_size");
      set_int(job.accumulation_steps, keyword(c, "gradient_accumulation_steps"), "gradient_accumulation_steps");
      set_bool(job.gradient_checkpointing, keyword(c, "gradient_checkpointing"), "gradient_checkpointing");
      for (std::string_view kw : {"max_seq_length", "max_length"}) set_int(job.seq_len, keyword(c, kw), kw);
      Reading bf16 = keyword(c, "bf16"), fp16 = keyword(c, "fp16");
      if (bf16.value && bf16.value->kind == Folded::Kind::Bool && bf16.value->b) amp("bf16", source_of(bf16, "bf16"));
      if (fp16.value && fp16.value->kind == Folded::Kind::Bool && fp16.value->b) amp("fp16", source_of(fp16, "fp16"));
      read_hf_optim(keyword(c, "optim"), job);
      if (TSNode ds = keyword_arg(c.node, "deepspeed", src_); !is_null(ds)) deepspeed_use_ = {ds, c.scope, "deepspeed"};
    }
  }

  // --- DeepSpeed ------------------------------------------------------------------------------
  struct ConfigUse {
    TSNode node{};
    int scope = 0;
    std::string what;  // how the script passes it: `deepspeed`, `config`, `--deepspeed default`
  };

  // Where the script hands DeepSpeed its config: TrainingArguments(deepspeed=...) (read with
  // the arguments), deepspeed.initialize(config= / config_params=), else an argparse
  // `--deepspeed` / `--deepspeed_config` default.
  ConfigUse deepspeed_config_use() const {
    if (!is_null(deepspeed_use_.node)) return deepspeed_use_;
    for (const Call& c : calls_) {
      if (c.callee != "deepspeed.initialize") continue;
      for (std::string_view kw : {"config", "config_params"})
        if (TSNode v = keyword_arg(c.node, kw, src_); !is_null(v)) return {v, c.scope, std::string(kw)};
    }
    for (const Call& c : calls_) {
      if (callee_leaf(c.node, src_) != "add_argument") continue;
      for (const char* name : {"deepspeed", "deepspeed_config", "ds_config"}) {
        if (!argument_names(c.node, name)) continue;
        TSNode def = keyword_arg(c.node, "default", src_);
        if (!is_null(def) && !is(unparenthesize(def), k_.none)) return {def, c.scope, "--" + std::string(name) + " default"};
      }
    }
    return {};
  }

  void read_deepspeed(JobSpec& job) {
    const ConfigUse use = deepspeed_config_use();
    if (is_null(use.node)) return;
    TSNode value = unparenthesize(use.node);
    int scope = use.scope;
    if (is(value, k_.identifier)) {
      if (TSNode bound = single_value(text(value), scope); !is_null(bound) && is(bound, k_.dictionary)) value = bound;
    }
    const std::string detail = use.what + "=" + text(use.node);
    if (is(value, k_.dictionary)) {
      std::string error;
      if (auto config = parse_deepspeed_config(json_of(value, scope, 0), error))
        apply_deepspeed_config(*config, Source{SourceKind::Script, "DeepSpeed config " + detail, range_of(value), {}}, job);
      return;
    }
    Reading r = read(use.node, scope);
    if (r.value && r.value->kind == Folded::Kind::Str) {
      deepspeed_file_ = DeepSpeedReference{r.value->s, range_of(r.value->site), detail};
      return;
    }
    job.sharding.source = source_of(Reading{std::nullopt, use.node, text(use.node)}, "DeepSpeed config " + use.what);
  }

  // A dict / list literal as JSON, every leaf folded; a leaf that does not fold keeps its
  // expression (`{"$unfolded": "args.stage"}`) so the config reader reports what blocked it.
  nlohmann::json json_of(TSNode e, int scope, int depth) const {
    e = unparenthesize(e);
    if (depth > kMaxFoldDepth) return {{std::string(kUnfoldedKey), text(e)}};
    if (is(e, k_.identifier)) {
      if (TSNode bound = single_value(text(e), scope); !is_null(bound) && (is(bound, k_.dictionary) || is(bound, k_.list)))
        return json_of(bound, scope, depth + 1);
    }
    if (is(e, k_.dictionary)) {
      nlohmann::json object = nlohmann::json::object();
      for (uint32_t i = 0; i < ts_node_named_child_count(e); ++i) {
        TSNode pair = ts_node_named_child(e, i);
        if (!is(pair, k_.pair)) continue;
        auto key = fold(ts_node_child_by_field_name(pair, "key", 3), scope);
        if (key && key->kind == Folded::Kind::Str) object[key->s] = json_of(field(pair, k_.f_value), scope, depth + 1);
      }
      return object;
    }
    if (is(e, k_.list) || is(e, k_.tuple)) {
      nlohmann::json array = nlohmann::json::array();
      for_each_named_child(e, [&](TSNode item) { array.push_back(json_of(item, scope, depth + 1)); });
      return array;
    }
    if (is(e, k_.none)) return nullptr;
    auto v = fold(e, scope);
    if (!v) return {{std::string(kUnfoldedKey), text(e)}};
    switch (v->kind) {
      case Folded::Kind::Int: return v->i;
      case Folded::Kind::Float: return v->f;
      case Folded::Kind::Bool: return v->b;
      case Folded::Kind::Str: return v->s;
      case Folded::Kind::Dotted: break;
    }
    return {{std::string(kUnfoldedKey), text(e)}};
  }

  void read_hf_optim(const Reading& r, JobSpec& job) {
    if (is_null(r.use)) return;
    if (!r.value || r.value->kind != Folded::Kind::Str) {
      job.optimizer.source = source_of(Reading{std::nullopt, r.use, text(r.use)}, "optim");
      return;
    }
    const std::string& o = r.value->s;
    Source s = source_of(r, "optim");
    if (o == "adamw_bnb_8bit" || o == "adamw_8bit" || o == "bnb_8bit") job.optimizer.set(Optimizer::AdamW8bit, s);
    else if (o == "paged_adamw_8bit") job.optimizer.set(Optimizer::PagedAdamW8bit, s);
    else if (o == "adafactor") job.optimizer.set(Optimizer::Adafactor, s);
    else if (o == "sgd") job.optimizer.set(Optimizer::Sgd, s);
    else if (o == "lion_8bit" || o == "paged_lion_8bit") job.optimizer.set(Optimizer::Lion8bit, s);
    else if (starts_with(o, "lion")) job.optimizer.set(Optimizer::Lion, s);
    else if (starts_with(o, "adamw")) {
      job.optimizer.set(Optimizer::AdamW, s);
      if (o == "adamw_torch_fused") job.optimizer_impl.set(OptimizerImpl::Fused, s);
    }
  }

  // Mixed-precision evidence (autocast, GradScaler, bf16=True, mixed_precision="bf16").
  void amp(std::string dtype, Source s) {
    if (!amp_dtype_.empty() && amp_dtype_ == "bf16") return;  // an explicit bf16 autocast wins
    amp_dtype_ = std::move(dtype);
    amp_source_ = std::move(s);
  }

  void read_precision_calls() {
    for (const Call& c : calls_) {
      std::string_view leaf = leaf_of(c.callee);
      if (leaf == "autocast" && starts_with(c.callee, "torch.")) {
        if (c.callee == "torch.cpu.amp.autocast") continue;
        TSNode device = positional_arg(c.node, 0);
        if (!is_null(device) && is(device, k_.string) && string_content(device, src_) == "cpu") continue;
        Reading d = keyword(c, "dtype");
        std::string dt = is_null(d.use) ? "fp16" : dtype_of(d);
        if (dt.empty()) continue;
        amp(dt, is_null(d.use) ? call_source(c, text(field(c.node, k_.f_function)) + "() (float16 by default on CUDA)")
                               : source_of(d, "dtype"));
      } else if (leaf == "GradScaler" && starts_with(c.callee, "torch.")) {
        if (amp_dtype_.empty()) amp("fp16", call_source(c, "GradScaler()"));
      } else if (c.callee == "accelerate.Accelerator") {
        pending_accumulation_ = keyword(c, "gradient_accumulation_steps");
        Reading mp = keyword(c, "mixed_precision");
        if (mp.value && mp.value->kind == Folded::Kind::Str && (mp.value->s == "bf16" || mp.value->s == "fp16"))
          amp(mp.value->s, source_of(mp, "mixed_precision"));
      } else if (leaf == "Trainer" && is_lightning(c.callee)) {
        Reading p = keyword(c, "precision");
        if (!p.value) continue;
        std::string v = p.value->kind == Folded::Kind::Int ? std::to_string(p.value->i) : p.value->s;
        if (v == "bf16-mixed" || v == "bf16") amp("bf16", source_of(p, "precision"));
        else if (v == "16-mixed" || v == "16") amp("fp16", source_of(p, "precision"));
        else if (v == "bf16-true") weight_dtype_ = "bf16", weight_dtype_source_ = source_of(p, "precision");
        else if (v == "16-true") weight_dtype_ = "fp16", weight_dtype_source_ = source_of(p, "precision");
      } else if ((leaf == "half" || leaf == "bfloat16") && receiver_is_model(c)) {
        weight_dtype_ = leaf == "half" ? "fp16" : "bf16";
        weight_dtype_source_ = call_source(c, text(c.node));
      }
    }
  }

  bool receiver_is_model(const Call& c) const {
    TSNode callee = field(c.node, k_.f_function);
    if (!is(callee, k_.attribute)) return false;
    TSNode object = unparenthesize(field(callee, k_.f_object));
    auto name = dotted_name(object, src_);
    return name && model_.is_model(*name, c.scope);
  }

  static bool is_lightning(std::string_view callee) {
    return starts_with(callee, "lightning.") || starts_with(callee, "pytorch_lightning.");
  }

  void apply_precision(JobSpec& job) const {
    if (weight_dtype_ == "bf16") job.precision.set(Precision::PureBf16, weight_dtype_source_);
    else if (weight_dtype_ == "fp16") job.precision.set(amp_dtype_ == "fp16" ? Precision::Fp16Master : Precision::PureFp16, weight_dtype_source_);
    else if (amp_dtype_ == "bf16") job.precision.set(Precision::AmpBf16, amp_source_);
    else if (amp_dtype_ == "fp16") job.precision.set(Precision::AmpFp16, amp_source_);
    else if (weight_dtype_source_.kind == SourceKind::Unknown) job.precision.source = weight_dtype_source_;
    // Nothing in the script asks for less than fp32 (no autocast, GradScaler, half-precision
    // load or cast, trainer flag): that is what the script runs, read from it, so the interval
    // does not reach down to bf16 as it does when no script was read (issue 25).
    else job.precision.source = Source::derived("fp32: the script shows no autocast, GradScaler, half-precision load or cast");
  }

  void read_optimizer(JobSpec& job) {
    for (const Call& c : calls_) {
      std::optional<Optimizer> o = torch_optimizer(c);
      if (!o && unmodelled_torch_optimizer(c)) {
        // Adadelta, NAdam, LBFGS, ...: say so, rather than estimate AdamW silently.
        job.optimizer.source = Source{SourceKind::Unknown, text(field(c.node, k_.f_function)), range_of(c.node),
                                      text(field(c.node, k_.f_function)) + " (no state model for it)"};
        return;
      }
      if (!o) continue;
      Source s = call_source(c, text(field(c.node, k_.f_function)) + "(...)");
      if (*o == Optimizer::Sgd) {
        Reading m = keyword(c, "momentum");
        if (!is_null(m.use) && (!m.value || (m.value->kind == Folded::Kind::Float ? m.value->f != 0 : m.value->i != 0)))
          o = Optimizer::SgdMomentum;
      }
      job.optimizer.set(*o, s);
      Reading fused = keyword(c, "fused"), foreach = keyword(c, "foreach");
      if (fused.value && fused.value->kind == Folded::Kind::Bool && fused.value->b) job.optimizer_impl.set(OptimizerImpl::Fused, source_of(fused, "fused"));
      else if (foreach.value && foreach.value->kind == Folded::Kind::Bool && !foreach.value->b)
        job.optimizer_impl.set(OptimizerImpl::ForLoop, source_of(foreach, "foreach"));
      return;  // the first optimizer the script builds is the one it steps
    }
  }

  static bool unmodelled_torch_optimizer(const Call& c) {
    std::string_view q = c.callee, leaf = leaf_of(q);
    return starts_with(q, "torch.optim.") && q.find('.', 12) == std::string_view::npos && !leaf.empty() &&
           std::isupper(static_cast<unsigned char>(leaf[0])) && leaf != "Optimizer";
  }

  static std::optional<Optimizer> torch_optimizer(const Call& c) {
    std::string_view q = c.callee, leaf = leaf_of(q);
    if (starts_with(q, "torch.optim.")) {
      if (leaf == "SGD") return Optimizer::Sgd;
      if (leaf == "Adam") return Optimizer::Adam;
      if (leaf == "AdamW") return Optimizer::AdamW;
      if (leaf == "RMSprop") return Optimizer::RmsProp;
      if (leaf == "Adagrad") return Optimizer::Adagrad;
    }
    if (starts_with(q, "bitsandbytes.")) {
      if (leaf == "AdamW8bit" || leaf == "Adam8bit") return Optimizer::AdamW8bit;
      if (leaf == "PagedAdamW8bit") return Optimizer::PagedAdamW8bit;
      if (leaf == "Lion8bit" || leaf == "PagedLion8bit") return Optimizer::Lion8bit;
    }
    if (starts_with(q, "transformers.") && leaf == "Adafactor") return Optimizer::Adafactor;
    if (starts_with(q, "lion_pytorch.") && leaf == "Lion") return Optimizer::Lion;
    return std::nullopt;
  }

  // Only the real APIs: `save_checkpoint` and friends are not activation checkpointing.
  void read_checkpointing(JobSpec& job) {
    for (const Call& c : calls_) {
      std::string_view leaf = callee_leaf(c.node, src_);
      bool api = (leaf == "gradient_checkpointing_enable" && receiver_is_model(c)) ||
                 c.callee == "torch.utils.checkpoint.checkpoint" || c.callee == "torch.utils.checkpoint.checkpoint_sequential";
      if (!api) continue;
      job.gradient_checkpointing.set(true, call_source(c, text(field(c.node, k_.f_function)) + "()"));
      return;
    }
  }

  void read_peft(JobSpec& job) {
    const Call* config = nullptr;
    bool applied = false;
    for (const Call& c : calls_) {
      if (c.callee == "peft.LoraConfig") config = config ? config : &c;
      if (c.callee == "peft.get_peft_model" || c.callee == "peft.prepare_model_for_kbit_training") applied = applied || c.callee == "peft.get_peft_model";
    }
    // trl's trainers apply a `peft_config=` themselves.
    for (const Call& c : calls_)
      if (starts_with(c.callee, "trl.") && !is_null(keyword_arg(c.node, "peft_config", src_))) applied = true;
    if (!config || !applied) return;
    job.peft.set(job.quantization.value == Quantization::Nf4 ? Peft::Qlora : Peft::Lora, call_source(*config, "LoraConfig(...)"));
    set_int(job.lora_rank, keyword(*config, "r"), "r");
    TSNode targets = keyword_arg(config->node, "target_modules", src_);
    if (is_null(targets)) return;
    std::vector<std::string> names;
    bool literal = is(targets, k_.list) || is(targets, k_.tuple) || is(targets, k_.set);
    if (literal)
      for_each_named_child(targets, [&](TSNode e) {
        if (is(e, k_.string)) names.emplace_back(string_content(e, src_));
        else literal = false;
      });
    if (literal && !names.empty()) job.lora_targets.set(names, Source{SourceKind::Script, "target_modules=" + text(targets), range_of(targets), {}});
    else job.lora_targets.source = Source{SourceKind::Unknown, "target_modules", range_of(targets), text(targets)};
  }

  // The names scripts give the tokens per sample, most specific first: a block / packing
  // size is what the model sees; `max_length` is also a generation length; the tokenizer's
  // `model_max_length` is only a cap.
  static constexpr std::string_view kSequenceNames[] = {
      "block_size", "max_seq_length", "max_seq_len", "cutoff_len", "seq_len", "seq_length",
      "max_len", "context_length", "max_length", "model_max_length"};

  void read_sequence(JobSpec& job) {
    if (job.seq_len.stated()) return;
    // A tokenizer call's `max_length` (the padded / truncated length of one sample). Read
    // once: the reference added it to a block size and counted the context twice.
    for (const Call& c : calls_) {
      if (!is_tokenizer_call(c)) continue;
      Reading r = keyword(c, "max_length");
      if (is_null(r.use) || is(unparenthesize(r.use), k_.none)) continue;  // None: no fixed length
      set_int(job.seq_len, r, "max_length");
      return;
    }
    // trl's trainers (older API: SFTTrainer(max_seq_length=...)) and a tokenizer loaded
    // with a cap (`AutoTokenizer.from_pretrained(..., model_max_length=512)`).
    for (const Call& c : calls_) {
      const bool trl_trainer = starts_with(c.callee, "trl.") && ends_with(leaf_of(c.callee), "Trainer");
      const bool tokenizer_load = starts_with(c.callee, "transformers.") && ends_with(c.callee, ".from_pretrained") &&
                                  c.callee.find("Tokenizer") != std::string::npos;
      for (std::string_view kw : {"max_seq_length", "max_length", "model_max_length"}) {
        if (!(trl_trainer && kw != "model_max_length") && !(tokenizer_load && kw == "model_max_length")) continue;
        Reading r = keyword(c, kw);
        if (is_null(r.use) || is(unparenthesize(r.use), k_.none)) continue;
        set_int(job.seq_len, r, kw);
        return;
      }
    }
    // Otherwise the value the script declares under one of the usual names: an argparse
    // default, a (data)class field default, a config dict's entry, a module constant.
    for (std::string_view name : kSequenceNames) {
      std::optional<std::pair<Reading, std::string>> found = declared_int(std::string(name));
      if (!found) continue;
      set_int(job.seq_len, found->first, found->second);
      if (job.seq_len.value) return;
    }
  }

  // `name` declared with an integer the script fixes: (the reading, how it is spelt).
  std::optional<std::pair<Reading, std::string>> declared_int(const std::string& name) const {
    auto usable = [](const Reading& r) { return r.value && r.value->kind == Folded::Kind::Int && r.value->i > 0; };
    for (const Call& c : calls_) {
      if (callee_leaf(c.node, src_) != "add_argument" || !argument_names(c.node, name)) continue;
      TSNode def = keyword_arg(c.node, "default", src_);
      if (Reading r = read(def, c.scope); usable(r)) return std::pair{r, "argparse --" + name + " default"};
    }
    for (const ClassInfo& cls : model_.classes()) {
      const int scope = model_.scope_opened_by(cls.node);
      if (scope < 0) continue;
      const auto& bindings = model_.scopes()[scope].bindings;
      auto it = bindings.find(name);
      if (it == bindings.end() || it->second.size() != 1) continue;
      TSNode value = unparenthesize(it->second[0].value);
      // `field(default=1024, metadata=...)` in a dataclass.
      if (is(value, k_.call) && callee_leaf(value, src_) == "field") value = keyword_arg(value, "default", src_);
      if (Reading r = read(value, scope); usable(r)) return std::pair{r, cls.name + "." + name};
    }
    for (const auto& [dict, scope] : dicts_) {
      for (uint32_t j = 0; j < ts_node_named_child_count(dict); ++j) {
        TSNode pair = ts_node_named_child(dict, j);
        if (!is(pair, k_.pair)) continue;
        TSNode key = ts_node_child_by_field_name(pair, "key", 3);
        if (!is(key, k_.string) || string_content(key, src_) != name) continue;
        if (Reading r = read(field(pair, k_.f_value), scope); usable(r)) return std::pair{r, "\"" + name + "\""};
      }
    }
    const auto& module = model_.scopes()[0].bindings;
    for (const auto& [binding, sites] : module) {
      std::string lower = binding;
      for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      if (lower != name || sites.size() != 1 || sites[0].position >= 0) continue;
      if (Reading r = read(sites[0].value, 0); usable(r)) return std::pair{r, binding};
    }
    return std::nullopt;
  }

  bool is_tokenizer_call(const Call& c) const {
    TSNode callee = field(c.node, k_.f_function);
    std::string_view leaf = callee_leaf(c.node, src_);
    if (leaf != "encode" && leaf != "encode_plus" && leaf != "batch_encode_plus" && !is(callee, k_.identifier) &&
        !is(callee, k_.attribute))
      return false;
    TSNode object = is(callee, k_.attribute) && (leaf == "encode" || leaf == "encode_plus" || leaf == "batch_encode_plus")
                        ? field(callee, k_.f_object)
                        : callee;
    auto name = dotted_name(object, src_);
    if (!name) return false;
    TSNode value = single_value(*name, c.scope);
    if (is_null(value) || !is(value, k_.call)) return false;
    auto q = model_.qualified_name(field(value, k_.f_function));
    return q && starts_with(*q, "transformers.") && q->find("Tokenizer") != std::string::npos && ends_with(*q, ".from_pretrained");
  }

  void read_image_size(JobSpec& job) {
    const Call* best = nullptr;
    for (const Call& c : calls_) {
      if (!starts_with(c.callee, "torchvision.transforms.")) continue;
      std::string_view leaf = leaf_of(c.callee);
      if (leaf == "RandomResizedCrop" || leaf == "CenterCrop" || leaf == "RandomCrop") {
        best = &c;
        break;
      }
      if (leaf == "Resize" && !best) best = &c;
    }
    if (!best) return;
    Reading r = read(positional_arg(best->node, 0), best->scope);
    if (is_null(r.use)) r = keyword(*best, "size");
    set_int(job.image_size, r, leaf_of(best->callee));
  }

  void read_sharding(JobSpec& job) {
    for (const Call& c : calls_) {
      std::string_view leaf = leaf_of(c.callee);
      if (c.callee == "torch.nn.parallel.DistributedDataParallel" ||
          (leaf == "DistributedDataParallel" && starts_with(c.callee, "torch."))) {
        job.sharding.set(Sharding::Ddp, call_source(c, "DistributedDataParallel(...)"));
        set_bool(job.ddp_bucket_view, keyword(c, "gradient_as_bucket_view"), "gradient_as_bucket_view");
      } else if (leaf == "FullyShardedDataParallel" && starts_with(c.callee, "torch.")) {
        Sharding s = Sharding::FsdpFull;
        TSNode strategy = keyword_arg(c.node, "sharding_strategy", src_);
        std::string st = is_null(strategy) ? "" : text(strategy);
        if (st.find("SHARD_GRAD_OP") != std::string::npos) s = Sharding::FsdpGradOp;
        else if (st.find("HYBRID_SHARD") != std::string::npos) s = Sharding::FsdpHybrid;
        job.sharding.set(s, call_source(c, "FullyShardedDataParallel(...)"));
      } else if (leaf == "fully_shard" && starts_with(c.callee, "torch.")) {
        job.sharding.set(Sharding::Fsdp2, call_source(c, "fully_shard(...)"));
      }
    }
  }

  // --- entry points ------------------------------------------------------------------------
  bool inside(TSNode inner, TSNode outer) const {
    return ts_node_start_byte(inner) >= ts_node_start_byte(outer) && ts_node_end_byte(inner) <= ts_node_end_byte(outer);
  }

  // The outermost for / while loop around `n` inside its function (or module top level).
  TSNode outer_loop(TSNode n) const {
    TSNode found{};
    for (TSNode p = ts_node_parent(n); !is_null(p); p = ts_node_parent(p)) {
      if (is(p, k_.function_definition) || is(p, k_.class_definition) || is(p, k_.lambda)) break;
      if (is(p, k_.for_statement) || is(p, k_.while_statement)) found = p;
    }
    return found;
  }

  std::string enclosing_function_name(TSNode n) const {
    for (TSNode p = ts_node_parent(n); !is_null(p); p = ts_node_parent(p))
      if (is(p, k_.function_definition)) return text(field(p, k_.f_name));
    return "";
  }

  // The line a code lens sits on: a loop's header (`for ... :`), not its whole body.
  ByteRange header_of(TSNode n) const {
    TSNode body = field(n, k_.f_body);
    uint32_t end = is_null(body) ? ts_node_end_byte(n) : ts_node_start_byte(body);
    std::string_view head = src_.substr(ts_node_start_byte(n), end - ts_node_start_byte(n));
    size_t cut = head.find_last_not_of(" \t\r\n:");
    return {ts_node_start_byte(n), ts_node_start_byte(n) + static_cast<uint32_t>(cut == std::string_view::npos ? head.size() : cut + 1)};
  }

  void training_loops(std::vector<ScriptJob>& out) const {
    std::vector<TSNode> backwards;
    for (size_t f = 0; f < model_.functions().size(); ++f) {
      if (model_.is_test_function(static_cast<int>(f))) continue;
      for (TSNode b : model_.functions()[f].backward_calls) backwards.push_back(b);
    }
    for (TSNode b : model_.module_backward_calls()) backwards.push_back(b);
    std::vector<const void*> seen;
    for (TSNode b : backwards) {
      TSNode loop = outer_loop(b);
      if (is_null(loop) || std::find(seen.begin(), seen.end(), loop.id) != seen.end()) continue;
      seen.push_back(loop.id);
      ScriptJob job;
      job.kind = EntryKind::TrainingLoop;
      std::string fn = enclosing_function_name(loop);
      job.entry_point = fn.empty() ? "the training loop at the top level" : "the training loop in `" + fn + "()`";
      job.anchor = header_of(loop);
      out.push_back(std::move(job));
    }
  }

  // `x.train()` / `x.fit()` where x is bound to a Trainer of the given library.
  void trainer_calls(std::vector<ScriptJob>& out) const {
    for (const Call& c : calls_) {
      std::string_view leaf = callee_leaf(c.node, src_);
      if (leaf != "train" && leaf != "fit") continue;
      TSNode callee = field(c.node, k_.f_function);
      if (!is(callee, k_.attribute)) continue;
      TSNode object = unparenthesize(field(callee, k_.f_object));
      TSNode built = is(object, k_.call) ? object : TSNode{};
      if (is(object, k_.identifier)) built = single_value(text(object), c.scope);
      if (is_null(built) || !is(built, k_.call)) continue;
      auto q = model_.qualified_name(field(built, k_.f_function));
      if (!q) continue;
      std::string_view cls = leaf_of(*q);
      bool hf = leaf == "train" && (starts_with(*q, "transformers.") || starts_with(*q, "trl.")) && ends_with(cls, "Trainer");
      bool pl = leaf == "fit" && is_lightning(*q) && cls == "Trainer";
      if (!hf && !pl) continue;
      ScriptJob job;
      job.kind = hf ? EntryKind::HfTrainer : EntryKind::LightningFit;
      job.entry_point = "`" + text(callee) + "()` (" + std::string(cls) + ")";
      job.anchor = range_of(c.node);
      out.push_back(std::move(job));
    }
  }

  void generations(std::vector<ScriptJob>& out, const std::vector<ScriptJob>& training) {
    for (const Call& c : calls_) {
      if (callee_leaf(c.node, src_) != "generate" || !receiver_is_model(c)) continue;
      bool in_training = false;
      for (const ScriptJob& t : training)
        if (t.kind == EntryKind::TrainingLoop) {
          TSNode loop = loop_of(t);
          if (!is_null(loop) && inside(c.node, loop)) in_training = true;
        }
      if (in_training) continue;  // a sample printed during training: part of that job
      ScriptJob job;
      job.kind = EntryKind::Generation;
      job.entry_point = "`" + text(field(c.node, k_.f_function)) + "()`";
      job.anchor = range_of(c.node);
      job.spec.inference_only.set(true, call_source(c, "generate()"));
      job.spec.generation.set(true, call_source(c, "generate()"));
      set_int(job.spec.beams, keyword(c, "num_beams"), "num_beams");
      Reading max_len = keyword(c, "max_length"), new_tokens = keyword(c, "max_new_tokens");
      if (!is_null(max_len.use)) set_int(job.spec.max_context, max_len, "max_length");
      else if (!is_null(new_tokens.use)) pending_new_tokens_.push_back({out.size(), new_tokens});
      out.push_back(std::move(job));
    }
  }

  // The for / while statement a training-loop job is anchored on (its header starts there).
  TSNode loop_of(const ScriptJob& job) const {
    TSNode loop = ts_node_descendant_for_byte_range(root_, job.anchor.begin, job.anchor.begin);
    while (!is_null(loop) && !is(loop, k_.for_statement) && !is(loop, k_.while_statement)) loop = ts_node_parent(loop);
    return loop;
  }

  // The DataLoader a training loop iterates (directly, or an inner loop of an epoch loop).
  const Call* loader_of(const ScriptJob& job) const {
    TSNode loop = loop_of(job);
    if (is_null(loop)) return nullptr;
    for (TSNode f : loops_) {
      if (!inside(f, loop)) continue;
      TSNode it = unparenthesize(field(f, k_.f_right));
      // enumerate(loader) / tqdm(loader) / zip(loader, ...): the first argument.
      while (is(it, k_.call) && !is_null(positional_arg(it, 0)) && !loader_call(it)) it = unparenthesize(positional_arg(it, 0));
      if (const Call* c = loader_call(it)) return c;
      if (auto name = dotted_name(it, src_)) {
        TSNode value = single_value(*name, model_.scope_enclosing(f));
        if (const Call* c = loader_call(value)) return c;
      }
    }
    return nullptr;
  }

  const Call* loader_call(TSNode n) const {
    if (is_null(n) || !is(n, k_.call) || !is_torch_dataloader(model_, n)) return nullptr;
    for (const Call& c : calls_)
      if (c.node.id == n.id) return &c;
    return nullptr;
  }

  void read_batch(ScriptJob& job) const {
    if (job.spec.batch_size.stated() || job.spec.batch_size.source.kind == SourceKind::Unknown) return;
    const Call* loader = job.kind == EntryKind::TrainingLoop ? loader_of(job) : nullptr;
    if (!loader)
      for (const Call& c : calls_)
        if (is_torch_dataloader(model_, c.node) && !is_null(keyword(c, "batch_size").use)) {
          loader = &c;
          break;
        }
    if (!loader) return;
    Reading r = keyword(*loader, "batch_size");
    if (is_null(r.use)) return;
    set_int(job.spec.batch_size, r, "batch_size");
  }

  std::string_view src_;
  TSNode root_;
  const ModuleModel& model_;
  const Kinds& k_;
  std::vector<Call> calls_;
  std::vector<TSNode> loops_;
  std::vector<std::pair<TSNode, int>> dicts_;  // dict literals with their scope (config dicts)
  std::string weight_dtype_, amp_dtype_;
  Source weight_dtype_source_, amp_source_;
  std::vector<std::pair<size_t, Reading>> pending_new_tokens_;
  Reading pending_accumulation_;  // Accelerator(gradient_accumulation_steps=...)  // generate(max_new_tokens=) by job
  ConfigUse deepspeed_use_;       // TrainingArguments(deepspeed=...)
  std::optional<DeepSpeedReference> deepspeed_file_;
};

std::vector<ScriptJob> Reader::jobs() {
  std::vector<ScriptJob> out;
  training_loops(out);
  trainer_calls(out);
  std::vector<ScriptJob> training = out;
  generations(out, training);
  if (out.empty()) return out;

  // File-wide facts: one model, one precision, one optimizer per script.
  JobSpec shared;
  read_model(shared);
  read_training_arguments(shared);
  read_precision_calls();
  apply_precision(shared);
  if (!shared.accumulation_steps.stated())
    set_int(shared.accumulation_steps, pending_accumulation_, "gradient_accumulation_steps");
  if (!shared.optimizer.stated()) read_optimizer(shared);
  if (!shared.gradient_checkpointing.stated()) read_checkpointing(shared);
  read_peft(shared);
  read_sequence(shared);
  read_image_size(shared);
  read_sharding(shared);
  // After everything the script states: the config's values replace them (the integration
  // rejects a mismatch, and fills "auto" from them).
  read_deepspeed(shared);

  for (size_t i = 0; i < out.size(); ++i) {
    ScriptJob& job = out[i];
    JobSpec spec = shared;
    if (job.kind == EntryKind::Generation) {
      spec.inference_only = job.spec.inference_only;
      spec.generation = job.spec.generation;
      spec.beams = job.spec.beams;
      spec.max_context = job.spec.max_context;
      if (spec.seq_len.value) spec.prompt_len.set(spec.seq_len.value, spec.seq_len.source);
    }
    if (job.kind == EntryKind::Generation) {
      // No optimizer runs, and a training DataLoader's batch is not the generation batch.
      spec.optimizer = JobSpec{}.optimizer;
      job.spec = std::move(spec);
      continue;
    }
    job.spec = std::move(spec);
    // The config's micro-batch is the batch; a DataLoader's is read only without it.
    read_batch(job);
    job.deepspeed_file = deepspeed_file_;
  }
  for (auto& [index, r] : pending_new_tokens_) {
    JobSpec& spec = out[index].spec;
    int context = 0;
    if (r.value && r.value->kind == Folded::Kind::Int && spec.prompt_len.value && r.value->i >= 0 &&
        r.value->i <= std::numeric_limits<int>::max() &&
        !__builtin_add_overflow(*spec.prompt_len.value, static_cast<int>(r.value->i), &context)) {
      Source s = source_of(r, "max_new_tokens");
      s.detail += " + the prompt's max_length";
      spec.max_context.set(context, s);
    } else {
      spec.max_context.source = source_of(Reading{std::nullopt, r.use, text(r.use)}, "max_new_tokens");
      spec.max_context.source.blocking_expression = text(r.use) + " (prompt length unknown)";
    }
  }
  std::sort(out.begin(), out.end(), [](const ScriptJob& a, const ScriptJob& b) { return a.anchor.begin < b.anchor.begin; });
  return out;
}

}  // namespace

std::vector<ScriptJob> read_jobs(const ModuleModel& model) {
  Reader reader(model);
  return reader.jobs();
}

std::vector<ScriptJob> read_jobs(std::string_view text) {
  SyntaxTree tree = SyntaxTree::parse(parse_view(text));
  return read_jobs(ModuleModel(tree.root(), text));
}

}  // namespace preflight::estimator
