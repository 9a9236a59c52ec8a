#include "estimator/module_params.h"

#include <array>
#include <map>

#include "analysis/syntax.h"

namespace preflight::estimator {

using namespace preflight::analysis;

namespace {

constexpr int kMaxDepth = 8;  // nesting of local modules (and constant chains) followed

using Env = std::map<std::string, int64_t>;  // constructor parameters with known integer values

// torch.nn layers without parameters.
constexpr std::array<std::string_view, 34> kParameterFree = {
    "ReLU", "ReLU6", "GELU", "SiLU", "Mish", "Tanh", "Sigmoid", "Softplus", "LeakyReLU", "ELU", "Hardswish",
    "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "Identity", "Flatten", "Unflatten", "MaxPool1d", "MaxPool2d",
    "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d",
    "AdaptiveMaxPool2d", "Softmax", "LogSoftmax", "Upsample", "PixelShuffle", "ZeroPad2d", "CrossEntropyLoss"};

// Python's integers do not overflow; a parameter count past int64 is no count we can use
// (`nn.Linear(4_000_000_000, 4_000_000_000)`), so the arithmetic is checked and an overflow
// is nullopt: the count is unknown, never wrapped into some other, plausible number.
std::optional<int64_t> times(std::optional<int64_t> a, std::optional<int64_t> b) {
  int64_t r = 0;
  if (!a || !b || __builtin_mul_overflow(*a, *b, &r)) return std::nullopt;
  return r;
}
std::optional<int64_t> plus(std::optional<int64_t> a, std::optional<int64_t> b) {
  int64_t r = 0;
  if (!a || !b || __builtin_add_overflow(*a, *b, &r)) return std::nullopt;
  return r;
}

class Counter {
 public:
  explicit Counter(const ModuleModel& m) : m_(m), src_(m.source()), k_(kinds()) {}

  std::optional<int64_t> count_class(int ci, TSNode call, const Env& caller_env, int caller_scope, int depth) {
    if (depth > kMaxDepth) return unknown(call);
    const ClassInfo& c = m_.classes()[ci];
    Env env = constructor_env(ci, call, caller_env, caller_scope);
    std::optional<int64_t> total = 0;
    for (const auto& [attr, sites] : c.self_bindings) {
      std::optional<int64_t> first;
      for (const BindingSite& site : sites) {
        auto n = attribute_value(site.value, env, depth);
        if (!n) return std::nullopt;
        if (first && *first != *n) return unknown(site.value);  // rebound to a different module
        first = n;
      }
      total = plus(total, first.value_or(0));
    }
    auto appended = appended_layers(ci, env, depth);
    if (!appended) return std::nullopt;
    total = plus(total, *appended);
    for (const std::string& base : c.bases) {
      int b = m_.class_named(leaf(base));
      if (b < 0 || b == ci || !m_.classes()[b].is_module) continue;
      auto n = count_class(b, TSNode{}, {}, 0, depth + 1);
      if (!n) return std::nullopt;
      total = plus(total, *n);
    }
    return total ? total : unknown(call);
  }

  const std::string& blocking() const { return blocking_; }

 private:
  static std::string_view leaf(std::string_view dotted) {
    size_t dot = dotted.rfind('.');
    return dot == std::string_view::npos ? dotted : dotted.substr(dot + 1);
  }

  std::optional<int64_t> unknown(TSNode e) {
    if (blocking_.empty() && !is_null(e)) blocking_ = std::string(text_of(e, src_));
    return std::nullopt;
  }

  int init_of(int ci) const {
    if (const auto* fs = m_.functions_named("__init__"))
      for (int f : *fs)
        if (m_.functions()[f].class_index == ci) return f;
    return -1;
  }

