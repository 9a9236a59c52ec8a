// DocumentAnalysis: one open document of the language server, kept across edits.
//
// The document keeps its text, the text tree-sitter parses (parse_view: lone \r -> \n, same
// offsets) and the tree. An edit is applied to both texts, recorded with ts_tree_edit and
// reparsed against the old tree (SyntaxTree::edit_and_reparse), so unchanged subtrees are
// reused. check() is byte-for-byte check_source(text(), options): the same pipeline
// (check_parsed) runs over the kept tree, and the last result is reused while neither the
// text nor the options changed.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/syntax.h"
#include "rules/engine.h"

namespace preflight::rules {

class DocumentAnalysis {  // one open document; used by one thread at a time
 public:
  explicit DocumentAnalysis(std::string text);

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
    size_t units = 0;        // top-level analysis units of the text checked
    size_t reanalysed = 0;   // units whose results were computed, not reused
    bool incremental_parse = false;  // the tree came from reparsing an edited tree
  };
  const Stats& last_stats() const;  // of the last check()

 private:
  struct CachedResult {
    std::string text;
    CheckOptions options;
    CheckResult result;
  };

  std::string text_;
  std::string parsed_;  // parse_view(text_): what the tree was parsed from
  analysis::SyntaxTree tree_;
  bool tree_from_edit_ = false;  // reparsed incrementally since the last from-scratch parse
  std::optional<CachedResult> cache_;
  Stats stats_;
};

}  // namespace preflight::rules
