#include "rules/incremental.h"

#include <stdexcept>
#include <utility>

namespace preflight::rules {

using namespace preflight::analysis;

namespace {

// Tree-sitter's point of `offset` in `parsed`: rows count '\n' (the parse view has no lone
// \r), columns are bytes.
TSPoint point_at(std::string_view parsed, size_t offset) {
  TSPoint p{0, 0};
  size_t line_start = 0;
  for (size_t i = 0; i < offset; ++i)
    if (parsed[i] == '\n') {
      ++p.row;
      line_start = i + 1;
    }
  p.column = static_cast<uint32_t>(offset - line_start);
  return p;
}

// The parse view of text[begin, end) (parse_view for that span; a \r looks one byte ahead).
std::string parse_view_of_span(std::string_view text, size_t begin, size_t end) {
  std::string out(text.substr(begin, end - begin));
  for (size_t i = begin; i < end; ++i)
    if (text[i] == '\r' && (i + 1 == text.size() || text[i + 1] != '\n')) out[i - begin] = '\n';
  return out;
}

size_t top_level_statement_count(TSNode root) { return ts_node_named_child_count(root); }

}  // namespace

DocumentAnalysis::DocumentAnalysis(std::string text)
    : text_(std::move(text)), parsed_(parse_view(text_)), tree_(SyntaxTree::parse(parsed_)) {}

void DocumentAnalysis::edit(size_t begin, size_t end, std::string_view replacement) {
  if (begin > end || end > text_.size()) throw std::out_of_range("edit span outside the document");
  // A lone \r before the edit may stop (or start) being lone when the byte after it changes,
  // so the parse view's edit starts one byte earlier there. Bytes from `end` on keep their
  // view: a byte's view depends only on itself and the byte after it.
  size_t view_begin = begin > 0 && text_[begin - 1] == '\r' ? begin - 1 : begin;
  TSInputEdit e{};
  e.start_byte = static_cast<uint32_t>(view_begin);
  e.old_end_byte = static_cast<uint32_t>(end);
  e.start_point = point_at(parsed_, view_begin);
  e.old_end_point = point_at(parsed_, end);

  text_.replace(begin, end - begin, replacement);
  size_t new_end = begin + replacement.size();
  parsed_.replace(view_begin, end - view_begin, parse_view_of_span(text_, view_begin, new_end));
  e.new_end_byte = static_cast<uint32_t>(new_end);
  e.new_end_point = point_at(parsed_, new_end);
  tree_.edit_and_reparse(e, parsed_);
  tree_from_edit_ = true;
}

void DocumentAnalysis::replace_all(std::string text) {
  text_ = std::move(text);
  parsed_ = parse_view(text_);
  tree_ = SyntaxTree::parse(parsed_);
  tree_from_edit_ = false;
}

const std::string& DocumentAnalysis::text() const { return text_; }

const DocumentAnalysis::Stats& DocumentAnalysis::last_stats() const { return stats_; }

std::optional<CheckResult> DocumentAnalysis::check(const CheckOptions& options,
                                                   const std::function<bool()>& cancelled,
                                                   const std::function<bool()>& out_of_time,
                                                   const std::string& budget) {
  stats_ = Stats{top_level_statement_count(tree_.root()), 0, tree_from_edit_};
  if (cache_ && cache_->text == text_ && cache_->options == options)
    return cache_->result;
  if (cancelled && cancelled()) return std::nullopt;
  CheckResult result;
  if (auto reason = not_text_reason(text_)) {
    result.status = FileStatus::NotText;
    result.status_reason = std::move(*reason);
  } else {
    Interrupt interrupt(out_of_time, budget, cancelled);
    try {
      result = check_parsed(text_, tree_, options, &interrupt);
    } catch (const AnalysisInterrupted&) {  // only a cancellation leaves check_parsed
      return std::nullopt;
    }
    stats_.reanalysed = stats_.units;
  }
  cache_ = CachedResult{text_, options, result};
  return result;
}

}  // namespace preflight::rules
