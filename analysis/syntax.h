// The syntax layer: an owned tree-sitter tree over Python source, incremental re-parsing,
// and small typed helpers over TSNode. Nothing here knows about PyTorch.
#pragma once

#include <tree_sitter/api.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/budget.h"
#include "analysis/findings.h"
#include "analysis/ts_children.h"

extern "C" const TSLanguage* tree_sitter_python();

namespace preflight::analysis {

// Grammar symbol and field ids, resolved once by name (string compares on every node would
// dominate analysis time).
struct Kinds {
  TSSymbol module, identifier, attribute, call, subscript, argument_list, keyword_argument,
      assignment, augmented_assignment, expression_statement, for_statement, while_statement,
      with_statement, with_clause, with_item, as_pattern, as_pattern_target, if_statement,
      elif_clause, else_clause, try_statement, except_clause, finally_clause, function_definition,
      decorated_definition, decorator, class_definition, return_statement, lambda, block,
      parameters, lambda_parameters, default_parameter, typed_parameter, typed_default_parameter,
      list_splat_pattern, dictionary_splat_pattern, import_statement, import_from_statement,
      aliased_import, dotted_name, pattern_list, tuple_pattern, list_pattern, tuple, list, set,
      dictionary, pair, list_comprehension, set_comprehension, dictionary_comprehension,
      generator_expression, for_in_clause, if_clause, parenthesized_expression, binary_operator,
      unary_operator, not_operator, comparison_operator, boolean_operator, conditional_expression,
      named_expression, await_, string, concatenated_string, integer, float_, true_, false_, none,
      comment, list_splat, dictionary_splat, expression_list, global_statement,
      nonlocal_statement, match_statement, case_clause, type, keyword_separator,
      positional_separator, yield, slice, ellipsis, wildcard_import;
  TSFieldId f_name, f_value, f_left, f_right, f_body, f_function, f_arguments, f_object,
      f_attribute, f_subscript, f_alternative, f_condition, f_consequence, f_parameters,
      f_superclasses, f_definition, f_alias, f_module_name, f_operator, f_type, f_return_type;
};

const Kinds& kinds();  // immutable table, initialised once (thread-safe)

// Owns a TSTree plus the parser that produced it. Move-only.
class SyntaxTree {
 public:
  // With `interrupt`, it is polled while parsing (tree-sitter's progress callback); when it
  // says stop, the parse is abandoned and AnalysisInterrupted is thrown.
  static SyntaxTree parse(std::string_view text, const Interrupt* interrupt = nullptr);
  // Parses only `ranges` of `text` (sorted, disjoint; ts_parser_set_included_ranges): the
  // nodes have the offsets and points of `text`, and the bytes between ranges are not read.
  // Polls `interrupt` as parse() does (a region or slice parse is inside the time budget too).
  static SyntaxTree parse_ranges(std::string_view text, const std::vector<TSRange>& ranges,
                                 const Interrupt* interrupt = nullptr);

  SyntaxTree(SyntaxTree&&) noexcept;
  SyntaxTree& operator=(SyntaxTree&&) noexcept;
  SyntaxTree(const SyntaxTree&) = delete;
  SyntaxTree& operator=(const SyntaxTree&) = delete;
  ~SyntaxTree();

  TSNode root() const { return ts_tree_root_node(tree_); }
  const TSTree* raw() const { return tree_; }

  // Record an edit (byte offsets and points of the *old* and *new* text) and reparse the new
  // text against the edited tree, so unchanged subtrees are reused. Returns the ranges of the
  // new tree whose syntactic structure differs from the old one (ts_tree_get_changed_ranges).
  std::vector<ByteRange> edit_and_reparse(const TSInputEdit& edit, std::string_view new_text);
  // The same in two steps: several edits may be recorded before one reparse.
  void record_edit(const TSInputEdit& edit) { ts_tree_edit(tree_, &edit); }
  // Interrupted (AnalysisInterrupted), the tree and its recorded edits are kept as they were.
  void reparse(std::string_view new_text, const Interrupt* interrupt = nullptr);

