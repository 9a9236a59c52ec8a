// DocumentAnalysis: one open document of the language server, kept across edits.
//
// The document keeps its text, the text tree-sitter parses (parse_view: lone \r -> \n, same
// offsets) and the tree. An edit is applied to both texts and recorded with ts_tree_edit;
// the tree is reparsed against its recorded edits (unchanged subtrees reused) only when a
// check needs the whole tree. check() is byte-for-byte check_source(text(), options).
//
// Per-unit reuse (analysis/units.h). After an edit, check() re-analyses only a slice of the
// file and takes every other unit's findings, silences and unused suppressions from the last
// result, moved by the edit's length:
//   1. dirty: the units whose bytes the edit touched (text diff of the last and current text;
//      a unit is clean only when the same range, shifted, was a unit before);
//   2. affected: dirty units plus every unit that reads, transitively, a name a dirty or
//      removed unit defines (its findings may change);
//   3. the slice: the affected units, the units holding the last check's context facts and
//      the imports (the module model's unplaced answers read them), closed under "reads"
//      (so every unit in it is analysed with everything it names), for module code under
//      "comes after" (module-level statements run in order), and for a class member under
//      "its header and class code" (analysis/units.h: a changed header or class code makes
//      the whole class dirty; a header with no member in the slice brings its smallest one);
//   3b. after a region parse, the kept tree reparsed against the edits tells whether the whole
//      text has a syntax error (a region can parse on its own where the whole text does not);
//      if it has, the last good findings are kept (below);
//   4. the slice is parsed on its own (ts_parser_set_included_ranges over the kept units; a
//      method of a split class with its indentation, inside its class's header and class code),
//      and checked by the same pipeline over the full text;
//   5. the slice's context facts must equal the last ones, moved by the edit: otherwise the
//      edit changed a file-wide fact and the whole file is checked.
// Anything unusual (a TG010 target, a status other than Analyzed, a slice that does not parse
// cleanly, a cached range the edit overlaps, a slice over half the file) takes the whole-file
// path. The differential test holds both paths to check_source.
//
// Text that does not parse is the normal state while typing, and error recovery can reshape
// code far from the error (an open bracket swallows the lines after it). So while the text
// has syntax errors and an earlier check of this document parsed (the "last good" check,
// same options, no TG010 target), check() neither analyses it nor parses it afresh. The result
// is what check_source reports before any rule runs, read from the kept tree reparsed against
// the edits (one syntax error, placed where that reparse puts the first one, which may differ
// from a fresh parse's place; the server does not publish parser errors), plus the findings,
// silences and unused suppressions of the last good check, moved by the edits since, except
// those of the units the edits touched (an edit on any line of a unit touches it; a method
// of a split class is a unit, so typing inside one method keeps every other method's findings)
// and any a range of which the edits overlap. Those come back, analysed, once the text parses
// again: the next parseable text is sliced against the last good check and equals
// check_source again. This trusts an incremental reparse to show an error only where a fresh
// parse shows one too (the differential tests hold it); a text check_source would not analyse
// (skip-file, the depth or size guard) is checked whole. Whether the text parses is first
// asked of a lexical scan of the edited lines (analysis/brackets.h): a bracket they leave
// open, or close without an opener, cannot be balanced by the untouched rest, so the last
// good findings are kept without any parse (the syntax error placed at that bracket); the
// scan answers only when sure, and otherwise the kept tree is reparsed as above. The result
// carries no grammar gaps (they say how a text that parses only through them was read, and
// nothing is read here). Stats::kept_while_broken says this path was taken;
// tests/incremental_oracle.h computes the same result from check_source.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/syntax.h"
#include "analysis/units.h"
#include "rules/engine.h"

namespace preflight::rules {

class DocumentAnalysis {  // one open document; used by one thread at a time
 public:
  // `max_slice_share`: the largest part of the text (in bytes) a slice may cover before the
  // whole file is checked instead; tests raise it to 1 so that small files take the slice
  // path too.
  explicit DocumentAnalysis(std::string text, double max_slice_share = 0.5);

