// What the client said it can do in `initialize`, reduced to the choices the server makes.
// Every flag defaults to the LSP 3.17 meaning of an absent capability (false / utf-16).
#pragma once

#include <nlohmann/json.hpp>

#include "analysis/line_index.h"

namespace preflight::lsp {

struct ClientCapabilities {
  analysis::ColumnUnit encoding = analysis::ColumnUnit::Utf16Units;  // negotiated
  bool pull_diagnostics = false;       // textDocument.diagnostic: the client pulls; no push
  bool diagnostic_refresh = false;     // workspace.diagnostics.refreshSupport
  bool related_information = false;    // relatedInformation: else the chain goes in the message
  bool code_description = false;       // codeDescriptionSupport
  bool document_changes = false;       // workspace.workspaceEdit.documentChanges
  bool markdown_hover = false;         // textDocument.hover.contentFormat has markdown
  bool work_done_progress = false;     // window.workDoneProgress
  bool configuration = false;          // workspace.configuration (the server may pull)
  bool watched_files_registration = false;  // didChangeWatchedFiles.dynamicRegistration
  bool code_action_literals = false;   // codeActionLiteralSupport (else: Commands only)
  bool code_action_resolve_edit = false;  // codeAction.resolveSupport.properties has "edit"
  bool code_lens_refresh = false;      // workspace.codeLens.refreshSupport
};

ClientCapabilities parse_client_capabilities(const nlohmann::json& initialize_params);

// "utf-8" / "utf-16" / "utf-32" as LSP spells them.
const char* encoding_name(analysis::ColumnUnit unit);

}  // namespace preflight::lsp
