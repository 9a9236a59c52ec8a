#include "server/lsp/client_capabilities.h"

#include <string>

namespace preflight::lsp {

namespace {

using json = nlohmann::json;

// The value at a '/'-separated path of object keys, or null.
const json& at_path(const json& root, std::initializer_list<const char*> keys) {
  static const json kNull;
  const json* node = &root;
  for (const char* key : keys) {
    if (!node->is_object()) return kNull;
    auto it = node->find(key);
    if (it == node->end()) return kNull;
    node = &*it;
  }
  return *node;
}

bool flag(const json& root, std::initializer_list<const char*> keys) {
  const json& v = at_path(root, keys);
  return v.is_boolean() && v.get<bool>();
}

bool array_has(const json& array, std::string_view value) {
  if (!array.is_array()) return false;
  for (const json& v : array)
    if (v.is_string() && v.get<std::string>() == value) return true;
  return false;
}

}  // namespace

ClientCapabilities parse_client_capabilities(const json& params) {
  ClientCapabilities caps;
  const json& c = at_path(params, {"capabilities"});
  // utf-8 is exact for tree-sitter's byte columns and cheapest, so it wins when offered.
  const json& encodings = at_path(c, {"general", "positionEncodings"});
  if (array_has(encodings, "utf-8")) caps.encoding = analysis::ColumnUnit::Utf8Bytes;
  caps.pull_diagnostics = at_path(c, {"textDocument", "diagnostic"}).is_object();
  caps.diagnostic_refresh = flag(c, {"workspace", "diagnostics", "refreshSupport"});
  // 3.17 declares it under publishDiagnostics only; 3.18 repeats it under diagnostic.
  caps.related_information = flag(c, {"textDocument", "publishDiagnostics", "relatedInformation"}) ||
                             flag(c, {"textDocument", "diagnostic", "relatedInformation"});
  caps.code_description = flag(c, {"textDocument", "publishDiagnostics", "codeDescriptionSupport"}) ||
                          flag(c, {"textDocument", "diagnostic", "codeDescriptionSupport"});
  caps.document_changes = flag(c, {"workspace", "workspaceEdit", "documentChanges"});
  caps.markdown_hover = array_has(at_path(c, {"textDocument", "hover", "contentFormat"}), "markdown");
  caps.work_done_progress = flag(c, {"window", "workDoneProgress"});
  caps.configuration = flag(c, {"workspace", "configuration"});
  caps.watched_files_registration = flag(c, {"workspace", "didChangeWatchedFiles", "dynamicRegistration"});
  caps.code_action_literals = at_path(c, {"textDocument", "codeAction", "codeActionLiteralSupport"}).is_object();
  caps.code_action_resolve_edit =
      array_has(at_path(c, {"textDocument", "codeAction", "resolveSupport", "properties"}), "edit");
  caps.code_lens_refresh = flag(c, {"workspace", "codeLens", "refreshSupport"});
  return caps;
}

const char* encoding_name(analysis::ColumnUnit unit) {
  switch (unit) {
    case analysis::ColumnUnit::Utf8Bytes: return "utf-8";
    case analysis::ColumnUnit::Utf16Units: return "utf-16";
    case analysis::ColumnUnit::CodePoints: return "utf-32";
  }
  return "utf-16";
}

}  // namespace preflight::lsp