 private:
  SyntaxTree(TSParser* parser, TSTree* tree) : parser_(parser), tree_(tree) {}
  TSParser* parser_ = nullptr;
  TSTree* tree_ = nullptr;
};

// The text tree-sitter parses: each lone \r (a Python line break the grammar does not know)
// becomes \n. Every byte offset is kept, so the tree describes `text` itself.
std::string parse_view(std::string_view text);

// --- node helpers -------------------------------------------------------------------------

// ts_node_is_null is `id == 0` (node.c); comparing here saves a call on every test.
inline bool is_null(TSNode n) { return n.id == nullptr; }
inline TSSymbol sym(TSNode n) { return pf_node_symbol(n); }
inline bool is(TSNode n, TSSymbol s) { return n.id != nullptr && pf_node_symbol(n) == s; }
inline TSNode field(TSNode n, TSFieldId f) { return pf_node_child_by_field_id(n, f); }
inline ByteRange range_of(TSNode n) { return {ts_node_start_byte(n), ts_node_end_byte(n)}; }
inline const void* node_id(TSNode n) { return n.id; }
// The first token of `n` (itself when it has no children; null for null): an anchor that an
// edit inside a large node (a loop, a block) leaves where it was.
inline TSNode first_token(TSNode n) {
  while (n.id != nullptr && ts_node_child_count(n) > 0) n = ts_node_child(n, 0);
  return n;
}

std::string_view text_of(TSNode n, std::string_view src);

// A tree cursor deleted on every way out of its scope: the visitors below call back into
// analysis code that may throw (a cancelled analysis unwinds from deep inside a walk), and a
// cursor's stack is heap memory.
class ScopedCursor {
 public:
  explicit ScopedCursor(TSNode n) : c_(ts_tree_cursor_new(n)) {}
  ~ScopedCursor() { ts_tree_cursor_delete(&c_); }
  ScopedCursor(const ScopedCursor&) = delete;
  ScopedCursor& operator=(const ScopedCursor&) = delete;
  TSTreeCursor* get() { return &c_; }

 private:
  TSTreeCursor c_;
};

// Visit `root` and every node below it (named or not) in preorder, with its depth below
// `root` (0 for `root`), through one cursor: no recursion, so any nesting is safe.
template <typename F>
void for_each_node(TSNode root, F&& f) {
  ScopedCursor cursor(root);
  TSTreeCursor& c = *cursor.get();
  uint32_t depth = 0;
  for (bool more = true; more;) {
    f(ts_tree_cursor_current_node(&c), depth);
    if (ts_tree_cursor_goto_first_child(&c)) {
      ++depth;
      continue;
    }
    while (!ts_tree_cursor_goto_next_sibling(&c)) {
      if (!ts_tree_cursor_goto_parent(&c)) {
        more = false;
        break;
      }
      --depth;
    }
  }
}

// The children of a node (all, or only the named ones), gathered in one pass over its
// subtree (ts_children.c): ts_node_child(n, i) walks from the first child on every call, so
// index loops are quadratic, and a tree cursor's stack is a heap allocation per cursor.
// Inline storage holds the usual handful; a long block spills to the heap once.
class Children {
 public:
  Children(TSNode n, bool named_only) : count_(pf_node_children(n, named_only, inline_, kInline)) {
    if (count_ > kInline) {
      heap_.resize(count_);
      pf_node_children(n, named_only, heap_.data(), count_);
    }
  }
  Children(const Children&) = delete;
  Children& operator=(const Children&) = delete;

  const TSNode* begin() const { return count_ > kInline ? heap_.data() : inline_; }
  const TSNode* end() const { return begin() + count_; }
  uint32_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  TSNode operator[](uint32_t i) const { return begin()[i]; }

