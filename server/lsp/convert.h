// Byte ranges of the core <-> LSP positions in the negotiated encoding, and findings ->
// LSP Diagnostic objects. The core speaks bytes; this is the one place that converts.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "analysis/findings.h"
#include "analysis/line_index.h"
#include "rules/engine.h"
#include "server/lsp/client_capabilities.h"

namespace preflight::lsp {

using json = nlohmann::json;

// A text with its line index and the encoding positions are counted in.
class PositionMap {
 public:
  PositionMap(std::string_view text, analysis::ColumnUnit unit) : text_(text), lines_(text), unit_(unit) {}
  // Reads client positions on lines up to `last_line` only (an edit's range): the rest of the
  // document is not indexed, so `position` / `range` / `line_of` must not be asked past it.
  PositionMap(std::string_view text, analysis::ColumnUnit unit, uint32_t last_line)
      : text_(text), lines_(text, last_line), unit_(unit) {}
  PositionMap(const PositionMap&) = delete;
  PositionMap& operator=(const PositionMap&) = delete;

  json position(uint32_t offset) const;
  json range(analysis::ByteRange r) const;
  // A client position -> byte offset; lines past the end clamp to the end of the text, columns
  // past the end of a line to the line end. nullopt when `position` is not {line, character}.
  std::optional<uint32_t> offset(const json& position) const;
  std::optional<analysis::ByteRange> byte_range(const json& range) const;
  uint32_t line_of(uint32_t offset) const { return lines_.to_line_column(offset, unit_).line; }
  const analysis::LineIndex& lines() const { return lines_; }
  std::string_view text() const { return text_; }

 private:
  std::string_view text_;
  analysis::LineIndex lines_;
  analysis::ColumnUnit unit_;
};

// 1 error, 2 warning, 3 information (notes).
int lsp_severity(analysis::Severity s);

struct DiagnosticContext {
  std::string_view uri;
  std::string_view display_name;  // the file name, for evidence folded into the message
  const PositionMap& map;
  const ClientCapabilities& caps;
  const std::map<std::string, analysis::Severity>& severity_overrides;
};

// Everything the check produced, as LSP diagnostics, in report order: findings, then one
// hint for each unused `# preflight: ignore[...]` (tagged Unnecessary), and one information
// diagnostic at the top when the file was not analysed (not text) or too deep to analyse.
json diagnostics_for(const rules::CheckResult& result, const DiagnosticContext& ctx);

// The one information diagnostic of a file that was not analysed, at its start.
json not_analysed_diagnostic(const std::string& reason);

json finding_to_diagnostic(const analysis::Finding& f, std::size_t index, const DiagnosticContext& ctx);

// The file name of a file:// URI (for display), or the URI itself.
std::string display_name_of(std::string_view uri);

}  // namespace preflight::lsp
