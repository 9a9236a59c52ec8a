#include "server/cli/report_sarif.h"

#include <cstdio>
#include <sstream>

#include "analysis/line_index.h"
#include "server/cli/json_layout.h"
#include "server/cli/positions.h"
#include "server/cli/rule_catalogue.h"

namespace preflight::server {

using analysis::ColumnUnit;
using analysis::Finding;
using analysis::LineIndex;
using Json = nlohmann::ordered_json;

namespace {

Json text(std::string_view s) { return Json{{"text", s}}; }

Json rule_json(const RuleInfo& rule) {
  Json r;
  r["id"] = rule.code;
  r["name"] = rule.slug;
  r["shortDescription"] = text(rule.summary);
  r["fullDescription"] = text(rule.explanation.empty() ? rule.summary : rule.explanation);
  if (std::string uri = rule_help_uri(rule.code); !uri.empty()) r["helpUri"] = uri;
  r["defaultConfiguration"] = Json{{"level", analysis::severity_name(rule.default_severity)}};
  r["properties"] = Json{{"category", rule.category}, {"tags", Json::array({rule.category})}};
  return r;
}

Json driver_json(std::string_view version, std::span<const RuleInfo> catalogue) {
  Json rules = Json::array();
  for (const RuleInfo& rule : catalogue) rules.push_back(rule_json(rule));
  Json d;
  d["name"] = "preflight";
  d["version"] = version;
  if (!kInformationUri.empty()) d["informationUri"] = kInformationUri;
  d["rules"] = std::move(rules);
  return d;
}

Json region_json(const LineIndex& index, analysis::ByteRange range) {
  Span s = span_of(index, range, ColumnUnit::Utf16Units);
  return Json{{"startLine", s.line},
              {"startColumn", s.column},
              {"endLine", s.end_line},
              {"endColumn", s.end_column}};
}

Json artifact(const std::string& path) { return Json{{"uri", artifact_uri(path)}}; }

Json physical_location(const FileFindings& file, const LineIndex& index,
                       analysis::ByteRange range) {
  return Json{{"artifactLocation", artifact(file.path)}, {"region", region_json(index, range)}};
}

Json related_locations(const FileFindings& file, const LineIndex& index, const Finding& f) {
  Json related = Json::array();
  for (std::size_t i = 0; i < f.evidence.size(); ++i) {
    Json r;
    r["id"] = i;
    r["physicalLocation"] = physical_location(file, index, f.evidence[i].range);
    r["message"] = text(f.evidence[i].message);
    related.push_back(std::move(r));
  }
  return related;
}

Json fix_json(const FileFindings& file, const LineIndex& index, const analysis::Fix& fix) {
  Json replacements = Json::array();
  for (const analysis::TextEdit& edit : fix.edits)
    replacements.push_back(Json{{"deletedRegion", region_json(index, edit.range)},
                                {"insertedContent", text(edit.replacement)}});
  Json change{{"artifactLocation", artifact(file.path)}, {"replacements", replacements}};
  Json j;
  j["description"] = text(fix.description);
  j["artifactChanges"] = Json::array({std::move(change)});
  j["properties"] = Json{{"safety", analysis::fix_safety_name(fix.safety)}};
  return j;
}

Json result_json(const FileFindings& file, const LineIndex& index, const Finding& f,
                 std::span<const RuleInfo> rules) {
  Json r;
  r["ruleId"] = f.code;
  if (std::size_t i = rule_index(f.code, rules); i < rules.size()) r["ruleIndex"] = i;
  r["level"] = analysis::severity_name(f.severity);
  r["message"] = text(f.message);
  r["locations"] = Json::array({Json{{"physicalLocation", physical_location(file, index, f.range)}}});
  if (!f.evidence.empty()) r["relatedLocations"] = related_locations(file, index, f);
  if (!f.fixes.empty()) {
    Json fixes = Json::array();
    for (const analysis::Fix& fix : f.fixes) fixes.push_back(fix_json(file, index, fix));
    r["fixes"] = std::move(fixes);
  }
  Json props{{"category", category_label(f)}};
  if (!f.hint.empty()) props["hint"] = f.hint;
  r["properties"] = std::move(props);
  return r;
}

Json invocation_json(const std::vector<FileFailure>& failures) {
  Json inv;
  inv["executionSuccessful"] = failures.empty();
  if (failures.empty()) return inv;
  Json notes = Json::array();
  for (const FileFailure& failure : failures) {
    Json location{{"physicalLocation", Json{{"artifactLocation", artifact(failure.path)}}}};
    notes.push_back(Json{{"level", "error"},
                         {"message", text(failure.error)},
                         {"locations", Json::array({std::move(location)})}});
  }
  inv["toolExecutionNotifications"] = std::move(notes);
  return inv;
}

bool is_unreserved(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
         c == '-' || c == '.' || c == '_' || c == '~' || c == '/';
}

}  // namespace

std::string artifact_uri(std::string_view path) {
  std::string out = path.starts_with("/") ? "file://" : "";
  for (char ch : path) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (is_unreserved(c)) {
      out += static_cast<char>(c);
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      out += buf;
    }
  }
  return out;
}

namespace {

// The document is root -> runs[0] -> results[i]: each result is rendered four levels deep when
// its file arrives; the invocation (the failures) and the rest are written at finish.
class SarifReportWriter final : public ReportWriter {
 public:
  SarifReportWriter(std::ostream& out, std::string_view tool_version, std::span<const RuleInfo> rules)
      : out_(out), tool_version_(tool_version), rules_(rules) {}

  void file(const FileFindings& file) override {
    if (file.findings.empty()) return;
    LineIndex index(file.text);
    for (const Finding& f : file.findings)
      results_.push_back(json_layout::nested(result_json(file, index, f, rules_), 4));
  }

  void finish(const ReportTotals& totals) override {
    std::vector<json_layout::Member> run;
    run.emplace_back("tool", json_layout::nested(Json{{"driver", driver_json(tool_version_, rules_)}}, 3));
    run.emplace_back("invocations",
                     json_layout::nested(Json::array({invocation_json(totals.failures)}), 3));
    run.emplace_back("columnKind", json_layout::nested("utf16CodeUnits", 3));
    run.emplace_back("results", json_layout::array(results_, 3));
    std::vector<json_layout::Member> root;
    root.emplace_back("$schema", json_layout::nested(kSarifSchemaUri, 1));
    root.emplace_back("version", json_layout::nested("2.1.0", 1));
    root.emplace_back("runs", json_layout::array({json_layout::object(run, 2)}, 1));
    out_ << json_layout::object(root, 0) << "\n";
  }

 private:
  std::ostream& out_;
  std::string tool_version_;
  std::span<const RuleInfo> rules_;
  std::vector<std::string> results_;
};

}  // namespace

std::unique_ptr<ReportWriter> make_sarif_writer(std::ostream& out, std::string_view tool_version,
                                                std::span<const RuleInfo> rules) {
  return std::make_unique<SarifReportWriter>(out, tool_version, rules);
}

Json sarif_report(const CheckReport& report, std::string_view tool_version,
                  std::span<const RuleInfo> rules) {
  std::ostringstream out;
  write_sarif_report(report, tool_version, out, rules);
  return Json::parse(out.str());
}

void write_sarif_report(const CheckReport& report, std::string_view tool_version,
                        std::ostream& out, std::span<const RuleInfo> rules) {
  SarifReportWriter writer(out, tool_version, rules);
  write_report(report, writer);
}

}  // namespace preflight::server
