// Shared helpers for the analysis unit tests: a parsed snippet that owns its text, and
// lookup of an expression node by the text it spans.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <ostream>
#include <string>
#include <string_view>

#include "analysis/module_model.h"
#include "analysis/provenance.h"
#include "analysis/syntax.h"

namespace preflight::analysis::testing {

// The smallest named node that starts at `offset` and whose text is exactly `expected`; a
// null node when there is none.
inline TSNode node_spanning(TSNode root, std::string_view src, uint32_t offset,
                            std::string_view expected) {
  auto end = static_cast<uint32_t>(offset + expected.size());
  TSNode n = ts_node_descendant_for_byte_range(root, offset, end);
  while (!ts_node_is_null(n)) {
    if (ts_node_is_named(n) && ts_node_start_byte(n) == offset && text_of(n, src) == expected)
      return n;
    if (ts_node_start_byte(n) < offset || ts_node_end_byte(n) > end) break;
    n = ts_node_parent(n);
  }
  return TSNode{};
}

// A snippet parsed once. Not movable: the model keeps views into `src` and the tree.
class Parsed {
 public:
  explicit Parsed(std::string text)
      : src(std::move(text)), tree(SyntaxTree::parse(src)), model(tree.root(), src) {}
  Parsed(const Parsed&) = delete;
  Parsed& operator=(const Parsed&) = delete;

  TSNode root() const { return tree.root(); }

  // The expression `expr` at its first occurrence after the end of the first occurrence of
  // `after` (from the start of the text when `after` is empty). Fails the test when absent.
  TSNode find(std::string_view expr, std::string_view after = {}) const {
    size_t base = 0;
    if (!after.empty()) {
      base = src.find(after);
      if (base == std::string::npos) {
        ADD_FAILURE() << "marker not in snippet: " << after;
        return TSNode{};
      }
      base += after.size();
    }
    size_t at = src.find(expr, base);
    if (at == std::string::npos) {
      ADD_FAILURE() << "expression not in snippet: " << expr;
      return TSNode{};
    }
    TSNode n = node_spanning(root(), src, static_cast<uint32_t>(at), expr);
    if (ts_node_is_null(n)) ADD_FAILURE() << "no node spans exactly: " << expr;
    return n;
  }

  // Scope index of the function named `name` (the first one so named).
  int function_scope(std::string_view name) const {
    const std::vector<int>* fs = model.functions_named(name);
    if (!fs || fs->empty()) {
      ADD_FAILURE() << "no function named " << name;
      return 0;
    }
    return model.functions()[fs->front()].scope;
  }
  int function_index(std::string_view name) const {
    const std::vector<int>* fs = model.functions_named(name);
    if (!fs || fs->empty()) {
      ADD_FAILURE() << "no function named " << name;
      return 0;
    }
    return fs->front();
  }

  const std::string src;
  const SyntaxTree tree;
  const ModuleModel model;
};

// A parsed snippet with its provenance computed.
class Traced : public Parsed {
 public:
  explicit Traced(std::string text) : Parsed(std::move(text)), prov(model) {}

  // Value of the expression found as by `find`; fails the test when it has none.
  Value value(std::string_view expr, std::string_view after = {}) const {
    TSNode n = find(expr, after);
    if (ts_node_is_null(n)) return Value::unknown();
    const Value* v = prov.value_of(n);
    if (!v) {
      ADD_FAILURE() << "expression was never evaluated: " << expr;
      return Value::unknown();
    }
    return *v;
  }

  const Provenance prov;
};

}  // namespace preflight::analysis::testing

namespace preflight::analysis {

// Readable gtest output for graph states.
inline void PrintTo(Graph g, std::ostream* os) {
  switch (g) {
    case Graph::Free: *os << "Graph::Free"; return;
    case Graph::Unknown: *os << "Graph::Unknown"; return;
    case Graph::Yes: *os << "Graph::Yes"; return;
  }
  *os << "Graph(?)";
}

}  // namespace preflight::analysis
