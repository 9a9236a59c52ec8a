#include "server/lsp/features.h"

#include <algorithm>
#include <span>
#include <vector>

#include "server/cli/fix_apply.h"
#include "server/cli/rule_catalogue.h"

namespace preflight::lsp {

using json = nlohmann::json;
using analysis::ByteRange;
using analysis::Finding;

namespace {

bool overlaps(ByteRange a, ByteRange b) { return a.begin <= b.end && b.begin <= a.end; }

// context.only filters by kind prefix: "source" selects "source.fixAll.preflight".
bool wanted(const json& params, std::string_view kind) {
  const json* only = nullptr;
  if (params.contains("context") && params["context"].is_object() && params["context"].contains("only"))
    only = &params["context"]["only"];
  if (!only || !only->is_array()) return kind == "quickfix";  // fix-all only on request or
                                                              // when nothing is filtered
  for (const json& k : *only) {
    if (!k.is_string()) continue;
    std::string prefix = k.get<std::string>();
    if (kind == prefix || (kind.starts_with(prefix) && kind[prefix.size()] == '.')) return true;
  }
  return false;
}

json text_edits(const std::vector<analysis::TextEdit>& edits, const PositionMap& map) {
  json out = json::array();
  for (const auto& e : edits) out.push_back({{"range", map.range(e.range)}, {"newText", e.replacement}});
  return out;
}

std::string fix_title(const analysis::Fix& fix) {
  std::string title = fix.description;
  if (!title.empty()) title[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(title[0])));
  if (fix.safety == analysis::FixSafety::Unsafe) title += " (unsafe: changes behaviour, review it)";
  return title;
}

// The first '#' outside a string literal on one line: a single-line scan (quotes, escapes).
// Triple-quoted strings that span lines are rare on a line that carries a finding; there the
// scan may miss the comment and append a second one, which still suppresses.
std::optional<std::size_t> comment_start(std::string_view line) {
  char quote = 0;
  for (std::size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quote) {
      if (c == '\\') ++i;
      else if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '#') {
      return i;
    }
  }
  return std::nullopt;
}

json action(std::string title, const char* kind, json edit) {
  return json{{"title", std::move(title)}, {"kind", kind}, {"edit", std::move(edit)}};
}

// Adds a quick fix for `diagnostic`, or, when an action with the same title and edit is
// already offered (two findings of one rule on a line share "Ignore TGxxx on this line"),
// names the diagnostic on that one instead of offering it twice.
void add_quickfix(json& actions, json a, const json& diagnostic) {
  for (json& existing : actions)
    if (existing["title"] == a["title"] && existing["edit"] == a["edit"]) {
      existing["diagnostics"].push_back(diagnostic);
      if (a.value("isPreferred", false)) existing["isPreferred"] = true;
      return;
    }
  a["diagnostics"] = json::array({diagnostic});
  actions.push_back(std::move(a));
}

}  // namespace

json workspace_edit(const std::string& uri, int version, json edits, const ClientCapabilities& caps) {
  if (caps.document_changes)
    return {{"documentChanges", json::array({{{"textDocument", {{"uri", uri}, {"version", version}}},
                                              {"edits", std::move(edits)}}})}};
  return {{"changes", {{uri, std::move(edits)}}}};
}

json fix_all_edits(const Snapshot& doc) {
  const auto& findings = doc.result.findings;
  server::FixPlan plan = server::plan_safe_fixes(doc.text, std::span<const Finding>(findings));
  std::vector<analysis::TextEdit> edits;
  for (std::size_t i : plan.applied) {
    const analysis::Fix* fix = findings[i].safe_fix();
    if (fix) edits.insert(edits.end(), fix->edits.begin(), fix->edits.end());
  }
  std::sort(edits.begin(), edits.end(), [](const auto& a, const auto& b) { return a.range.begin < b.range.begin; });
  return text_edits(edits, doc.map);
}

json ignore_edit(const Snapshot& doc, uint32_t offset, const std::string& code) {
  const auto& lines = doc.map.lines();
  uint32_t line = doc.map.line_of(offset);
  uint32_t start = lines.line_start(line);
  std::string_view text = lines.line_text(line);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.remove_suffix(1);
  if (auto hash = comment_start(text)) {
    constexpr std::string_view kMarker = "preflight: ignore[";
    std::size_t marker = text.find(kMarker, *hash);
    std::size_t close = marker == std::string_view::npos ? marker : text.find(']', marker);
    if (close != std::string_view::npos) {
      uint32_t at = start + static_cast<uint32_t>(close);
      return text_edits({{{at, at}, ", " + code}}, doc.map);
    }
  }
  uint32_t end = start + static_cast<uint32_t>(text.size());
  return text_edits({{{end, end}, "  # preflight: ignore[" + code + "]"}}, doc.map);
}

// The client names the diagnostics it wants actions for (Neovim 0.7 sends the cursor as the
// range and every diagnostic of the line): one of ours is meant when code and range match.
namespace {
bool in_context(const json& params, const json& diagnostic) {
  if (!params.contains("context") || !params["context"].is_object()) return false;
  const json& listed = params["context"].value("diagnostics", json::array());
  if (!listed.is_array()) return false;
  for (const json& d : listed)
    if (d.is_object() && d.value("code", json()) == diagnostic["code"] && d.value("range", json()) == diagnostic["range"])
      return true;
  return false;
}
}  // namespace

