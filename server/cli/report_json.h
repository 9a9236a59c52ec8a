// The machine-readable report (rules.md §9.6): `version`, `summary`, `diagnostics`,
// `failures`, with the reference's field names unchanged, plus `related` (the evidence chain)
// and `fixes` (every fix with its safety and edits) on each diagnostic; with
// --explain-silence, a top-level `silences` array (code, reason, path, span, related). Keys
// keep the order written here.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>

#include "server/cli/check_report.h"

namespace preflight::server {

inline constexpr int kJsonReportVersion = 1;

// Streams: each file's entries are rendered as it arrives, the document written at finish.
std::unique_ptr<ReportWriter> make_json_writer(std::ostream& out);
// The document the writer writes, parsed (tests, callers that want a tree).
nlohmann::ordered_json json_report(const CheckReport& report);
// Pretty-printed; bytes that are not UTF-8 (in messages or edit text) become U+FFFD.
void write_json_report(const CheckReport& report, std::ostream& out);

}  // namespace preflight::server
