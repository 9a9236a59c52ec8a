#include "server/lsp/vram.h"

#include <algorithm>
#include <cctype>
#include <string>

#include "estimator/catalog.h"
#include "estimator/hardware.h"
#include "server/cli/deepspeed_file.h"
#include "server/lsp/features.h"
#include "server/lsp/settings.h"
#include "server/lsp/snapshot.h"

namespace preflight::lsp {

using json = nlohmann::json;
namespace est = preflight::estimator;

std::vector<VramJob> estimate_jobs(std::string_view text, const EffectiveSettings& settings,
                                   const std::optional<std::filesystem::path>& file) {
  std::optional<est::Target> target;
  if (settings.target_gpu) {
    std::string error;
    target = est::resolve_target(est::builtin_catalog(), *settings.target_gpu, std::nullopt, error);
  }
  std::vector<VramJob> out;
  for (est::ScriptJob& job : est::read_jobs(text)) {
    if (file) server::apply_script_deepspeed(job, *file);
    est::EstimateReport report = est::build_report(job.spec, target, /*compat_mode=*/false);
    out.push_back({std::move(job), std::move(report)});
  }
  return out;
}

namespace {

// The anchor's line, as a zero-width range at its start: lenses and hovers sit on that line.
json anchor_range(const Snapshot& doc, const est::ScriptJob& job) { return doc.map.range(job.anchor); }

// Without a target GPU there is no verdict to give ("? unknown" for every new user): the
// lens says how to set one, with the names the editors and the project file use.
constexpr std::string_view kSetTargetHint =
    "set a target GPU for a verdict: preflight.targetGpu, or target_gpu in [tool.preflight]";

std::string lens_title(const est::EstimateReport& report) {
  if (report.estimate.target || !report.estimate.known || report.compat_mode) return est::code_lens_title(report);
  return est::peak_text(report) + " · " + std::string(kSetTargetHint);
}

json show_command(const Snapshot& doc, std::size_t index, const est::EstimateReport& report) {
  return {{"title", lens_title(report)},
          {"command", kShowVramReport},
          {"arguments", json::array({{{"uri", doc.uri}, {"job", index}, {"version", doc.version}}})}};
}

// Where hovering shows the job's estimate: the entry point, and each line a field came from
// (the model construction, the optimizer, the batch-size binding, ...).
bool hovers_job(const Snapshot& doc, const VramJob& v, uint32_t at) {
  if (at >= v.job.anchor.begin && at <= v.job.anchor.end) return true;
  const uint32_t line = doc.map.line_of(at);
  for (const est::FieldView& f : est::job_fields(v.job.spec))
    if (f.source.range && (f.source.kind == est::SourceKind::Script || f.source.kind == est::SourceKind::Unknown) &&
        doc.map.line_of(f.source.range->begin) == line)
      return true;
  return false;
}

std::string plain(std::string markdown) {
  std::string out;
  for (char c : markdown)
    if (c != '*' && c != '`') out += c;
  return out;
}

bool is_integer_literal(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == '_'; });
}

bool overlaps(analysis::ByteRange a, analysis::ByteRange b) { return a.begin <= b.end && b.begin <= a.end; }

}  // namespace

json code_lenses(const Snapshot& doc) {
  json lenses = json::array();
  const std::vector<VramJob>& jobs = doc.vram();
  for (std::size_t i = 0; i < jobs.size(); ++i)
    lenses.push_back({{"range", anchor_range(doc, jobs[i].job)}, {"command", show_command(doc, i, jobs[i].report)}});
  return lenses;
}

std::optional<json> vram_hover(const Snapshot& doc, const json& params, const ClientCapabilities& caps) {
  std::optional<uint32_t> at = params.contains("position") ? doc.map.offset(params["position"]) : std::nullopt;
  if (!at) return std::nullopt;
  for (const VramJob& v : doc.vram()) {
    if (!hovers_job(doc, v, *at)) continue;
    std::string md = "**" + v.job.entry_point + "**\n\n" + est::hover_markdown(v.report);
    return json{{"contents", {{"kind", caps.markdown_hover ? "markdown" : "plaintext"}, {"value", caps.markdown_hover ? md : plain(md)}}}};
  }
  return std::nullopt;
}

json vram_report(const Snapshot& doc, std::size_t index) {
  const std::vector<VramJob>& jobs = doc.vram();
  if (index >= jobs.size()) return nullptr;
  const VramJob& v = jobs[index];
  return {{"uri", doc.uri},
          {"version", doc.version},
          {"entryPoint", v.job.entry_point},
          {"range", anchor_range(doc, v.job)},
          {"markdown", "**" + v.job.entry_point + "**\n\n" + est::hover_markdown(v.report, 10)},
          {"report", est::report_json(v.report)}};
}

json vram_code_actions(const Snapshot& doc, const json& params, const ClientCapabilities& caps) {
  json actions = json::array();
  std::optional<analysis::ByteRange> at;
  if (params.contains("range")) at = doc.map.byte_range(params["range"]);
  if (!at) return actions;
  for (const VramJob& v : doc.vram()) {
    const est::Field<int>& batch = v.job.spec.batch_size;
    const auto& largest = v.report.plan.inverse.largest_batch;
    if (batch.source.kind != est::SourceKind::Script || !batch.source.range || !largest || *largest >= batch.value ||
        !est::band_is_failure(v.report.estimate.band))
      continue;
    const analysis::ByteRange literal = *batch.source.range;
    // Offered on the literal's line (where the cursor is when the lens or hover says OOM) and
    // on the entry point.
    const bool on_literal_line = doc.map.line_of(at->begin) <= doc.map.line_of(literal.begin) &&
                                 doc.map.line_of(literal.begin) <= doc.map.line_of(at->end);
    if (!on_literal_line && !overlaps(v.job.anchor, *at)) continue;
    if (!is_integer_literal(doc.text.substr(literal.begin, literal.end - literal.begin))) continue;
    json edit = {{"range", doc.map.range(literal)}, {"newText", std::to_string(*largest)}};
    actions.push_back({{"title", "preflight: set the batch size to " + std::to_string(*largest) + " (the largest that fits " +
                                     v.report.estimate.target->display_name + ")"},
                       {"kind", "refactor.rewrite"},
                       {"edit", workspace_edit(doc.uri, doc.version, json::array({edit}), caps)}});
  }
  return actions;
}

}  // namespace preflight::lsp