 private:
  // Small, because the recursive walks keep one of these per level of nesting.
  static constexpr uint32_t kInline = 8;
  TSNode inline_[kInline];
  uint32_t count_;
  std::vector<TSNode> heap_;
};

inline Children named_children(TSNode n) { return Children(n, true); }
inline Children all_children(TSNode n) { return Children(n, false); }

// Visit the named children of `n` in order.
template <typename F>
void for_each_named_child(TSNode n, F&& f) {
  for (TSNode child : Children(n, true)) f(child);
}

// Every node below `root` with the kind `symbol` (preorder), and the tree's shape, from one
// pass over the raw subtrees (ts_children.c): no cursor, no node built for the others.
struct NodesOfKind {
  std::vector<TSNode> nodes;
  PfTreeShape shape{};
};
inline NodesOfKind scan_nodes_of_kind(TSNode root, TSSymbol symbol) {
  NodesOfKind found;
  found.nodes.resize(64);
  uint32_t count = pf_tree_scan(root, symbol, found.nodes.data(), 64, &found.shape);
  if (count > 64) {  // rare: a second pass into a buffer of the right size
    found.nodes.resize(count);
    pf_tree_scan(root, symbol, found.nodes.data(), count, &found.shape);
  }
  found.nodes.resize(count);
  return found;
}

// ts_node_parent, remembered. ts_node_parent walks down from the tree's root and scans every
// sibling on the way, so asking it of a node inside a 3,000-line class costs a pass over the
// class's members, and a walk up the ancestors pays that at every level (issue 24: a fifth of a
// whole-file check). This keeps the ancestors of the last node asked (rules ask about nodes
// near each other) and every parent found, and walks down from the deepest kept ancestor of the
// next node instead of the root. parent(n) is exactly ts_node_parent(n) (tests hold it to that
// on every fixture); a node of another tree is answered by ts_node_parent itself.
class ParentIndex {
 public:
  explicit ParentIndex(TSNode root);
  TSNode parent(TSNode n) const;

 private:
  struct Slot {
    const void* id = nullptr;
    uint32_t start = 0;  // a node's id is unique in its tree; the start byte makes the key safe
    TSNode parent{};
  };
  const Slot* find(TSNode n) const;
  void remember(TSNode child, TSNode parent) const;
  void place(const Slot& slot) const;
  TSNode descend(size_t from, TSNode n) const;

  TSNode root_;
  mutable std::vector<TSNode> path_;  // root, ..., the parent of the last node looked up
  mutable std::vector<Slot> slots_;   // open addressing, power-of-two size, at most half full
  mutable size_t used_ = 0;
};

// `text` as one line of code in backticks for a message: line breaks become spaces, and text
// over `max` bytes is cut (on a character boundary, so the message stays valid UTF-8) and
// ends in "...".
std::string quote_code(std::string_view text, size_t max);

// Skip redundant parentheses: `((x))` -> `x`.
TSNode unparenthesize(TSNode n);
// The first `a % b` at or below `n`, in source order; `"%d" % x` (a string on the left) is
// string formatting, not a modulo. Null when there is none.
TSNode first_modulo(TSNode n, std::string_view src);

// `a`, `a.b.c` as a string; nullopt for anything containing a call, subscript, etc.
std::optional<std::string> dotted_name(TSNode n, std::string_view src);

// The leftmost identifier, looking through attributes, subscripts and call callees.
std::optional<std::string> base_name(TSNode n, std::string_view src);

// Last segment of a callee: `F.cross_entropy` -> "cross_entropy", `model` -> "model"; empty
// when the callee is not an identifier/attribute (e.g. `nn.Sigmoid()(x)`).
std::string_view callee_leaf(TSNode call, std::string_view src);

// Positional (non-keyword, non-splat) argument `index` of a call, or a null node.
TSNode positional_arg(TSNode call, unsigned index);
// Value of keyword argument `name`, or a null node.
TSNode keyword_arg(TSNode call, std::string_view name, std::string_view src);
bool has_literal_true_keyword(TSNode call, std::string_view name, std::string_view src);

// The number of syntax errors (ERROR or MISSING nodes), and the first one's range.
struct SyntaxErrorSummary {
  unsigned count = 0;
  ByteRange first;
};
// Also counts, in a tree with no ERROR or MISSING node, the first statement indented to a
// column no enclosing block uses (see misindented_statement).
SyntaxErrorSummary find_syntax_errors(TSNode root);

// The first statement whose indentation CPython rejects ("unindent does not match any outer
// indentation level", "unexpected indent") although the grammar's scanner accepts it: a
// statement of a block at another column than the block's first statement, or a block no
// deeper than its header. tree-sitter-python files such a line under some enclosing block
// without an error node, and where it lands differs between a whole-file and a partial parse.
std::optional<ByteRange> misindented_statement(TSNode root);

// An ERROR or MISSING node, or a misindented statement: CPython would not compile the text.
bool has_syntax_error(TSNode root);

}  // namespace preflight::analysis
