// One analysed version of an open document: the text, its positions, what the check found and
// the diagnostics sent for it. Immutable once built, so requests on any thread can read it
// while the document moves on.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "rules/engine.h"
#include "server/lsp/client_capabilities.h"
#include "server/lsp/convert.h"
#include "server/lsp/settings.h"
#include "server/lsp/vram.h"

namespace preflight::lsp {

struct Snapshot {
  Snapshot(std::string uri_, int version_, std::string text_, analysis::ColumnUnit unit,
           rules::CheckResult result_, std::shared_ptr<const EffectiveSettings> settings_,
           const ClientCapabilities& caps);
  Snapshot(const Snapshot&) = delete;
  Snapshot& operator=(const Snapshot&) = delete;

  const std::string uri;
  const int version;
  const std::string text;
  const PositionMap map;  // views `text`
  const rules::CheckResult result;
  const std::shared_ptr<const EffectiveSettings> settings;
  const json diagnostics;
  const std::string result_id;  // changes exactly when `diagnostics` change

  // The VRAM estimates of this version's jobs, computed on first use (a code lens or hover
  // request), never on a keystroke: the remediation search costs more than the check.
  // Thread-safe; the value never changes once computed.
  const std::vector<VramJob>& vram() const;

 private:
  mutable std::once_flag vram_once_;
  mutable std::vector<VramJob> vram_;
};

// Findings after severity overrides, as the user sees them (hover and actions agree with the
// diagnostics).
analysis::Severity shown_severity(const analysis::Finding& f, const EffectiveSettings& s);

}  // namespace preflight::lsp
