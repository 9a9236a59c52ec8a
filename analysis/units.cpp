#include "analysis/units.h"

#include <algorithm>

namespace preflight::analysis {

namespace {

bool is_definition(TSNode n) {
  const Kinds& k = kinds();
  TSSymbol s = sym(n);
  return s == k.function_definition || s == k.class_definition || s == k.decorated_definition ||
         s == k.comment;
}

void sort_unique(std::vector<std::string>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

// One cursor walk over a top-level child: node count, depth, and what makes a unit feed
// file-wide facts or be visible to others (defined functions and classes, `self` attributes,
// imports, `global` names).
struct FactWalk {
  std::string_view src;
  UnitFacts& out;
  const Kinds& k = kinds();

  void note_node(TSNode n) {
    TSSymbol s = sym(n);
    if (s == k.function_definition || s == k.class_definition) {
      TSNode name = field(n, k.f_name);
      if (!is_null(name)) out.defines.emplace_back(text_of(name, src));
    } else if (s == k.attribute) {
      TSNode object = field(n, k.f_object);
      TSNode attr = field(n, k.f_attribute);
      if (!is_null(attr)) {
        out.attribute_uses.emplace_back(text_of(attr, src));
        if (is(object, k.identifier) && text_of(object, src) == "self") out.attributes.emplace_back(text_of(attr, src));
      }
    } else if (s == k.import_statement || s == k.import_from_statement) {
      out.pinned = true;
      note_all_identifiers(n);
    } else if (s == k.global_statement || s == k.nonlocal_statement) {
      note_all_identifiers(n);
    }
  }

  void note_all_identifiers(TSNode n) {
    if (is(n, k.identifier)) out.defines.emplace_back(text_of(n, src));
    uint32_t count = ts_node_child_count(n);
    for (uint32_t i = 0; i < count; ++i) note_all_identifiers(ts_node_child(n, i));
  }

  void run(TSNode top) {
    for_each_node(top, [&](TSNode n, uint32_t depth) {
      out.depth = std::max(out.depth, depth + 1);  // `top` is a child of the module, level 0
      ++out.nodes;
      note_node(n);
    });
  }
};

// The names a unit reads from outside itself, resolved the way the module model resolves
// them (module_model.cpp `lookup`): a bare name that an assignment or `:=` binds in an
// enclosing function, lambda or comprehension scope (or in the class body it appears in) is
// that scope's, so it is not read from another unit. Everything else is a use: names bound
// only as parameters, loop or `with` targets (the model's lookups walk past those), the object
// of an attribute (`model.fc` is looked up as a dotted name), attribute names (`self.step()`
// runs any method named `step`). Keyword names (`f(model=x)`) name a parameter, not a value.
// Defaults, annotations, decorators and base classes are resolved outside the scope they
// introduce (conservative: a name then counts as a use).
struct UseWalk {
  UseWalk(std::string_view source, std::vector<std::string>& into) : src(source), uses(into) {}
  std::string_view src;
  std::vector<std::string>& uses;
  const Kinds& k = kinds();
  struct Scope {
    bool is_class = false;
    std::vector<std::string_view> bound;  // sorted
  };
  std::vector<Scope> chain;

  bool resolved(std::string_view name) const {
    for (size_t i = chain.size(); i-- > 0;) {
      if (chain[i].is_class && i + 1 != chain.size()) continue;  // class bodies do not nest
      if (std::binary_search(chain[i].bound.begin(), chain[i].bound.end(), name)) return true;
    }
    return false;
  }

  bool opens_scope(TSSymbol s) const {
    return s == k.function_definition || s == k.class_definition || s == k.lambda ||
           s == k.list_comprehension || s == k.set_comprehension || s == k.dictionary_comprehension ||
           s == k.generator_expression;
  }

  // Bare names bound in the scope `n` opens, by assignment (each element of a tuple target)
  // or `:=`, not looking into nested scopes.
  void collect_bound(TSNode n, std::vector<std::string_view>& bound, bool top) {
    TSSymbol s = sym(n);
    if (!top && opens_scope(s)) return;
    if (s == k.assignment) {
      for (TSNode a = n; is(a, k.assignment); a = field(a, k.f_right)) bind_target(field(a, k.f_left), bound);
    } else if (s == k.named_expression) {
      bind_target(field(n, k.f_name), bound);
    }
    for_each_named_child(n, [&](TSNode c) { collect_bound(c, bound, false); });
  }

  void bind_target(TSNode target, std::vector<std::string_view>& bound) {
    TSSymbol s = sym(target);
    if (s == k.identifier) {
      bound.push_back(text_of(target, src));
    } else if (s == k.pattern_list || s == k.tuple_pattern || s == k.list_pattern || s == k.tuple || s == k.list) {
      for_each_named_child(target, [&](TSNode c) {
        if (is(c, k.identifier)) bound.push_back(text_of(c, src));
      });
    }
  }

  void use(TSNode identifier) {
    std::string_view name = text_of(identifier, src);
    if (!resolved(name)) uses.emplace_back(name);
  }

  // Uses in `n`, with the current chain.
  void visit(TSNode n) {
    TSSymbol s = sym(n);
    if (s == k.identifier) return use(n);
    if (s == k.attribute) {
      TSNode object = field(n, k.f_object);
      TSNode attr = field(n, k.f_attribute);
      bool of_self = is(object, k.identifier) && text_of(object, src) == "self";
      if (is(object, k.identifier)) uses.emplace_back(text_of(object, src));
      else if (!is_null(object)) visit(object);
      if (!is_null(attr) && of_self) uses.emplace_back(text_of(attr, src));  // `self.step()`
      return;
    }
    if (s == k.keyword_argument) {
      if (TSNode value = field(n, k.f_value); !is_null(value)) visit(value);
      return;
    }
    if (s == k.function_definition || s == k.class_definition) return visit_definition(n, s == k.class_definition);
    if (opens_scope(s)) return visit_in_scope(n, n, false);
    for_each_named_child(n, [&](TSNode c) { visit(c); });
  }

  // A def or class: its name, parameters (defaults, annotations) and bases are read outside;
  // its body in its own scope.
  void visit_definition(TSNode n, bool is_class) {
    TSNode body = field(n, k.f_body);
    for_each_named_child(n, [&](TSNode c) {
      if (ts_node_eq(c, body)) return;
      if (is(c, k.identifier) && ts_node_eq(c, field(n, k.f_name))) return;
      visit(c);
    });
    if (!is_null(body)) visit_in_scope(n, body, is_class);
  }

  void visit_in_scope(TSNode scope_node, TSNode body, bool is_class) {
    Scope scope{is_class, {}};
    collect_bound(scope_node, scope.bound, true);
    std::sort(scope.bound.begin(), scope.bound.end());
    chain.push_back(std::move(scope));
    if (ts_node_eq(scope_node, body)) for_each_named_child(body, [&](TSNode c) { visit(c); });
    else visit(body);
    chain.pop_back();
  }
};

}  // namespace

// Calls `f` with each child of the module node (named or not), in order, through one cursor.
template <typename F>
void for_each_top_level(TSNode root, F&& f) {
  ScopedCursor cursor(root);
  TSTreeCursor* c = cursor.get();
  if (ts_tree_cursor_goto_first_child(c)) {
    do f(ts_tree_cursor_current_node(c));
    while (ts_tree_cursor_goto_next_sibling(c));
  }
}

std::vector<UnitSpan> unit_spans(TSNode root) {
  std::vector<UnitSpan> units;
  uint32_t last_row = 0;
  for_each_top_level(root, [&](TSNode c) {
    ByteRange r = range_of(c);
    TSPoint start = ts_node_start_point(c);
    if (!units.empty() && start.row <= last_row) units.back().range.end = std::max(units.back().range.end, r.end);
    else units.push_back({r, start});
    last_row = std::max(start.row, ts_node_end_point(c).row);
  });
  return units;
}

std::vector<UnitFacts> unit_facts(TSNode root, const std::vector<UnitSpan>& units,
                                  const std::vector<bool>& wanted, std::string_view src) {
  std::vector<UnitFacts> out(units.size());
  size_t u = 0;
  for_each_top_level(root, [&](TSNode c) {
    while (u < units.size() && ts_node_start_byte(c) >= units[u].range.end && ts_node_end_byte(c) > units[u].range.end) ++u;
    if (u == units.size() || !wanted[u]) return;
    out[u].range = units[u].range;
    out[u].start = units[u].start;
    if (!is_definition(c)) out[u].module_code = true;
    FactWalk{src, out[u]}.run(c);
    UseWalk{src, out[u].uses}.visit(c);
  });
  for (size_t i = 0; i < out.size(); ++i) {
    if (!wanted[i]) continue;
    UnitFacts& f = out[i];
    sort_unique(f.uses);
    sort_unique(f.attributes);
    sort_unique(f.attribute_uses);
    // Module code may bind, rebind, mutate or consume any name it mentions.
    if (f.module_code) f.defines.insert(f.defines.end(), f.uses.begin(), f.uses.end());
    sort_unique(f.defines);
  }
  return out;
}

bool reads(const UnitFacts& reader, const UnitFacts& writer) {
  return shares_name(reader.uses, writer.defines) || shares_name(reader.attribute_uses, writer.attributes);
}

bool shares_name(const std::vector<std::string>& names, const std::vector<std::string>& sorted) {
  if (names.empty() || sorted.empty()) return false;
  auto a = names.begin();
  auto b = sorted.begin();
  while (a != names.end() && b != sorted.end()) {
    if (*a == *b) return true;
    if (*a < *b) ++a;
    else ++b;
  }
  return false;
}

}  // namespace preflight::analysis