json code_actions(const Snapshot& doc, const json& params, const ClientCapabilities& caps) {
  json actions = json::array();
  std::optional<ByteRange> range =
      params.contains("range") ? doc.map.byte_range(params["range"]) : std::nullopt;
  if (!range) return actions;
  const auto& findings = doc.result.findings;
  if (wanted(params, "quickfix")) {
    for (std::size_t i = 0; i < findings.size(); ++i) {
      const Finding& f = findings[i];
      if (!overlaps(f.range, *range) && !in_context(params, doc.diagnostics[i])) continue;
      for (const auto& fix : f.fixes) {
        if (fix.safety == analysis::FixSafety::DisplayOnly || fix.edits.empty()) continue;
        json a = action(fix_title(fix), "quickfix",
                        workspace_edit(doc.uri, doc.version, text_edits(fix.edits, doc.map), caps));
        if (&fix == f.safe_fix()) a["isPreferred"] = true;
        add_quickfix(actions, std::move(a), doc.diagnostics[i]);
      }
      add_quickfix(actions,
                   action("Ignore " + f.code + " on this line", "quickfix",
                          workspace_edit(doc.uri, doc.version, ignore_edit(doc, f.range.begin, f.code), caps)),
                   doc.diagnostics[i]);
    }
  }
  if (wanted(params, kFixAllKind)) {
    json edits = fix_all_edits(doc);
    if (!edits.empty())
      actions.push_back(action("Fix all safe preflight findings", kFixAllKind,
                               workspace_edit(doc.uri, doc.version, std::move(edits), caps)));
  }
  return actions;
}

namespace {

std::string severity_word(analysis::Severity s) { return std::string(analysis::severity_name(s)); }

// The explanation's first paragraph: the why, without the long examples.
std::string_view first_paragraph(std::string_view text) {
  std::size_t end = text.find("\n\n");
  return end == std::string_view::npos ? text : text.substr(0, end);
}

// One finding's own part: its evidence chain, hint and quick fixes.
std::string finding_details(const Snapshot& doc, const Finding& f, bool markdown) {
  std::string bold = markdown ? "**" : "";
  std::string out;
  if (!f.evidence.empty()) {
    out += "\n" + bold + "Evidence" + bold + "\n";
    for (std::size_t i = 0; i < f.evidence.size(); ++i)
      out += std::to_string(i + 1) + ". line " + std::to_string(doc.map.line_of(f.evidence[i].range.begin) + 1) +
             ": " + f.evidence[i].message + "\n";
  }
  if (!f.hint.empty()) out += "\n" + bold + "Fix" + bold + ": " + f.hint + "\n";
  for (const auto& fix : f.fixes)
    if (fix.safety != analysis::FixSafety::DisplayOnly)
      out += "- quick fix: " + fix.description +
             (fix.safety == analysis::FixSafety::Safe ? " (safe)" : " (unsafe: review it)") + "\n";
  return out;
}

// The findings of one rule under the cursor: the rule and its explanation once, then each
// finding's message and details (stacked findings repeated the explanation, 3,300
// characters for three).
std::string rule_hover(const Snapshot& doc, const std::vector<const Finding*>& group, bool markdown) {
  const std::string& code = group.front()->code;
  const server::RuleInfo* info = server::find_rule_info(code);
  std::string bold = markdown ? "**" : "";
  std::string out = bold + code + (info ? " " + std::string(info->slug) : "") + bold;
  auto severity = [&](const Finding& f) { return severity_word(shown_severity(f, *doc.settings)); };
  if (group.size() == 1) {
    const Finding& f = *group.front();
    out += " (" + severity(f) + ")\n\n" + f.message + "\n";
    if (info) out += "\n" + std::string(first_paragraph(info->explanation)) + "\n";
    return out + finding_details(doc, f, markdown);
  }
  out += ": " + std::to_string(group.size()) + " findings\n";
  if (info) out += "\n" + std::string(first_paragraph(info->explanation)) + "\n";
  for (std::size_t i = 0; i < group.size(); ++i) {
    const Finding& f = *group[i];
    out += "\n" + bold + std::to_string(i + 1) + ". " + severity(f) + bold + ": " + f.message + "\n" +
           finding_details(doc, f, markdown);
  }
  return out;
}

}  // namespace

json hover(const Snapshot& doc, const json& params, const ClientCapabilities& caps) {
  std::optional<uint32_t> at = params.contains("position") ? doc.map.offset(params["position"]) : std::nullopt;
  if (!at) return nullptr;
  // The findings under the cursor, grouped by rule in order of first appearance.
  std::vector<std::vector<const Finding*>> groups;
  std::optional<ByteRange> span;
  for (const Finding& f : doc.result.findings) {
    if (f.range.begin > *at || *at > f.range.end) continue;
    auto same_rule = [&](const auto& g) { return g.front()->code == f.code; };
    auto group = std::find_if(groups.begin(), groups.end(), same_rule);
    if (group == groups.end()) groups.push_back({&f});
    else group->push_back(&f);
    span = span ? ByteRange{std::min(span->begin, f.range.begin), std::max(span->end, f.range.end)} : f.range;
  }
  if (groups.empty()) return nullptr;
  std::string value;
  for (const auto& group : groups) {
    if (!value.empty()) value += caps.markdown_hover ? "\n---\n\n" : "\n\n";
    value += rule_hover(doc, group, caps.markdown_hover);
  }
  return {{"contents", {{"kind", caps.markdown_hover ? "markdown" : "plaintext"}, {"value", value}}},
          {"range", doc.map.range(*span)}};
}

}  // namespace preflight::lsp
