#include "server/cli/report_json.h"

#include <sstream>

#include "analysis/line_index.h"
#include "server/cli/json_layout.h"
#include "server/cli/positions.h"
#include "server/cli/rule_catalogue.h"

namespace preflight::server {

using analysis::Finding;
using analysis::Fix;
using analysis::LineIndex;
using Json = nlohmann::ordered_json;

namespace {

void put_span(Json& j, const Span& s) {
  j["line"] = s.line;
  j["column"] = s.column;
  j["end_line"] = s.end_line;
  j["end_column"] = s.end_column;
}

Json null_if_empty(const std::string& s) { return s.empty() ? Json(nullptr) : Json(s); }

Json related_json(const LineIndex& index, const std::vector<analysis::EvidenceStep>& evidence) {
  Json related = Json::array();
  for (const analysis::EvidenceStep& step : evidence) {
    Json r;
    r["message"] = step.message;
    put_span(r, span_of(index, step.range));
    related.push_back(std::move(r));
  }
  return related;
}

Json fixes_json(const LineIndex& index, const Finding& f) {
  Json fixes = Json::array();
  for (const Fix& fix : f.fixes) {
    Json edits = Json::array();
    for (const analysis::TextEdit& edit : fix.edits) {
      Json e;
      put_span(e, span_of(index, edit.range));
      e["new_text"] = edit.replacement;
      edits.push_back(std::move(e));
    }
    Json j;
    j["description"] = fix.description;
    j["safety"] = analysis::fix_safety_name(fix.safety);
    j["edits"] = std::move(edits);
    fixes.push_back(std::move(j));
  }
  return fixes;
}

Json diagnostic_json(const FileFindings& file, const LineIndex& index, const Finding& f) {
  const Fix* safe = f.safe_fix();
  Json d;
  d["code"] = f.code;
  d["message"] = f.message;
  d["severity"] = analysis::severity_name(f.severity);
  d["category"] = category_label(f);
  d["path"] = file.path;
  put_span(d, span_of(index, f.range));
  d["hint"] = null_if_empty(f.hint);
  d["fixable"] = safe != nullptr;
  d["fix"] = safe ? Json(safe->description) : Json(nullptr);
  d["related"] = related_json(index, f.evidence);
  d["fixes"] = fixes_json(index, f);
  return d;
}

// {code, reason, path, line, column, end_line, end_column, related}: where the finding would
// have been, and what kept the rule quiet.
Json silence_json(const FileFindings& file, const LineIndex& index, const analysis::Silence& s) {
  Json j;
  j["code"] = s.code;
  j["reason"] = s.reason;
  j["path"] = file.path;
  put_span(j, span_of(index, s.range));
  j["related"] = related_json(index, s.evidence);
  return j;
}

Json summary_json(const ReportTotals& totals) {
  Json s;
  s["files_checked"] = totals.files_checked;
  s["errors"] = totals.counts.errors;
  s["warnings"] = totals.counts.warnings;
  s["notes"] = totals.counts.notes;
  s["fixed"] = totals.fixed;
  return s;
}

Json failures_json(const std::vector<FileFailure>& failures) {
  Json out = Json::array();
  for (const FileFailure& failure : failures)
    out.push_back(Json{{"path", failure.path}, {"error", failure.error}});
  return out;
}

// Each entry is rendered when its file arrives (two levels deep: root, then the array), so
// the file's text can go; the document is written once the summary is known.
class JsonReportWriter final : public ReportWriter {
 public:
  explicit JsonReportWriter(std::ostream& out) : out_(out) {}

  void file(const FileFindings& file) override {
    if (file.findings.empty() && file.silences.empty()) return;
    LineIndex index(file.text);
    for (const Finding& f : file.findings)
      diagnostics_.push_back(json_layout::nested(diagnostic_json(file, index, f), 2));
    for (const analysis::Silence& s : file.silences)
      silences_.push_back(json_layout::nested(silence_json(file, index, s), 2));
  }

  void finish(const ReportTotals& totals) override {
    std::vector<json_layout::Member> root;
    root.emplace_back("version", json_layout::nested(kJsonReportVersion, 1));
    root.emplace_back("summary", json_layout::nested(summary_json(totals), 1));
    root.emplace_back("diagnostics", json_layout::array(diagnostics_, 1));
    root.emplace_back("failures", json_layout::nested(failures_json(totals.failures), 1));
    // An addition to version 1, present only when asked for: readers of the reference's
    // schema see the same keys as before.
    if (totals.explain_silence) root.emplace_back("silences", json_layout::array(silences_, 1));
    out_ << json_layout::object(root, 0) << "\n";
  }

 private:
  std::ostream& out_;
  std::vector<std::string> diagnostics_;
  std::vector<std::string> silences_;
};

}  // namespace

std::unique_ptr<ReportWriter> make_json_writer(std::ostream& out) {
  return std::make_unique<JsonReportWriter>(out);
}

Json json_report(const CheckReport& report) {
  std::ostringstream out;
  write_json_report(report, out);
  return Json::parse(out.str());
}

void write_json_report(const CheckReport& report, std::ostream& out) {
  JsonReportWriter writer(out);
  write_report(report, writer);
}

}  // namespace preflight::server
