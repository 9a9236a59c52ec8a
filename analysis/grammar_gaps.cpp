#include "analysis/grammar_gaps.h"

#include <algorithm>
#include <cctype>
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

// `*(a)`, `*(self.x)`, `*(rows[0])`: the star's operand is a name, an attribute or a subscript
// in redundant parentheses. Returns the offsets of the two parentheses, or nullopt. Blanking
// them instead of the star keeps the star where it is, so this reading also serves a starred
// target (`x, *(y) = a`) and a star at the start of a line (`*(a), b = c`), where a blanked
// star would change the line's indentation.
std::optional<std::pair<size_t, size_t>> redundant_parentheses_after(std::string_view text, ByteRange star) {
  size_t open = star.end;
  while (open < text.size() && (text[open] == ' ' || text[open] == '\t')) ++open;
  if (open >= text.size() || text[open] != '(') return std::nullopt;
  size_t at = open + 1;
  if (at >= text.size() || !(std::isalpha(static_cast<unsigned char>(text[at])) || text[at] == '_'))
    return std::nullopt;
  int brackets = 0;
  for (; at < text.size(); ++at) {
    char c = text[at];
    if (c == '[') {
      ++brackets;
    } else if (c == ']') {
      if (--brackets < 0) return std::nullopt;
    } else if (c == ')' && brackets == 0) {
      // Only a whole element: `*(b) * 2` stars the product, which blanking the star reads.
      size_t next = at + 1;
      while (next < text.size() && (text[next] == ' ' || text[next] == '\t')) ++next;
      if (next < text.size()) {
        char after = text[next];
        bool doubled = next + 1 < text.size() && text[next + 1] == '=';  // `==`, `:=`
        if (std::string_view(",=)]:;#\r\n").find(after) == std::string_view::npos ||
            ((after == '=' || after == ':') && doubled))
          return std::nullopt;
      }
      return std::make_pair(open, at);
    } else if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' ||
                 (brackets > 0 && (c == ',' || c == ':' || c == '-' || c == ' ')))) {
      return std::nullopt;  // a call, a string, an operator, a keyword: not a plain reference
    }
  }
  return std::nullopt;
}

// True when the star at `star` (its parentheses blanked) is now a splat of a name, an
// attribute or a subscript that is an element of a tuple, a list or an unpacking target, in a
// place CPython takes a starred element: a starred target of an assignment or a `for`, or an
// element of a tuple where `star_expressions` are taken (stars_a_tuple_element's places).
bool stars_a_reference(TSNode root, ByteRange star) {
  const Kinds& k = kinds();
  TSNode token = ts_node_descendant_for_byte_range(root, star.begin, star.end);
  if (is_null(token) || !is_star_token(token)) return false;
  TSNode splat = ts_node_parent(token);
  if (!is(splat, k.list_splat) && !is(splat, k.list_splat_pattern)) return false;
  TSNode operand = ts_node_named_child(splat, 0);
  if (!is(operand, k.identifier) && !is(operand, k.attribute) && !is(operand, k.subscript)) return false;
  TSNode holder = ts_node_parent(splat);
  if (is(holder, k.list) || is(holder, k.tuple) || is(holder, k.tuple_pattern) || is(holder, k.list_pattern))
    return true;
  if (!is(holder, k.expression_list) && !is(holder, k.pattern_list)) return false;
  TSNode place = ts_node_parent(holder);
  if ((is(place, k.assignment) || is(place, k.for_statement) || is(place, k.for_in_clause)) &&
      ts_node_eq(field(place, k.f_left), holder))
    return true;
  return is(holder, k.expression_list) && takes_starred_elements(holder);
}

}  // namespace