  // The constructor's parameters: the call's arguments, else their defaults.
  Env constructor_env(int ci, TSNode call, const Env& caller_env, int caller_scope) {
    Env env;
    int init = init_of(ci);
    if (init < 0) return env;
    const FunctionInfo& f = m_.functions()[init];
    unsigned position = 0;
    for (const Parameter& p : f.params) {
      if (p.name == "self") continue;
      TSNode arg{};
      if (!is_null(call)) {
        arg = keyword_arg(call, p.name, src_);
        if (is_null(arg)) arg = positional_arg(call, position);
      }
      ++position;
      std::string saved = blocking_;
      std::optional<int64_t> v = is_null(arg) ? std::nullopt : integer(arg, caller_env, caller_scope, 0);
      if (!v) v = integer(default_of(p), {}, f.scope, 0);
      blocking_ = saved;  // a parameter that never feeds a layer shape is no reason
      if (v) env[p.name] = *v;
    }
    return env;
  }

  TSNode default_of(const Parameter& p) const {
    TSNode parent = ts_node_parent(p.node);
    if (is(parent, k_.default_parameter) || is(parent, k_.typed_default_parameter)) return field(parent, k_.f_value);
    return TSNode{};
  }

  std::optional<int64_t> integer(TSNode e, const Env& env, int scope, int depth) {
    if (is_null(e) || depth > kMaxDepth) return unknown(e);
    e = unparenthesize(e);
    TSSymbol s = sym(e);
    if (s == k_.integer) {
      std::optional<int64_t> v = 0;
      for (char c : text_of(e, src_)) {
        if (c == '_') continue;
        if (c < '0' || c > '9') return unknown(e);
        v = plus(times(v, 10), c - '0');
      }
      return v ? v : unknown(e);
    }
    if (s == k_.identifier) {
      std::string name(text_of(e, src_));
      if (auto it = env.find(name); it != env.end()) return it->second;
      int found = -1;
      const auto* sites = m_.bindings_of(name, scope, &found);
      if (!sites || sites->size() != 1 || (*sites)[0].position >= 0) return unknown(e);
      return integer((*sites)[0].value, {}, found, depth + 1);
    }
    if (s == k_.binary_operator) {
      auto a = integer(field(e, k_.f_left), env, scope, depth + 1);
      auto b = integer(field(e, k_.f_right), env, scope, depth + 1);
      if (!a || !b) return std::nullopt;
      std::string_view op = text_of(field(e, k_.f_operator), src_);
      if (op == "+") return plus(a, b) ? plus(a, b) : unknown(e);
      if (op == "-") return plus(a, times(b, -1)) ? plus(a, times(b, -1)) : unknown(e);
      if (op == "*") return times(a, b) ? times(a, b) : unknown(e);
      if (op == "//" && *b != 0) return *a / *b;
    }
    return unknown(e);
  }

  bool flag(TSNode call, std::string_view name, bool fallback) const {
    TSNode v = keyword_arg(call, name, src_);
    if (is(v, k_.true_)) return true;
    if (is(v, k_.false_)) return false;
    return fallback;
  }

  // kernel_size as an int or a tuple of ints; `dims` copies of an int.
  std::optional<int64_t> kernel_volume(TSNode k, int dims, const Env& env, int scope) {
    k = unparenthesize(k);
    if (is(k, k_.tuple) || is(k, k_.list)) {
      std::optional<int64_t> v = 1;
      for (uint32_t i = 0; i < ts_node_named_child_count(k); ++i) {
        auto d = integer(ts_node_named_child(k, i), env, scope, 0);
        if (!d) return std::nullopt;
        v = times(v, d);
      }
      return v ? v : unknown(k);
    }
    auto d = integer(k, env, scope, 0);
    if (!d) return std::nullopt;
    std::optional<int64_t> v = 1;
    for (int i = 0; i < dims; ++i) v = times(v, d);
    return v ? v : unknown(k);
  }

  TSNode arg(TSNode call, unsigned position, std::string_view name) const {
    TSNode v = keyword_arg(call, name, src_);
    return is_null(v) ? positional_arg(call, position) : v;
  }