  // Replace bytes [begin, end) of the current text by `replacement`; offsets are into the
  // current text (the server converts LSP positions to bytes). Builds the TSInputEdit (bytes
  // + points) itself. Throws std::out_of_range when the span is not inside the text.
  void edit(size_t begin, size_t end, std::string_view replacement);
  void replace_all(std::string text);
  const std::string& text() const;

  // Byte-for-byte the same CheckResult as check_source(text(), options) (status, findings with
  // evidence/fixes, syntax errors, unused suppressions, silences). `cancelled` is polled between
  // units; returns std::nullopt when it returned true. `out_of_time`, polled likewise, turns
  // the result into FileStatus::TooComplex, naming `budget` ("10 s") as what ran out.
  std::optional<CheckResult> check(const CheckOptions& options,
                                   const std::function<bool()>& cancelled = {},
                                   const std::function<bool()>& out_of_time = {},
                                   const std::string& budget = {});

  struct Stats {
    size_t units = 0;        // analysis units of the text checked (analysis/units.h)
    size_t reanalysed = 0;   // units whose results were computed, not reused
    bool sliced = false;     // only a slice was analysed; the rest was reused
    std::string whole_file_because;  // when not sliced after an edit: why
    bool incremental_parse = false;  // the tree came from reparsing an edited tree
    bool region_parse = false;       // only the edited region was parsed (no whole tree)
    bool kept_while_broken = false;  // the text has syntax errors: the last good findings kept
  };
  const Stats& last_stats() const;  // of the last check()

 private:
  // The last check: its text and result, the facts of its units (in order) and the context
  // facts its findings rest on. `units` is empty when that text could not be sliced.
  struct Previous {
    std::string text;
    CheckOptions options;
    CheckResult result;
    std::vector<analysis::UnitFacts> units;
    std::vector<analysis::ContextFact> context;
  };
  struct Slicing;
  std::optional<CheckResult> check_slice(const CheckOptions& options, const analysis::Interrupt& interrupt,
                                         std::vector<analysis::UnitFacts>& units,
                                         std::vector<analysis::ContextFact>& context);
  // The result for a text with syntax errors after the last good check (header comment):
  // `screened` (check_syntax_only) plus the last good items the edits left alone.
  CheckResult kept_while_broken(CheckResult screened) const;
  // kept_while_broken's result, without a parse, when the edited lines leave a bracket that
  // nothing after them can balance (analysis/brackets.h); nullopt when the scan cannot tell.
  std::optional<CheckResult> keep_if_unbalanced(const CheckOptions& options);
  // kept_while_broken's result when the whole text (the kept tree reparsed) has a reported
  // syntax error; nullopt when it parses.
  std::optional<CheckResult> keep_if_broken(const CheckOptions& options, const analysis::Interrupt& interrupt);

  // The tree of the whole text, reparsed (against its recorded edits) only when a check
  // needs it: a check that can slice reads the units of the edited region from a parse of
  // that region alone.
  // Parsing polls `interrupt`; interrupted, it throws AnalysisInterrupted and the next call
  // parses again.
  const analysis::SyntaxTree& tree(const analysis::Interrupt& interrupt);
  // The kept tree reparsed against its recorded edits, errors or not (tree() parses a text
  // with errors afresh).
  const analysis::SyntaxTree& reparsed_tree(const analysis::Interrupt& interrupt);

  std::string text_;
  std::string parsed_;  // parse_view(text_): what the tree was parsed from
  analysis::SyntaxTree tree_;
  // tree_ is no parse of parsed_ (a new text, or a fresh parse was interrupted): the next
  // check parses it from scratch, within its budget, instead of the constructor or
  // replace_all parsing outside any budget.
  bool tree_unparsed_ = false;
  bool tree_stale_ = false;      // edits recorded on tree_ but not reparsed
  bool tree_from_edit_ = false;  // reparsed incrementally since the last from-scratch parse
  std::optional<Previous> previous_;  // the last good check while the text does not parse
  // The last check of a text with syntax errors that kept the last good findings (its text,
  // options and result), so that an unchanged text is not checked again.
  struct Broken {
    std::string text;
    CheckOptions options;
    CheckResult result;
  };
  std::optional<Broken> broken_;
  double max_slice_share_;
  Stats stats_;
};

}  // namespace preflight::rules
