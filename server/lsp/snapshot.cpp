#include "server/lsp/snapshot.h"

#include <functional>

#include "server/lsp/uri.h"

namespace preflight::lsp {

namespace {

json build_diagnostics(const std::string& uri, const PositionMap& map, const rules::CheckResult& result,
                       const EffectiveSettings& settings, const ClientCapabilities& caps) {
  std::string name = display_name_of(uri);
  DiagnosticContext ctx{uri, name, map, caps, settings.severity};
  return diagnostics_for(result, ctx);
}

// A digest of what the client would display: equal diagnostics give an equal id, so a pull
// after an edit that changed nothing answers `unchanged`.
std::string digest(const json& diagnostics) {
  // `replace`: a message quoting source never makes the digest throw (the transport replaces too).
  std::size_t h = std::hash<std::string>{}(diagnostics.dump(-1, ' ', false, json::error_handler_t::replace));
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016zx", h);
  return buf;
}

}  // namespace

Snapshot::Snapshot(std::string uri_, int version_, std::string text_, analysis::ColumnUnit unit,
                   rules::CheckResult result_, std::shared_ptr<const EffectiveSettings> settings_,
                   const ClientCapabilities& caps)
    : uri(std::move(uri_)),
      version(version_),
      text(std::move(text_)),
      map(text, unit),
      result(std::move(result_)),
      settings(std::move(settings_)),
      diagnostics(build_diagnostics(uri, map, result, *settings, caps)),
      result_id(digest(diagnostics)) {}

const std::vector<VramJob>& Snapshot::vram() const {
  std::call_once(vram_once_, [this] {
    if (result.status == rules::FileStatus::Analyzed) vram_ = estimate_jobs(text, *settings, uri_to_path(uri));
  });
  return vram_;
}

analysis::Severity shown_severity(const analysis::Finding& f, const EffectiveSettings& s) {
  auto it = s.severity.find(f.code);
  return it == s.severity.end() ? f.severity : it->second;
}

}  // namespace preflight::lsp