  // One torch.nn layer's parameters; a count past int64 is unknown, with the call.
  std::optional<int64_t> torch_layer(std::string_view layer, TSNode call, const Env& env, int scope, int depth) {
    const std::string before = blocking_;
    std::optional<int64_t> n = layer_params(layer, call, env, scope, depth);
    if (!n && blocking_ == before) return unknown(call);  // no reason recorded: the count overflowed
    return n;
  }

  std::optional<int64_t> layer_params(std::string_view layer, TSNode call, const Env& env, int scope, int depth) {
    for (std::string_view free : kParameterFree)
      if (layer == free) return 0;
    auto at = [&](unsigned i, std::string_view n) { return integer(arg(call, i, n), env, scope, 0); };
    if (layer == "Linear") {
      auto in = at(0, "in_features"), out = at(1, "out_features");
      if (!in || !out) return std::nullopt;
      return plus(times(in, out), flag(call, "bias", true) ? out : 0);
    }
    if (layer == "Embedding") {
      auto n = at(0, "num_embeddings"), d = at(1, "embedding_dim");
      if (!n || !d) return std::nullopt;
      return times(n, d);
    }
    if (layer == "Conv1d" || layer == "Conv2d" || layer == "Conv3d" || layer == "ConvTranspose2d") {
      int dims = layer == "Conv1d" ? 1 : layer == "Conv3d" ? 3 : 2;
      auto in = at(0, "in_channels"), out = at(1, "out_channels");
      auto k = kernel_volume(arg(call, 2, "kernel_size"), dims, env, scope);
      TSNode g = keyword_arg(call, "groups", src_);
      std::optional<int64_t> groups = is_null(g) ? std::optional<int64_t>(1) : integer(g, env, scope, 0);
      if (!in || !out || !k || !groups || *groups <= 0) return std::nullopt;
      return plus(times(times(*in / *groups, out), k), flag(call, "bias", true) ? out : 0);
    }
    if (layer == "LayerNorm" || layer == "RMSNorm") {
      auto d = at(0, "normalized_shape");
      if (!d) return std::nullopt;
      if (!flag(call, "elementwise_affine", true)) return 0;
      return layer == "RMSNorm" || !flag(call, "bias", true) ? d : times(2, d);
    }
    if (layer == "BatchNorm1d" || layer == "BatchNorm2d" || layer == "BatchNorm3d" || layer == "InstanceNorm2d") {
      auto c = at(0, "num_features");
      if (!c) return std::nullopt;
      return flag(call, "affine", layer.substr(0, 5) == "Batch") ? times(2, c) : 0;
    }
    if (layer == "GroupNorm") {
      auto c = at(1, "num_channels");
      if (!c) return std::nullopt;
      return flag(call, "affine", true) ? times(2, c) : 0;
    }
    if (layer == "MultiheadAttention") {
      auto d = at(0, "embed_dim");
      if (!d) return std::nullopt;
      return plus(times(times(4, d), d), flag(call, "bias", true) ? times(4, d) : 0);
    }
    if (layer == "TransformerEncoderLayer" || layer == "TransformerDecoderLayer") {
      auto d = at(0, "d_model");
      TSNode ff_node = arg(call, 2, "dim_feedforward");
      auto ff = is_null(ff_node) ? std::optional<int64_t>(2048) : integer(ff_node, env, scope, 0);
      if (!d || !ff) return std::nullopt;
      std::optional<int64_t> attention = plus(times(times(4, d), d), times(4, d));
      std::optional<int64_t> mlp = plus(plus(times(times(2, d), ff), ff), d);
      bool decoder = layer == "TransformerDecoderLayer";
      return plus(plus(times(decoder ? 2 : 1, attention), mlp), times((decoder ? 3 : 2) * 2, d));
    }
    if (layer == "TransformerEncoder" || layer == "TransformerDecoder") {
      auto one = module_value(arg(call, 0, layer == "TransformerEncoder" ? "encoder_layer" : "decoder_layer"), env, scope, depth + 1);
      auto n = at(1, "num_layers");
      if (!one || !n) return std::nullopt;
      return times(one, n);
    }
    if (layer == "Sequential" || layer == "ModuleList") {
      std::optional<int64_t> total = 0;
      TSNode args = field(call, k_.f_arguments);
      for (uint32_t i = 0; i < ts_node_named_child_count(args); ++i) {
        TSNode a = ts_node_named_child(args, i);
        if (is(a, k_.list_splat)) a = ts_node_named_child(a, 0);
        if (is(a, k_.keyword_argument)) continue;
        auto n = module_value(a, env, scope, depth + 1);
        if (!n) return std::nullopt;
        total = plus(total, n);
      }
      return total;
    }
    return unknown(call);
  }

