#include "analysis/grammar_gaps.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace preflight::analysis {
namespace {

bool is_star_token(TSNode n) { return !ts_node_is_named(n) && std::strcmp(ts_node_type(n), "*") == 0; }

// The `*` tokens of the nodes that hold an error: error recovery leaves a star it could not
// place as a child of an ERROR node, or of a list_splat around one. Stars of error-free
// subtrees (a multiplication, `*name` in a tuple) are left alone.
std::vector<ByteRange> unplaced_stars(TSNode root) {
  std::vector<ByteRange> stars;
  std::vector<TSNode> pending{root};
  while (!pending.empty()) {
    TSNode n = pending.back();
    pending.pop_back();
    for (TSNode child : all_children(n)) {
      if (is_star_token(child)) stars.push_back(range_of(child));
      else if (ts_node_has_error(child)) pending.push_back(child);
    }
  }
  std::sort(stars.begin(), stars.end(), [](ByteRange a, ByteRange b) { return a.begin < b.begin; });
  return stars;
}

// Where CPython's grammar takes `star_expressions`: the tuple is a return's or a yield's
// value, an expression statement, or the right-hand side of an assignment or a `for`.
bool takes_starred_elements(TSNode tuple) {
  const Kinds& k = kinds();
  TSNode parent = ts_node_parent(tuple);
  TSSymbol s = sym(parent);
  if (s == k.return_statement || s == k.yield || s == k.expression_statement) return true;
  if (s == k.assignment || s == k.augmented_assignment || s == k.for_statement)
    return ts_node_eq(field(parent, k.f_right), tuple);
  return false;
}

// `*` binds a `bitwise_or`: these would take the star as part of their first operand.
bool binds_looser_than_a_star(TSNode element) {
  const Kinds& k = kinds();
  TSSymbol s = sym(element);
  return s == k.lambda || s == k.comparison_operator || s == k.not_operator ||
         s == k.boolean_operator || s == k.conditional_expression || s == k.named_expression ||
         s == k.list_splat || s == k.dictionary_splat;
}

// True when the star blanked at `star` stands before an element CPython would star: the
// element starts at the first byte after the blanks and is a direct element of a tuple in
// a place that takes starred elements.
bool stars_a_tuple_element(TSNode root, std::string_view text, ByteRange star) {
  const Kinds& k = kinds();
  size_t at = star.end;
  while (at < text.size() && (text[at] == ' ' || text[at] == '\t')) ++at;
  if (at >= text.size()) return false;
  auto begin = static_cast<uint32_t>(at);
  TSNode element = ts_node_named_descendant_for_byte_range(root, begin, begin + 1);
  while (!is_null(element) && ts_node_start_byte(element) == begin) {
    TSNode parent = ts_node_parent(element);
    if (is(parent, k.expression_list) || is(parent, k.pattern_list))
      return !binds_looser_than_a_star(element) && takes_starred_elements(parent);
    element = parent;
  }
  return false;
}

}  // namespace

std::optional<GrammarGapReading> read_through_grammar_gaps(std::string_view text, TSNode root,
                                                           const Interrupt* interrupt) {
  if (!ts_node_has_error(root)) return std::nullopt;
  std::vector<ByteRange> stars = unplaced_stars(root);
  if (stars.empty()) return std::nullopt;
  std::string blanked(text);
  for (ByteRange star : stars) blanked[star.begin] = ' ';
  SyntaxTree tree = SyntaxTree::parse(blanked, interrupt);
  for (ByteRange star : stars)
    if (!stars_a_tuple_element(tree.root(), blanked, star)) return std::nullopt;
  return GrammarGapReading{std::move(tree), std::move(stars)};
}

}  // namespace preflight::analysis
