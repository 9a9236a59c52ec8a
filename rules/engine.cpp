#include "rules/engine.h"

#include <algorithm>
#include <iterator>
#include <optional>
#include <string>

#include "analysis/grammar_gaps.h"
#include "analysis/line_index.h"
#include "analysis/suppressions.h"
#include "rules/registry.h"
#include "rules/rule.h"

namespace preflight::rules {

using namespace preflight::analysis;

namespace {

// Returns the byte offset of the first invalid UTF-8 sequence or NUL byte, or npos.
size_t first_invalid_byte(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c == 0) return i;
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
    if (len == 0 || c == 0xC0 || c == 0xC1 || c > 0xF4 || i + len > text.size()) return i;
    for (size_t k = 1; k < len; ++k)
      if ((static_cast<unsigned char>(text[i + k]) & 0xC0) != 0x80) return i;
    // The second byte's range rules out overlong forms, UTF-16 surrogates and code points
    // above U+10FFFF (RFC 3629, table 3-7 of the Unicode standard).
    auto c1 = static_cast<unsigned char>(text[i + 1]);
    if ((c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 > 0x9F) || (c == 0xF0 && c1 < 0x90) ||
        (c == 0xF4 && c1 > 0x8F))
      return i;
    i += len;
  }
  return std::string_view::npos;
}

bool enabled(const RuleMeta& rule, const CheckOptions& options) {
  std::string code(rule.code);
  if (options.ignore.count(code)) return false;
  return options.select.empty() || options.select.count(code);
}

bool finding_order(const Finding& a, const Finding& b) {
  if (a.range.begin != b.range.begin) return a.range.begin < b.range.begin;
  if (a.code != b.code) return a.code < b.code;
  return a.range.end < b.range.end;
}

}  // namespace

std::string quote_code(std::string_view text, size_t max) { return analysis::quote_code(text, max); }

bool is_known_rule(std::string_view code) { return find_rule(code) != nullptr; }


std::optional<std::string> not_text_reason(std::string_view text) {
  size_t bad = first_invalid_byte(text);
  if (bad == std::string_view::npos) return std::nullopt;
  return (text[bad] == 0 ? "contains a NUL byte at offset " : "not valid UTF-8 at byte offset ") +
         std::to_string(bad);
}

CheckResult check_source(std::string_view text, const CheckOptions& options) {
  return check_source_interruptible(text, options, nullptr);
}

CheckResult check_source_interruptible(std::string_view text, const CheckOptions& options,
                                       const Interrupt* interrupt) {
  if (auto reason = not_text_reason(text)) {
    CheckResult result;
    result.status = FileStatus::NotText;
    result.status_reason = std::move(*reason);
    return result;
  }
  std::optional<SyntaxTree> tree;
  try {
    tree.emplace(SyntaxTree::parse(parse_view(text), interrupt));
  } catch (const AnalysisInterrupted& stop) {
    if (stop.reason == InterruptReason::Cancelled) throw;
    return out_of_time_result(*interrupt);
  }
  return check_parsed(text, *tree, options, interrupt);
}

CheckResult out_of_time_result(const Interrupt& interrupt) {
  CheckResult result;
  result.status = FileStatus::TooComplex;
  result.status_reason = "too complex to analyze: the analysis ran past its time budget" +
                         (interrupt.budget().empty() ? "" : " of " + interrupt.budget());
  return result;
}

namespace {

void refuse_as_too_complex(CheckResult& result, std::string reason) {
  result.status = FileStatus::TooComplex;
  result.status_reason = std::move(reason);
  result.findings.clear();
  result.unused_suppressions.clear();
  result.silences.clear();
}

// The facts, one traversal feeding reachability and every enabled rule, then each rule's
// findings with suppressions applied. Polls `interrupt` between units.
// The module model's file-wide answers, which findings anywhere may rest on.
void model_context(const ModuleModel& model, std::vector<ContextFact>& out) {
  out.push_back({std::string("model: touches torch ") + (model.touches_torch() ? "yes" : "no") +
                     ", another framework's program " + (model.is_other_framework_program() ? "yes" : "no") +
                     ", may be torch code " + (model.may_be_torch_code() ? "yes" : "no") + ", imports torch " +
                     (model.has_torch_import() ? "yes" : "no") + " as `" + model.torch_alias() + "`",
                 {},
                 false});
  uint32_t at = model.import_insertion_offset();
  out.push_back({"model: imports go here", {at, at}});
}

void analyze(std::string_view text, TSNode root, const CheckOptions& options, const LineIndex& lines,
             Suppressions& suppressions, const Interrupt* interrupt, CheckResult& result,
             std::vector<ContextFact>* context) {
  ModuleModel model(root, text);
  Provenance provenance(model, interrupt);
  Reachability reachability(model, provenance);
  const analysis::ProjectIndex* project =
      options.project && options.project->has_other_files(options.project_path) ? options.project.get() : nullptr;
  RuleContext ctx{text, root, model, provenance, reachability, options.target_gpu, project, options.project_path};
  std::vector<std::unique_ptr<RuleCheck>> checks;
  std::vector<Visitor*> visitors{&reachability.collector()};
  for (const RuleMeta& rule : all_rules()) {
    if (!enabled(rule, options) || model.is_other_framework_program()) continue;  // no torch rule applies
    checks.push_back(rule.check(ctx));
    visitors.push_back(checks.back().get());
  }
  walk(model, visitors, interrupt);
  reachability.finalize();
  std::vector<Finding> found;
  for (auto& check : checks) {
    if (interrupt) interrupt->poll();
    check->finish(found);
  }
  if (context) {
    model_context(model, *context);
    for (auto& check : checks) check->context(*context);
  }
  for (auto& check : checks)
    std::move(check->silences.begin(), check->silences.end(), std::back_inserter(result.silences));
  for (Finding& f : found)
    if (!suppressions.suppresses(f, lines)) result.findings.push_back(std::move(f));
  auto ran = [&](const std::string& code) {
    const RuleMeta* rule = find_rule(code);
    return rule && enabled(*rule, options);
  };
  for (auto& u : suppressions.unused(ran)) result.unused_suppressions.push_back({u.comment, u.code});
  sort_result(result);
}

}  // namespace