  // A value that is a module (or a list of modules): its parameters.
  std::optional<int64_t> module_value(TSNode e, const Env& env, int scope, int depth) {
    if (is_null(e) || depth > kMaxDepth) return unknown(e);
    e = unparenthesize(e);
    if (is(e, k_.list) || is(e, k_.tuple)) {
      std::optional<int64_t> total = 0;
      for (uint32_t i = 0; i < ts_node_named_child_count(e); ++i) {
        auto n = module_value(ts_node_named_child(e, i), env, scope, depth + 1);
        if (!n) return std::nullopt;
        total = plus(total, n);
      }
      return total ? total : unknown(e);
    }
    if (is(e, k_.list_comprehension) || is(e, k_.generator_expression)) return stacked(e, env, scope, depth);
    if (is(e, k_.identifier)) {
      int found = -1;
      const auto* sites = m_.bindings_of(text_of(e, src_), scope, &found);
      if (!sites || sites->size() != 1 || (*sites)[0].position >= 0) return unknown(e);
      return module_value((*sites)[0].value, env, found, depth + 1);
    }
    if (!is(e, k_.call)) return unknown(e);
    TSNode callee = field(e, k_.f_function);
    auto q = m_.qualified_name(callee);
    if (!q) return unknown(e);
    if (q->rfind("torch.nn.", 0) == 0 && q->find('.', 9) == std::string::npos) return torch_layer(leaf(*q), e, env, scope, depth);
    int ci = m_.class_named(*q);
    if (ci >= 0 && m_.classes()[ci].is_module) return count_class(ci, e, env, scope, depth + 1);
    return unknown(e);
  }

  // `[Block(d) for _ in range(N)]`: N times one block.
  std::optional<int64_t> stacked(TSNode comprehension, const Env& env, int scope, int depth) {
    TSNode body = ts_node_named_child(comprehension, 0);
    std::optional<int64_t> times;
    for (uint32_t i = 1; i < ts_node_named_child_count(comprehension); ++i) {
      TSNode clause = ts_node_named_child(comprehension, i);
      if (!is(clause, k_.for_in_clause)) return unknown(comprehension);  // an `if` filters
      if (times) return unknown(comprehension);                          // nested loops
      times = range_count(field(clause, k_.f_right), env, scope);
      if (!times) return std::nullopt;
    }
    int inner = m_.scope_opened_by(comprehension);
    auto one = module_value(body, env, inner >= 0 ? inner : scope, depth + 1);
    if (!one || !times) return std::nullopt;
    std::optional<int64_t> n = estimator::times(one, times);
    return n ? n : unknown(comprehension);
  }

  std::optional<int64_t> range_count(TSNode iterable, const Env& env, int scope) {
    iterable = unparenthesize(iterable);
    if (!is(iterable, k_.call) || callee_leaf(iterable, src_) != "range") return unknown(iterable);
    TSNode second = positional_arg(iterable, 1);
    if (!is_null(second)) return unknown(iterable);
    return integer(positional_arg(iterable, 0), env, scope, 0);
  }

