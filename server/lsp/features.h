// The request handlers that only read an analysed snapshot: code actions and hover. Pure
// functions of (snapshot, params, client capabilities) -> the JSON result.
#pragma once

#include <nlohmann/json.hpp>

#include "server/lsp/client_capabilities.h"
#include "server/lsp/snapshot.h"

namespace preflight::lsp {

inline constexpr const char* kFixAllKind = "source.fixAll.preflight";

// textDocument/codeAction: for each finding overlapping the range, its fixes (the safe one
// preferred, unsafe ones titled as such) and "Ignore TGxxx on this line"; an action two
// findings share (same title and edit) is offered once, naming both diagnostics; plus
// source.fixAll.preflight when the document has safe fixes. Honours context.only.
nlohmann::json code_actions(const Snapshot& doc, const nlohmann::json& params, const ClientCapabilities& caps);

// A WorkspaceEdit of `edits` (LSP TextEdits) against `version` of `uri`: documentChanges when
// the client supports them, else changes.
nlohmann::json workspace_edit(const std::string& uri, int version, nlohmann::json edits, const ClientCapabilities& caps);

// The edits of every safe fix that can be applied together (what `check --fix` applies).
nlohmann::json fix_all_edits(const Snapshot& doc);

// The edit that adds `code` to the suppression comment of the line holding `offset`
// (extending an existing `# preflight: ignore[...]`, else appending one).
nlohmann::json ignore_edit(const Snapshot& doc, uint32_t offset, const std::string& code);

// textDocument/hover over a finding: the rule, why it costs, the evidence chain, the fix.
// Findings of one rule under the cursor share the rule's explanation. null when the
// position is on no finding.
nlohmann::json hover(const Snapshot& doc, const nlohmann::json& params, const ClientCapabilities& caps);

}  // namespace preflight::lsp