void sort_result(CheckResult& result) {
  std::stable_sort(result.silences.begin(), result.silences.end(), [](const Silence& a, const Silence& b) {
    return a.range.begin != b.range.begin ? a.range.begin < b.range.begin : a.code < b.code;
  });
  std::sort(result.unused_suppressions.begin(), result.unused_suppressions.end(),
            [](const UnusedSuppression& a, const UnusedSuppression& b) {
              return a.comment.begin != b.comment.begin ? a.comment.begin < b.comment.begin : a.code < b.code;
            });
  std::stable_sort(result.findings.begin(), result.findings.end(), finding_order);
}

CheckResult check_parsed(std::string_view text, const SyntaxTree& tree, const CheckOptions& options,
                         const Interrupt* interrupt, std::vector<ContextFact>* context) {
  return check_parsed_root(text, tree.root(), options, interrupt, context);
}

namespace {

// Everything check_parsed_root decides before a rule runs: skip-file, the syntax errors, the
// depth and size guards. True when the analysis is to run.
bool screen(TSNode root, const CheckOptions& options, const Suppressions& suppressions, CheckResult& result) {
  if (suppressions.skip_file) {
    result.status = FileStatus::SkippedFile;
    return false;
  }
  SyntaxErrorSummary errors = find_syntax_errors(root);
  if (errors.count > 0) result.syntax_errors.push_back({errors.first, "syntax error"});
  if (suppressions.max_depth > kMaxDepth) {
    result.syntax_errors.push_back({range_of(root), "too deeply nested to analyze"});
    return false;
  }
  if (suppressions.node_count > options.max_nodes) {
    refuse_as_too_complex(result, "too complex to analyze: " + std::to_string(suppressions.node_count) +
                                      " syntax nodes, over the limit of " + std::to_string(options.max_nodes));
    return false;
  }
  return true;
}

// A tree whose only errors are grammar gaps of valid Python is read through them: the parse
// with the gaps blanked replaces it, and the gaps are recorded instead of a syntax error.
std::optional<SyntaxTree> read_through_gaps(std::string_view text, TSNode root, const Interrupt* interrupt,
                                            CheckResult& result) {
  if (!ts_node_has_error(root)) return std::nullopt;
  std::optional<GrammarGapReading> reading = read_through_grammar_gaps(parse_view(text), root, interrupt);
  if (!reading) return std::nullopt;
  result.grammar_gaps = std::move(reading->stars);
  return std::move(reading->tree);
}

}  // namespace

CheckResult check_syntax_only(std::string_view text, TSNode root, const CheckOptions& options, bool& analysable,
                              const Interrupt* interrupt) {
  CheckResult result;
  LineIndex lines(text);
  std::optional<SyntaxTree> read = read_through_gaps(text, root, interrupt, result);
  TSNode analysed = read ? read->root() : root;
  analysable = screen(analysed, options, scan_suppressions(analysed, text, lines), result);
  return result;
}

CheckResult check_parsed_root(std::string_view text, TSNode root, const CheckOptions& options,
                              const Interrupt* interrupt, std::vector<ContextFact>* context) {
  CheckResult result;
  LineIndex lines(text);
  try {
    std::optional<SyntaxTree> read = read_through_gaps(text, root, interrupt, result);
    TSNode analysed = read ? read->root() : root;
    Suppressions suppressions = scan_suppressions(analysed, text, lines);
    if (!screen(analysed, options, suppressions, result)) return result;
    analyze(text, analysed, options, lines, suppressions, interrupt, result, context);
  } catch (const AnalysisInterrupted& stop) {
    if (stop.reason == InterruptReason::Cancelled) throw;
    refuse_as_too_complex(result, out_of_time_result(*interrupt).status_reason);
  }
  return result;
}

}  // namespace preflight::rules
