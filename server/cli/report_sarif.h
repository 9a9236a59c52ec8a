// SARIF 2.1.0 (rules.md §9.8, extended): one run whose tool.driver lists every rule of the
// catalogue (id, name = slug, short and full descriptions, helpUri into docs/rules.md, the
// default level, category as a property and a tag); one result per finding with ruleId,
// ruleIndex, level, the message, one physical location, the evidence chain as
// relatedLocations and every fix as artifactChanges. Lines are 1-based; columns are 1-based
// UTF-16 code units (run.columnKind "utf16CodeUnits"), end columns exclusive. Files that
// could not be checked are toolExecutionNotifications of the one invocation, whose
// executionSuccessful is false then. Nothing depends on the clock: equal input, equal bytes.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <span>
#include <string>
#include <string_view>

#include "server/cli/check_report.h"
#include "server/cli/rule_catalogue.h"

namespace preflight::server {

inline constexpr std::string_view kSarifSchemaUri = "https://json.schemastore.org/sarif-2.1.0.json";

// `rules` is what tool.driver lists and ruleIndex points into: the catalogue, except in tests.
// Streams: each result is rendered as its file arrives, the document written at finish.
std::unique_ptr<ReportWriter> make_sarif_writer(std::ostream& out, std::string_view tool_version,
                                                std::span<const RuleInfo> rules = rule_catalogue());
// The document the writer writes, parsed.
nlohmann::ordered_json sarif_report(const CheckReport& report, std::string_view tool_version,
                                    std::span<const RuleInfo> rules = rule_catalogue());
// Pretty-printed; bytes that are not UTF-8 become U+FFFD.
void write_sarif_report(const CheckReport& report, std::string_view tool_version,
                        std::ostream& out, std::span<const RuleInfo> rules = rule_catalogue());

// A discovered path as a SARIF artifact URI: relative paths stay relative (forward slashes,
// percent-encoded), absolute ones become file:// URIs.
std::string artifact_uri(std::string_view path);

}  // namespace preflight::server
