#include "analysis/units.h"

#include <algorithm>
#include <optional>

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

// One cursor walk over a top-level child (or a member of a split class): node count, depth,
// and what makes a unit feed file-wide facts or be visible to others (defined functions and
// classes, `self` attributes, imports, `global` names). `level`: how far below a child of the
// module the walked node is (0 for a top-level child, 2 or 3 for a class member).
struct FactWalk {
  std::string_view src;
  UnitFacts& out;
  const Kinds& k = kinds();

  void note_node(TSNode n) {
    TSSymbol s = sym(n);
    if (s == k.function_definition || s == k.class_definition) {
      TSNode name = field(n, k.f_name);
      if (!is_null(name)) out.defines.emplace_back(text_of(name, src));
      // What a function returns flows into `self.<name>` (reachability.h): it reads the units
      // that name that attribute.
      if (!is_null(name) && s == k.function_definition) out.attribute_uses.emplace_back(text_of(name, src));
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

  void run(TSNode top, uint32_t level = 0) {
    for_each_node(top, [&](TSNode n, uint32_t depth) {
      out.depth = std::max(out.depth, depth + level + 1);  // the module node is level 0
      ++out.nodes;
      note_node(n);
    });
  }

  // A split class's header: `n` (the decorated definition or the class) and its children but
  // the body, whose node is counted here and whose children are the members' units.
  void run_header(TSNode n, uint32_t level, TSNode cls, TSNode body) {
    out.depth = std::max(out.depth, level + 1);
    ++out.nodes;
    note_node(n);
    uint32_t count = ts_node_child_count(n);
    for (uint32_t i = 0; i < count; ++i) {
      TSNode c = ts_node_child(n, i);
      if (ts_node_eq(c, body)) {
        out.depth = std::max(out.depth, level + 2);
        ++out.nodes;
      } else if (ts_node_eq(c, cls)) {
        run_header(c, level + 1, cls, body);
      } else {
        run(c, level + 1);
      }
    }
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

  // A split class's header: what visit_definition reads outside the body, and the decorators.
  void visit_header(TSNode outer, TSNode cls) {
    TSNode body = field(cls, k.f_body);
    TSNode name = field(cls, k.f_name);
    if (!ts_node_eq(outer, cls))  // the decorators
      for_each_named_child(outer, [&](TSNode c) {
        if (!ts_node_eq(c, cls)) visit(c);
      });
    for_each_named_child(cls, [&](TSNode c) {
      if (!ts_node_eq(c, body) && !ts_node_eq(c, name)) visit(c);
    });
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

namespace {

// Calls `f` with each child of `parent` (named or not), in order, through one cursor.
template <typename F>
void for_each_child(TSNode parent, F&& f) {
  ScopedCursor cursor(parent);
  TSTreeCursor* c = cursor.get();
  if (ts_tree_cursor_goto_first_child(c)) {
    do f(ts_tree_cursor_current_node(c));
    while (ts_tree_cursor_goto_next_sibling(c));
  }
}

// Consecutive children of a node whose line spans touch.
struct LineGroup {
  ByteRange range;
  TSPoint start;
  uint32_t last_row = 0;
  std::vector<TSNode> nodes;
};

std::vector<LineGroup> line_groups(TSNode parent) {
  std::vector<LineGroup> groups;
  for_each_child(parent, [&](TSNode c) {
    ByteRange r = range_of(c);
    TSPoint start = ts_node_start_point(c);
    uint32_t end_row = std::max(start.row, ts_node_end_point(c).row);
    if (!groups.empty() && start.row <= groups.back().last_row) {
      LineGroup& g = groups.back();
      g.range.end = std::max(g.range.end, r.end);
      g.last_row = std::max(g.last_row, end_row);
      g.nodes.push_back(c);
    } else {
      groups.push_back({r, start, end_row, {c}});
    }
  });
  return groups;
}

// A top-level class split into its header and the line groups of its body (units.h), when
// its body starts on a line after the header and nothing of the class follows the body.
struct ClassSplit {
  TSNode outer;  // the decorated definition, or the class
  TSNode cls;
  TSNode body;
  ByteRange header;
  std::vector<LineGroup> members;
};

std::optional<ClassSplit> split_class(TSNode outer) {
  const Kinds& k = kinds();
  TSNode cls = outer;
  if (is(outer, k.decorated_definition)) cls = field(outer, k.f_definition);
  if (!is(cls, k.class_definition)) return std::nullopt;
  TSNode body = field(cls, k.f_body);
  if (!is(body, k.block) || ts_node_end_byte(body) != ts_node_end_byte(outer)) return std::nullopt;
  uint32_t header_end = ts_node_start_byte(outer), header_row = ts_node_start_point(outer).row;
  bool after_body = false;
  for_each_child(cls, [&](TSNode c) {
    if (ts_node_eq(c, body)) return;
    if (ts_node_start_byte(c) >= ts_node_start_byte(body)) after_body = true;
    header_end = std::max(header_end, ts_node_end_byte(c));
    header_row = std::max(header_row, ts_node_end_point(c).row);
  });
  if (after_body) return std::nullopt;
  std::vector<LineGroup> members = line_groups(body);
  if (members.empty() || members.front().start.row <= header_row) return std::nullopt;
  return ClassSplit{outer, cls, body, {ts_node_start_byte(outer), header_end}, std::move(members)};
}

UnitRole member_role(const LineGroup& g) {
  const Kinds& k = kinds();
  bool def = false;
  for (TSNode n : g.nodes) {
    TSSymbol s = sym(n);
    if (s == k.function_definition || s == k.decorated_definition || s == k.class_definition) def = true;
    else if (s != k.comment) return UnitRole::ClassCode;
  }
  return def ? UnitRole::Method : UnitRole::ClassCode;
}

std::optional<ClassSplit> split_group(const LineGroup& g) {
  return g.nodes.size() == 1 ? split_class(g.nodes.front()) : std::nullopt;
}

}  // namespace

std::vector<UnitSpan> unit_spans(TSNode root) {
  std::vector<UnitSpan> units;
  for (const LineGroup& g : line_groups(root)) {
    if (std::optional<ClassSplit> split = split_group(g)) {
      units.push_back({split->header, g.start, UnitRole::ClassHeader});
      for (const LineGroup& m : split->members) units.push_back({m.range, m.start, member_role(m)});
    } else {
      units.push_back({g.range, g.start, UnitRole::TopLevel});
    }
  }
  return units;
}

std::vector<UnitFacts> unit_facts(TSNode root, const std::vector<UnitSpan>& units,
                                  const std::vector<bool>& wanted, std::string_view src) {
  std::vector<UnitFacts> out(units.size());
  // The facts of unit `i` to fill, or null when it is not wanted (`units` lists what
  // unit_spans(root) lists, so the groups below meet them in order).
  auto facts_of = [&](size_t i) -> UnitFacts* {
    if (i >= units.size() || !wanted[i]) return nullptr;
    out[i].range = units[i].range;
    out[i].start = units[i].start;
    out[i].role = units[i].role;
    return &out[i];
  };
  size_t u = 0;
  for (const LineGroup& g : line_groups(root)) {
    std::optional<ClassSplit> split = split_group(g);
    if (!split) {
      if (UnitFacts* f = facts_of(u))
        for (TSNode c : g.nodes) {
          if (!is_definition(c)) f->module_code = true;
          FactWalk{src, *f}.run(c);
          UseWalk{src, f->uses}.visit(c);
        }
      ++u;
      continue;
    }
    std::string_view name = text_of(field(split->cls, kinds().f_name), src);
    if (UnitFacts* f = facts_of(u)) {
      FactWalk{src, *f}.run_header(split->outer, 0, split->cls, split->body);
      UseWalk{src, f->uses}.visit_header(split->outer, split->cls);
    }
    ++u;
    uint32_t level = ts_node_eq(split->outer, split->cls) ? 2 : 3;  // outer, [class,] body, member
    for (const LineGroup& m : split->members) {
      if (UnitFacts* f = facts_of(u)) {
        for (TSNode c : m.nodes) {
          // A class body's own statements run once, at import, as the module's do: rules read
          // them as module code (`model.eval()` there is in force for module-level forwards),
          // so the slice must too.
          if (units[u].role == UnitRole::ClassCode && !is_definition(c)) f->module_code = true;
          FactWalk{src, *f}.run(c, level);
          UseWalk{src, f->uses}.visit(c);
        }
        f->defines.emplace_back(name);  // a reader of the class reads all of it
      }
      ++u;
    }
  }
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

std::vector<int> class_headers(const std::vector<UnitFacts>& units) {
  std::vector<int> out(units.size(), -1);
  int header = -1;
  for (size_t i = 0; i < units.size(); ++i) {
    if (units[i].role == UnitRole::ClassHeader) header = static_cast<int>(i);
    else if (!is_member(units[i].role)) header = -1;
    out[i] = header;
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