  // A `self.x = ...` value: a module's parameters, an `nn.Parameter`'s elements, or 0 for
  // plain attributes (numbers, flags, tensors that are buffers).
  std::optional<int64_t> attribute_value(TSNode value, const Env& env, int depth) {
    if (is_null(value)) return 0;
    TSNode v = unparenthesize(value);
    const int scope = m_.scope_enclosing(v);
    if (is(v, k_.call)) {
      auto q = m_.qualified_name(field(v, k_.f_function));
      if (q && (*q == "torch.nn.Parameter" || *q == "torch.nn.parameter.Parameter")) return tensor_elements(positional_arg(v, 0), env, scope);
      bool module_call = q && ((q->rfind("torch.nn.", 0) == 0 && q->find('.', 9) == std::string::npos) ||
                               (m_.class_named(*q) >= 0 && m_.classes()[m_.class_named(*q)].is_module));
      return module_call ? module_value(v, env, scope, depth) : 0;
    }
    if (is(v, k_.list_comprehension)) return module_value(v, env, scope, depth);
    if (is(v, k_.identifier)) {
      // A constructor argument that is not a number may be a module handed in from outside.
      std::string name(text_of(v, src_));
      if (env.count(name)) return 0;
      if (m_.parameter(name, scope)) return unknown(v);
    }
    return 0;
  }

  std::optional<int64_t> tensor_elements(TSNode factory, const Env& env, int scope) {
    factory = unparenthesize(factory);
    if (!is(factory, k_.call)) return unknown(factory);
    int64_t n = 1;
    TSNode args = field(factory, k_.f_arguments);
    for (uint32_t i = 0; i < ts_node_named_child_count(args); ++i) {
      TSNode a = ts_node_named_child(args, i);
      if (is(a, k_.keyword_argument)) continue;
      auto d = is(a, k_.tuple) ? kernel_volume(a, 1, env, scope) : integer(a, env, scope, 0);
      if (!d) return std::nullopt;
      n *= *d;
    }
    return n;
  }

  // `for _ in range(N): self.layers.append(Block())` in the constructor.
  std::optional<int64_t> appended_layers(int ci, const Env& env, int depth) {
    int init = init_of(ci);
    if (init < 0) return 0;
    int64_t total = 0;
    std::optional<int64_t> result = 0;
    visit_appends(field(m_.functions()[init].node, k_.f_body), 1, env, m_.functions()[init].scope, depth, total, result);
    if (!result) return std::nullopt;
    return total;
  }

  void visit_appends(TSNode n, int64_t times, const Env& env, int scope, int depth, int64_t& total, std::optional<int64_t>& ok) {
    if (!ok || is_null(n) || is(n, k_.function_definition) || is(n, k_.class_definition)) return;
    if (is(n, k_.for_statement)) {
      // A loop over anything but range(N) appends an unknown number of layers: a problem
      // only if it does append (times < 0 below), so its iterable is the reason only then.
      const std::string reason_before = blocking_;
      auto count = range_count(field(n, k_.f_right), env, scope);
      visit_appends(field(n, k_.f_body), count && times >= 0 ? times * *count : -1, env, scope, depth, total, ok);
      if (ok) blocking_ = reason_before;
      return;
    }
    if (is(n, k_.call) && callee_leaf(n, src_) == "append") {
      TSNode callee = field(n, k_.f_function);
      TSNode object = field(callee, k_.f_object);
      if (is(object, k_.attribute) && text_of(field(object, k_.f_object), src_) == "self") {
        if (times < 0) {
          ok = unknown(n);
          return;
        }
        auto one = module_value(positional_arg(n, 0), env, scope, depth + 1);
        if (!one) {
          ok = std::nullopt;
          return;
        }
        total += times * *one;
        return;
      }
    }
    for_each_named_child(n, [&](TSNode c) { visit_appends(c, times, env, scope, depth, total, ok); });
  }

  const ModuleModel& m_;
  std::string_view src_;
  const Kinds& k_;
  std::string blocking_;
};

}  // namespace

ModuleParams count_module_params(const ModuleModel& model, int class_index, TSNode instantiation) {
  Counter counter(model);
  std::optional<int64_t> n = counter.count_class(class_index, instantiation, {}, model.scope_enclosing(instantiation), 0);
  if (n && *n <= 0) return {std::nullopt, "no layer with parameters"};
  return {n, n ? "" : counter.blocking()};
}

}  // namespace preflight::estimator