// Where `text` is inside brackets at each byte is Python's implicit line joining: newlines
// and indentation there mean nothing. tree-sitter-python's scanner only knows it is inside
// brackets when the parser could take a closing bracket next, so a continuation line indented
// less than its statement after an operator or a dot (`(bar.\n  baz)`, CPython's
// test_compile.py) reads as a dedent. Returns the line breaks to leave out of the parse: from
// such a line's preceding newline to its first character (blank lines between included). Empty
// when there is none, or when a comment ends the line before one (leaving the newline out would
// join the next line into the comment). Breaks inside a bracket that the text never closes are
// not returned: no reading makes that text parse, and a second parse of it (an unclosed `print(`
// typed in a 5,000-line file) costs as much as the first's error recovery.
std::vector<ByteRange> shallow_continuation_breaks(std::string_view text) {
  std::vector<ByteRange> breaks;
  size_t closed_breaks = 0;  // how many of `breaks` lie in bracket groups that closed
  int depth = 0;
  size_t statement_indent = 0;
  bool comment_before_break = false;
  auto indent_at = [&](size_t line_start) {
    size_t i = line_start;
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
    return i - line_start;
  };
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '#') {
      while (i + 1 < text.size() && text[i + 1] != '\n') ++i;
      comment_before_break = true;
      continue;
    }
    if (c == '"' || c == '\'') {
      bool triple = i + 2 < text.size() && text[i + 1] == c && text[i + 2] == c;
      size_t j = i + (triple ? 3 : 1);
      for (; j < text.size(); ++j) {
        if (text[j] == '\\') { ++j; continue; }
        if (!triple && text[j] == '\n') break;  // unterminated: let the parser report it
        if (text[j] == c && (!triple || (j + 2 < text.size() && text[j + 1] == c && text[j + 2] == c))) {
          j += triple ? 2 : 0;
          break;
        }
      }
      i = j;
      continue;
    }
    if (c == '(' || c == '[' || c == '{') {
      if (depth++ == 0) {
        size_t line_start = text.rfind('\n', i);
        statement_indent = indent_at(line_start == std::string_view::npos ? 0 : line_start + 1);
      }
    } else if ((c == ')' || c == ']' || c == '}') && depth > 0) {
      if (--depth == 0) closed_breaks = breaks.size();
    } else if (c == '\n') {
      if (depth > 0) {
        size_t next = i + 1;
        while (next < text.size() && (text[next] == ' ' || text[next] == '\t' || text[next] == '\n' || text[next] == '\r'))
          ++next;
        size_t line_start = text.rfind('\n', next == 0 ? 0 : next - 1);
        size_t indent = next - (line_start == std::string_view::npos ? 0 : line_start + 1);
        if (next < text.size() && indent < statement_indent) {
          if (comment_before_break) return {};
          breaks.push_back({static_cast<uint32_t>(i), static_cast<uint32_t>(next)});
        }
        i = next - 1;  // the blank lines skipped are part of this break
      }
      comment_before_break = false;
    }
  }
  breaks.resize(closed_breaks);
  return breaks;
}

namespace {

// The included ranges of a parse that leaves `breaks` (sorted, disjoint) out.
std::vector<TSRange> ranges_without(std::string_view text, const std::vector<ByteRange>& breaks) {
  std::vector<TSRange> ranges;
  uint32_t begin = 0;
  TSPoint begin_point{0, 0};
  // tree-sitter's points: rows split at '\n' only (parse_view has no lone '\r'), byte columns.
  // The breaks come in text order, so the rows are counted once, from the last point on.
  uint32_t counted_to = 0, row = 0;
  auto point_at = [&](uint32_t byte) {
    row += static_cast<uint32_t>(std::count(text.begin() + counted_to, text.begin() + byte, '\n'));
    counted_to = byte;
    size_t line_start = text.substr(0, byte).rfind('\n');
    return TSPoint{row, static_cast<uint32_t>(line_start == std::string_view::npos ? byte : byte - line_start - 1)};
  };
  for (ByteRange b : breaks) {
    ranges.push_back({begin_point, point_at(b.begin), begin, b.begin});
    begin = b.end;
    begin_point = point_at(b.end);
  }
  ranges.push_back({begin_point, point_at(static_cast<uint32_t>(text.size())), begin, static_cast<uint32_t>(text.size())});
  return ranges;
}

}  // namespace

static std::optional<GrammarGapReading> read_through_shallow_continuations(std::string_view text, TSNode root,
                                                                   const Interrupt* interrupt) {
  if (!ts_node_has_error(root)) return std::nullopt;
  std::vector<ByteRange> breaks = shallow_continuation_breaks(text);
  if (breaks.empty()) return std::nullopt;
  SyntaxTree tree = SyntaxTree::parse_ranges(text, ranges_without(text, breaks), interrupt);
  if (ts_node_has_error(tree.root())) return std::nullopt;
  return GrammarGapReading{std::move(tree), std::move(breaks)};
}

std::optional<GrammarGapReading> read_through_grammar_gaps(std::string_view text, TSNode root,
                                                           const Interrupt* interrupt) {
  if (!ts_node_has_error(root)) return std::nullopt;
  std::vector<ByteRange> stars = unplaced_stars(root);
  if (stars.empty()) return read_through_shallow_continuations(text, root, interrupt);
  // Each star is read one of two ways: before a reference in redundant parentheses, the
  // parentheses are blanked; otherwise the star is (an element CPython stars, checked below).
  std::string blanked(text);
  std::vector<bool> reference(stars.size(), false);
  for (size_t i = 0; i < stars.size(); ++i) {
    if (auto parens = redundant_parentheses_after(text, stars[i])) {
      blanked[parens->first] = blanked[parens->second] = ' ';
      reference[i] = true;
    } else {
      blanked[stars[i].begin] = ' ';
    }
  }
  SyntaxTree tree = SyntaxTree::parse(blanked, interrupt);
  for (size_t i = 0; i < stars.size(); ++i)
    if (reference[i] ? !stars_a_reference(tree.root(), stars[i]) : !stars_a_tuple_element(tree.root(), blanked, stars[i]))
      return std::nullopt;
  return GrammarGapReading{std::move(tree), std::move(stars)};
}

}  // namespace preflight::analysis
