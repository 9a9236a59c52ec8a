#include "server/lsp/convert.h"

#include "server/cli/rule_catalogue.h"

namespace preflight::lsp {

using analysis::ByteRange;
using analysis::LineColumn;

json PositionMap::position(uint32_t offset) const {
  LineColumn lc = lines_.to_line_column(offset, unit_);
  return json{{"line", lc.line}, {"character", lc.column}};
}

json PositionMap::range(ByteRange r) const { return json{{"start", position(r.begin)}, {"end", position(r.end)}}; }

std::optional<uint32_t> PositionMap::offset(const json& position) const {
  if (!position.is_object()) return std::nullopt;
  auto line = position.find("line");
  auto character = position.find("character");
  if (line == position.end() || character == position.end() || !line->is_number_integer() ||
      !character->is_number_integer() || line->get<int64_t>() < 0 || character->get<int64_t>() < 0)
    return std::nullopt;
  uint64_t l = line->get<uint64_t>();
  if (l >= lines_.line_count()) return static_cast<uint32_t>(text_.size());
  uint64_t c = std::min<uint64_t>(character->get<uint64_t>(), UINT32_MAX);
  return lines_.to_offset({static_cast<uint32_t>(l), static_cast<uint32_t>(c)}, unit_);
}

std::optional<ByteRange> PositionMap::byte_range(const json& range) const {
  if (!range.is_object() || !range.contains("start") || !range.contains("end")) return std::nullopt;
  auto b = offset(range["start"]);
  auto e = offset(range["end"]);
  if (!b || !e || *e < *b) return std::nullopt;
  return ByteRange{*b, *e};
}

int lsp_severity(analysis::Severity s) {
  switch (s) {
    case analysis::Severity::Error: return 1;
    case analysis::Severity::Warning: return 2;
    case analysis::Severity::Note: return 3;
  }
  return 3;
}

std::string display_name_of(std::string_view uri) {
  std::size_t slash = uri.rfind('/');
  return std::string(slash == std::string_view::npos ? uri : uri.substr(slash + 1));
}

namespace {

// clangd's shape for clients without relatedInformation: the chain, one step per line.
std::string folded_message(const analysis::Finding& f, const DiagnosticContext& ctx) {
  std::string message = f.message;
  for (const auto& step : f.evidence)
    message += "\n  " + std::string(ctx.display_name) + ":" + std::to_string(ctx.map.line_of(step.range.begin) + 1) +
               ": " + step.message;
  return message;
}

json fix_data(const analysis::Fix& fix, const PositionMap& map) {
  json edits = json::array();
  for (const auto& e : fix.edits) edits.push_back({{"range", map.range(e.range)}, {"newText", e.replacement}});
  return {{"title", fix.description}, {"safety", std::string(analysis::fix_safety_name(fix.safety))}, {"edits", edits}};
}

}  // namespace

json finding_to_diagnostic(const analysis::Finding& f, std::size_t index, const DiagnosticContext& ctx) {
  auto override_it = ctx.severity_overrides.find(f.code);
  analysis::Severity severity = override_it == ctx.severity_overrides.end() ? f.severity : override_it->second;
  json d{{"range", ctx.map.range(f.range)},
         {"severity", lsp_severity(severity)},
         {"code", f.code},
         {"source", "preflight"}};
  if (std::string href = server::rule_help_uri(f.code); !href.empty()) d["codeDescription"] = {{"href", href}};
  if (ctx.caps.related_information) {
    d["message"] = f.message;
    json related = json::array();
    for (const auto& step : f.evidence)
      related.push_back({{"location", {{"uri", std::string(ctx.uri)}, {"range", ctx.map.range(step.range)}}},
                         {"message", step.message}});
    if (!related.empty()) d["relatedInformation"] = std::move(related);
  } else {
    d["message"] = folded_message(f, ctx);
  }
  json fixes = json::array();
  for (const auto& fix : f.fixes)
    if (fix.safety != analysis::FixSafety::DisplayOnly && !fix.edits.empty()) fixes.push_back(fix_data(fix, ctx.map));
  d["data"] = {{"index", index}, {"fixes", fixes}};
  return d;
}

json not_analysed_diagnostic(const std::string& reason) {
  json start = {{"line", 0}, {"character", 0}};
  return {{"range", {{"start", start}, {"end", start}}}, {"severity", 3}, {"source", "preflight"},
          {"message", "preflight did not analyse this file: " + reason}};
}

json diagnostics_for(const rules::CheckResult& result, const DiagnosticContext& ctx) {
  json out = json::array();
  if (result.status == rules::FileStatus::NotText || result.status == rules::FileStatus::TooComplex) {
    out.push_back({{"range", ctx.map.range({0, 0})}, {"severity", 3}, {"source", "preflight"},
                   {"message", "preflight did not analyse this file: " + result.status_reason}});
    return out;
  }
  for (std::size_t i = 0; i < result.findings.size(); ++i)
    out.push_back(finding_to_diagnostic(result.findings[i], i, ctx));
  for (const auto& err : result.syntax_errors)
    if (err.message != "syntax error")  // the parser's own errors are the Python server's job
      out.push_back({{"range", ctx.map.range({err.range.begin, err.range.begin})}, {"severity", 3},
                     {"source", "preflight"}, {"message", "preflight: " + err.message}});
  for (const auto& unused : result.unused_suppressions) {
    std::string what = unused.code.empty() ? "this suppression comment" : unused.code;
    out.push_back({{"range", ctx.map.range(unused.comment)}, {"severity", 4}, {"source", "preflight"},
                   {"code", std::string(server::kUnusedSuppressionCode)},
                   {"tags", json::array({1})},
                   {"message", "unused suppression: " + what + " silences nothing here"}});
  }
  return out;
}

}  // namespace preflight::lsp
