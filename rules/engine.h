// The one entry point every front end calls: source text in, findings out. Pure: no I/O, no
// globals, no threads; the CLI and the language server therefore report identical findings.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/budget.h"
#include "analysis/findings.h"
#include "analysis/project_index.h"
#include "analysis/syntax.h"

namespace preflight::rules {

// Deeper trees are refused: the analysis recurses over the syntax tree, and no real training
// script nests anywhere near this deep.
inline constexpr uint32_t kMaxDepth = 400;

struct CheckOptions {
  // Codes to run; empty means every registered rule. `ignore` wins over `select`.
  std::set<std::string> select;
  std::set<std::string> ignore;
  // The GPU / instance / count spec TG010 projects peak memory against; empty disables it
  // (so does a name the catalogue does not know: front ends reject those before checking).
  std::string target_gpu;
  // Files with more syntax nodes than this are reported as too complex instead of analysed
  // (a 10 MiB file of ordinary code has about 3.5 million). Deterministic, unlike the time
  // budget a front end passes to check_parsed, so the CLI and the server agree on it.
  size_t max_nodes = kDefaultMaxNodes;
  static constexpr size_t kDefaultMaxNodes = 8'000'000;
  // The other files of the run (the CLI's checked files, the server's workspace folder) and
  // this file's path among them (analysis/project_index.h). Null: the file alone. Compared
  // by identity: a new index is a new project.
  std::shared_ptr<const analysis::ProjectIndex> project;
  std::string project_path;
  friend bool operator==(const CheckOptions&, const CheckOptions&) = default;
};

// A region tree-sitter could not parse. Findings are still produced for the rest.
struct SyntaxError {
  analysis::ByteRange range;
  std::string message;
};

enum class FileStatus {
  Analyzed,     // parsed (possibly with syntax errors) and checked
  SkippedFile,  // carries a `# preflight: skip-file` marker: nothing reported
  NotText,      // not valid UTF-8, or contains NUL bytes: not analysed
  TooComplex,   // over the node limit, or the analysis ran past its time budget: no findings
};

// A suppression comment that silenced nothing (`code` empty: a blanket `# noqa`).
struct UnusedSuppression {
  analysis::ByteRange comment;
  std::string code;
};

struct CheckResult {
  FileStatus status = FileStatus::Analyzed;
  std::string status_reason;             // why NotText or TooComplex, for the user
  std::vector<analysis::Finding> findings;  // suppressions applied, sorted by position, code
  std::vector<SyntaxError> syntax_errors;
  // Stars of valid Python the grammar cannot read (analysis/grammar_gaps.h): the file was
  // analysed over a parse with them blanked, and they are not syntax errors.
  std::vector<analysis::ByteRange> grammar_gaps;
  // Only for rules that ran: a `# noqa: TG004` is not unused when TG004 was not selected.
  std::vector<UnusedSuppression> unused_suppressions;
  // Where an enabled rule saw its pattern and stayed quiet on purpose (a framework does the
  // work, or the deciding part cannot be seen), sorted by position, code. Not findings:
  // never suppressed, never gated; `check --explain-silence` shows them.
  std::vector<analysis::Silence> silences;
};

CheckResult check_source(std::string_view text, const CheckOptions& options);
// The same, polling `interrupt` while parsing and between units (see check_parsed): a parse
// that runs out of time gives the same TooComplex result as an analysis that does. A
// separate name, so that check_source stays one function callers can pass around.
CheckResult check_source_interruptible(std::string_view text, const CheckOptions& options,
                                       const analysis::Interrupt* interrupt);

// check_source's pipeline after validation and parsing, for callers that keep a tree across
// edits (rules/incremental.h). `text` must be valid text (not_text_reason is nullopt) and
// `tree` a parse of parse_view(text), fresh or incrementally reparsed.
// `interrupt`, when given, is polled between units: running out of time gives a TooComplex
// result; a cancellation propagates as analysis::AnalysisInterrupted to the caller.
// `context`, when given, receives the file-wide facts the findings rest on (the module
// model's answers and each enabled rule's, rules/rule.h), in a deterministic order.
CheckResult check_parsed(std::string_view text, const analysis::SyntaxTree& tree,
                         const CheckOptions& options, const analysis::Interrupt* interrupt = nullptr,
                         std::vector<analysis::ContextFact>* context = nullptr);
// The same over `root`, whose nodes cover bytes of `text` (rules/incremental.cpp parses a
// slice of the text with the rest blanked: the same bytes at the same offsets).
CheckResult check_parsed_root(std::string_view text, TSNode root, const CheckOptions& options,
                              const analysis::Interrupt* interrupt,
                              std::vector<analysis::ContextFact>* context);

// The TooComplex result of a parse or an analysis that ran past `interrupt`'s budget.
CheckResult out_of_time_result(const analysis::Interrupt& interrupt);
// What check_parsed_root reports before any rule runs: the status of a skip-file marker,
// the syntax errors, the depth and size guards. `analysable` is set when check_parsed_root
// would go on to run the rules (the result then holds only the syntax errors). `interrupt`
// is polled by the reparse that reads through grammar gaps (AnalysisInterrupted).
CheckResult check_syntax_only(std::string_view text, TSNode root, const CheckOptions& options, bool& analysable,
                              const analysis::Interrupt* interrupt = nullptr);

// Sorts findings by (start, code, end), silences by (start, code) and unused suppressions by
// (comment, code), as check_source returns them; stable, so equal keys keep their order.
void sort_result(CheckResult& result);

// Why `text` is not analysed (invalid UTF-8, a NUL byte), or nullopt when it is text.
std::optional<std::string> not_text_reason(std::string_view text);

// The text tree-sitter parses (analysis/syntax.h); re-exported for the engine's callers.
using analysis::parse_view;

// True when `code` names a registered rule ("TG001"), case-sensitive.
bool is_known_rule(std::string_view code);

}  // namespace preflight::rules
