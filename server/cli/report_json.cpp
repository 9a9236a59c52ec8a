#include "server/cli/report_json.h"

#include "analysis/line_index.h"
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

Json silences_json(const CheckReport& report) {
  Json silences = Json::array();
  for (const FileFindings& file : report.files) {
    if (file.silences.empty()) continue;
    LineIndex index(file.text);
    for (const analysis::Silence& s : file.silences) silences.push_back(silence_json(file, index, s));
  }
  return silences;
}

Json summary_json(const CheckReport& report) {
  SeverityCounts counts = count_severities(report);
  Json s;
  s["files_checked"] = report.files_checked;
  s["errors"] = counts.errors;
  s["warnings"] = counts.warnings;
  s["notes"] = counts.notes;
  s["fixed"] = report.fixed;
  return s;
}

}  // namespace

Json json_report(const CheckReport& report) {
  Json diagnostics = Json::array();
  for (const FileFindings& file : report.files) {
    if (file.findings.empty()) continue;
    LineIndex index(file.text);
    for (const Finding& f : file.findings) diagnostics.push_back(diagnostic_json(file, index, f));
  }
  Json failures = Json::array();
  for (const FileFailure& failure : report.failures)
    failures.push_back(Json{{"path", failure.path}, {"error", failure.error}});

  Json root;
  root["version"] = kJsonReportVersion;
  root["summary"] = summary_json(report);
  root["diagnostics"] = std::move(diagnostics);
  root["failures"] = std::move(failures);
  // An addition to version 1, present only when asked for: readers of the reference's
  // schema see the same keys as before.
  if (report.explain_silence) root["silences"] = silences_json(report);
  return root;
}

void write_json_report(const CheckReport& report, std::ostream& out) {
  out << json_report(report).dump(2, ' ', false, Json::error_handler_t::replace) << "\n";
}

}  // namespace preflight::server
