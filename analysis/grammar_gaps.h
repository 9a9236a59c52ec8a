// Valid Python the pinned grammar cannot read, told apart from real syntax errors.
//
// tree-sitter-python 0.25.0 (the newest release on npm when this was written) accepts a
// starred element of an unparenthesised tuple only when what follows the star is a name, an
// attribute or a subscript: `return x, *ys` parses, `return x, *(y for y in ys)` and
// `host, *rest = endpoint, *[]` do not, although CPython accepts them (its `star_expressions`:
// `'*' bitwise_or` in a return, a yield, an assignment's or a `for`'s right-hand side, an
// expression statement). tree-sitter reports such a line as an ERROR node, and a file of
// valid Python would be reported as one that does not parse.
//
// read_through_grammar_gaps blanks each star that an ERROR node holds (one byte becomes a
// space, so every offset is kept) and parses again. It reads through the gaps only when
// every blanked star stands, in the new tree, right before an element of such a tuple that
// CPython would star (not a `lambda`, comparison, `not`, `and` / `or`, conditional or `:=`,
// which `*` does not bind). Anything else stays a syntax error: a star that multiplies, one
// in a `del`, one before a bare expression, `x = *a`. A real syntax error elsewhere in the
// file stays in the new tree, so it is the one reported, where it is.
//
// A star before a reference in redundant parentheses (`x, *(y) = a`, `*(a), b = c` at the
// start of a line) is read by blanking the parentheses instead, which keeps the star in place;
// it is accepted only where CPython takes a starred reference (an unpacking target, an element
// of a tuple or list where starred elements are taken).
//
// A second gap, read only when no star explains the errors: inside brackets a continuation line
// indented less than its statement (`x = (bar.\n  baz)`) is a dedent to the grammar's scanner,
// which guesses bracket depth from what the parser could take next. Python joins such lines
// implicitly, so those line breaks (newline to the next line's first character) are left out
// of a second parse (included ranges: every node keeps its offsets and points); the reading is
// taken only when that parse has no error at all.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "analysis/budget.h"
#include "analysis/findings.h"
#include "analysis/syntax.h"

namespace preflight::analysis {

struct GrammarGapReading {
  SyntaxTree tree;                // a parse of the text read through the gaps
  std::vector<ByteRange> stars;   // the gaps, in text order: the stars the grammar could not
                                  // read, or the line breaks before shallow continuation lines
};

// `text` is the text `root` was parsed from (parse_view of the source). nullopt when the
// tree has no error, or when an error is not explained by the starred-tuple gap. Polls
// `interrupt` while parsing (AnalysisInterrupted, as SyntaxTree::parse).
std::optional<GrammarGapReading> read_through_grammar_gaps(std::string_view text, TSNode root,
                                                           const Interrupt* interrupt = nullptr);

// The line breaks the second gap reading leaves out (newline to the next line's first
// character), in text order: none inside a bracket the text never closes, since no reading
// makes that text parse (a `print(` being typed would otherwise cost a second whole parse).
std::vector<ByteRange> shallow_continuation_breaks(std::string_view text);

}  // namespace preflight::analysis
