#include "estimator/report.h"

#include <algorithm>
#include <cstdio>

namespace preflight::estimator {
namespace {

constexpr double kGiB = 1073741824.0;
constexpr double kMiB = 1048576.0;

std::string text_of(bool b) { return b ? "true" : "false"; }
template <class T>
std::string text_of(const std::optional<T>& v) {
  return v ? std::to_string(*v) : "none";
}
std::string join(const std::vector<std::string>& v, std::string_view sep) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : std::string(sep)) + s;
  return out;
}

const char* band_symbol(Band b) {
  switch (b) {
    case Band::Fits: return "✓ fits";
    case Band::Tight: return "~ may not fit";
    case Band::MayNotFit: return "? may not fit";
    case Band::LikelyOom:
    case Band::CertainOom: return "✗ OOM";
    case Band::Unknown: break;
  }
  return "? unknown";
}

std::string percent(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f%%", 100 * v);
  return buf;
}

// The breakdown in the reference's nine keys (activations include logits and the backward
// workspace, as the reference's activations include its LM head), then our extra keys.
nlohmann::ordered_json breakdown_json(const Estimate& e) {
  nlohmann::ordered_json b;
  b["weights"] = e.term_bytes("weights");
  b["gradients"] = e.term_bytes("gradients");
  b["optimizer_state"] = e.term_bytes("optimizer_state");
  b["master_weights"] = e.term_bytes("master_weights");
  b["autocast_cache"] = e.term_bytes("autocast_cache");
  b["activations"] = e.term_bytes("activations") + e.term_bytes("logits") + e.term_bytes("backward_workspace");
  b["KV_cache"] = e.term_bytes("KV_cache");
  b["CUDA_context"] = e.term_bytes("CUDA_context");
  b["fragmentation"] = e.term_bytes("fragmentation");
  b["optimizer_step_temporaries"] = e.term_bytes("optimizer_step_temporaries");
  b["communication_buffers"] = e.term_bytes("communication_buffers");
  b["gathered_parameters"] = e.term_bytes("gathered_parameters");
  b["dequantization"] = e.term_bytes("dequantization");
  return b;
}

nlohmann::ordered_json remediation_json(const Remediation& r) {
  return {{"label", r.label},
          {"saved_bytes", r.saved},
          {"new_total_bytes", r.new_total},
          {"fits", r.fits},
          {"disruption", r.disruption},
          {"note", r.note},
          {"changes", r.changes},
          {"new_interval_bytes", {r.new_low, r.new_high}},
          {"new_band", band_name(r.new_band)},
          {"cheapest_fitting", r.cheapest_fitting},
          {"largest_single", r.largest_single}};
}

nlohmann::ordered_json config_json(const EstimateReport& r) {
  const JobSpec& j = r.job;
  const Run& run = r.estimate.run;
  nlohmann::ordered_json c;
  c["precision"] = precision_name(j.precision.value);
  c["optimizer"] = optimizer_name(j.optimizer.value);
  c["batch_size"] = j.batch_size.value;
  c["seq_len"] = j.seq_len.value ? nlohmann::ordered_json(*j.seq_len.value) : nlohmann::ordered_json(nullptr);
  c["image_size"] = j.image_size.value ? nlohmann::ordered_json(*j.image_size.value) : nlohmann::ordered_json(nullptr);
  c["accumulation_steps"] = j.accumulation_steps.value;
  c["gradient_checkpointing"] = j.gradient_checkpointing.value;
  c["flash_attention"] = run.attention != Attention::Eager;
  c["world_size"] = r.estimate.known ? run.world : j.world_size.value.value_or(1);
  c["sharding"] = sharding_name(j.sharding.value);
  c["offload_optimizer"] = j.offload_optimizer.value;
  c["offload_params"] = j.offload_params.value;
  c["generation"] = j.generation.value;
  c["max_context"] = j.max_context.value ? nlohmann::ordered_json(*j.max_context.value) : nlohmann::ordered_json(nullptr);
  c["frozen_fraction"] = j.frozen_fraction.value;
  c["inference_only"] = j.inference_only.value || j.generation.value;
  c["global_batch"] = int64_t(j.batch_size.value) * std::max(1, j.accumulation_steps.value) *
                      std::max(1, r.estimate.known ? run.world : 1);
  // preflight's additions
  c["attention"] = attention_name(r.estimate.known ? run.attention : j.attention.value);
  c["optimizer_impl"] = optimizer_impl_name(j.optimizer_impl.value);
  c["peft"] = peft_name(j.peft.value);
  c["lora_rank"] = j.lora_rank.value;
  c["quantization"] = quantization_name(r.estimate.known ? run.quantization : j.quantization.value);
  c["tensor_parallel"] = j.tensor_parallel.value;
  c["pipeline_parallel"] = j.pipeline_parallel.value;
  c["seq_len_used"] = r.estimate.known ? run.seq : 0;
  nlohmann::ordered_json sources = nlohmann::ordered_json::object();
  for (const FieldView& f : job_fields(j)) sources[f.name] = describe_source(f.source);
  c["sources"] = sources;
  return c;
}

nlohmann::ordered_json gpu_json(const Target& t, int64_t usable) {
  return {{"id", t.gpu_id},       {"name", t.display_name},       {"usable_bytes", usable},
          {"usable_basis", t.usable_basis}, {"device_count", t.device_count}, {"count_basis", t.count_basis},
          {"instance", t.instance ? nlohmann::ordered_json(*t.instance) : nlohmann::ordered_json(nullptr)},
          {"bf16", t.bf16}};
}

nlohmann::ordered_json compat_breakdown_json(const CompatEstimate& c) {
  nlohmann::ordered_json b;
  for (const Term& t : c.breakdown) b[t.key] = t.bytes;
  return b;
}

}  // namespace

std::string format_bytes(int64_t bytes) {
  char buf[48];
  const double b = double(bytes);
  if (b >= kGiB) std::snprintf(buf, sizeof buf, "%.2f GiB", b / kGiB);
  else if (b >= kMiB) std::snprintf(buf, sizeof buf, "%.0f MiB", b / kMiB);
  else if (b >= 1024) std::snprintf(buf, sizeof buf, "%.0f KiB", b / 1024);
  else std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(bytes));
  return buf;
}

std::string describe_source(const Source& s) {
  switch (s.kind) {
    case SourceKind::CommandLine: return "command line (" + s.detail + ")";
    case SourceKind::Default: return "default: " + s.detail;
    case SourceKind::Derived: return "derived: " + s.detail;
    case SourceKind::Script:
      return "script: " + s.detail;
    case SourceKind::Unknown: return "unknown: `" + s.blocking_expression + "` could not be read";
  }
  return "?";
}

std::vector<FieldView> job_fields(const JobSpec& j) {
  std::vector<FieldView> out;
  auto add = [&](std::string name, std::string value, const Source& s) { out.push_back({std::move(name), std::move(value), s}); };
  add("model", j.model.value.empty() ? "none" : j.model.value, j.model.source);
  add("params", text_of(j.params.value), j.params.source);
  add("head", std::string(head_name(j.head.value)), j.head.source);
  add("batch_size", std::to_string(j.batch_size.value), j.batch_size.source);
  add("seq_len", text_of(j.seq_len.value), j.seq_len.source);
  add("image_size", text_of(j.image_size.value), j.image_size.source);
  add("accumulation_steps", std::to_string(j.accumulation_steps.value), j.accumulation_steps.source);
  add("precision", std::string(precision_name(j.precision.value)), j.precision.source);
  add("cuda_context", j.cuda_context_bytes.value ? std::to_string(*j.cuda_context_bytes.value) + " B" : "default",
      j.cuda_context_bytes.source);
  add("quantization", std::string(quantization_name(j.quantization.value)), j.quantization.source);
  add("inference_only", text_of(j.inference_only.value), j.inference_only.source);
  add("optimizer", std::string(optimizer_name(j.optimizer.value)), j.optimizer.source);
  add("optimizer_impl", std::string(optimizer_impl_name(j.optimizer_impl.value)), j.optimizer_impl.source);
  add("grads_set_to_none", text_of(j.grads_set_to_none.value), j.grads_set_to_none.source);
  add("gradient_checkpointing", text_of(j.gradient_checkpointing.value), j.gradient_checkpointing.source);
  add("activation_offload", text_of(j.activation_offload.value), j.activation_offload.source);
  add("attention", std::string(attention_name(j.attention.value)), j.attention.source);
  add("loss", std::string(loss_impl_name(j.loss_impl.value)), j.loss_impl.source);
  add("frozen_fraction", std::to_string(j.frozen_fraction.value), j.frozen_fraction.source);
  add("trainable_params", text_of(j.trainable_params.value), j.trainable_params.source);
  add("peft", std::string(peft_name(j.peft.value)), j.peft.source);
  add("lora_rank", std::to_string(j.lora_rank.value), j.lora_rank.source);
  add("lora_targets", j.lora_targets.value.empty() ? "default" : join(j.lora_targets.value, ","), j.lora_targets.source);
  add("world_size", text_of(j.world_size.value), j.world_size.source);
  add("sharding", std::string(sharding_name(j.sharding.value)), j.sharding.source);
  add("offload_optimizer", text_of(j.offload_optimizer.value), j.offload_optimizer.source);
  add("offload_params", text_of(j.offload_params.value), j.offload_params.source);
  add("tensor_parallel", std::to_string(j.tensor_parallel.value), j.tensor_parallel.source);
  add("sequence_parallel", text_of(j.sequence_parallel.value), j.sequence_parallel.source);
  add("pipeline_parallel", std::to_string(j.pipeline_parallel.value), j.pipeline_parallel.source);
  add("generation", text_of(j.generation.value), j.generation.source);
  add("max_context", text_of(j.max_context.value), j.max_context.source);
  add("prompt_len", text_of(j.prompt_len.value), j.prompt_len.source);
  add("beams", std::to_string(j.beams.value), j.beams.source);
  add("kv_cache_dtype", j.kv_cache_dtype.value == KvCacheDtype::Fp8 ? "fp8" : "model", j.kv_cache_dtype.source);
  return out;
}

EstimateReport build_report(const JobSpec& job, const std::optional<Target>& target, bool compat_mode,
                            const RemediationOptions& options, const Catalog& catalog) {
  EstimateReport r;
  r.job = job;
  r.compat_mode = compat_mode;
  r.estimate = estimate(job, target, catalog);
  r.reference = compat_estimate(job, target, catalog);
  r.differences = compat_differences(r.estimate, r.reference);
  if (!compat_mode && target && r.estimate.known) r.plan = plan_remediations(job, r.estimate, *target, options, catalog);
  return r;
}

int64_t report_total(const EstimateReport& r) { return r.compat_mode ? r.reference.total : r.estimate.total; }
int64_t report_low(const EstimateReport& r) { return r.compat_mode ? r.reference.low : r.estimate.low; }
int64_t report_high(const EstimateReport& r) { return r.compat_mode ? r.reference.high : r.estimate.high; }
Band report_band(const EstimateReport& r) { return r.compat_mode ? r.reference.band : r.estimate.band; }

std::string peak_text(const EstimateReport& r) {
  return "peak " + format_bytes(report_total(r)) + " (" + format_bytes(report_low(r)) + "–" +
         format_bytes(report_high(r)) + ")";
}

std::string code_lens_title(const EstimateReport& r) {
  const bool known = r.compat_mode ? r.reference.known : r.estimate.known;
  if (!known) return "peak ? (" + (r.compat_mode ? r.reference.unknown_reason : r.estimate.unknown_reason) + ") ? unknown";
  std::string title = peak_text(r);
  if (r.estimate.target) title += " on " + r.estimate.target->display_name;
  return title + " " + band_symbol(report_band(r));
}

std::string hover_markdown(const EstimateReport& r, std::size_t remediation_limit) {
  const Estimate& e = r.estimate;
  if (!e.known) return "**VRAM estimate: unknown** — " + e.unknown_reason + "\n";
  std::string md = "**VRAM estimate** " + code_lens_title(r) + "\n\n";
  md += "Model `" + e.model.id + "` (" + std::to_string(e.model.params) + " parameters, " +
        std::string(confidence_name(e.model.confidence)) + "); peak phase **" + e.peak()->name + "**\n\n";
  md += "| term | bytes | ± | source |\n|---|---:|---:|---|\n";
  for (const Term& t : e.breakdown)
    md += "| " + t.label + " | " + format_bytes(t.bytes) + " | " + percent(t.uncertainty) + " | " +
          std::string(provenance_name(t.provenance)) + " |\n";
  md += "| **peak** | **" + format_bytes(e.total) + "** | " + format_bytes(e.low) + "–" + format_bytes(e.high) + " | |\n\n";
  if (e.target)
    md += "Target " + e.target->display_name + ": " + format_bytes(e.target->usable_bytes) + " usable, " +
          percent(e.utilization) + " — " + std::string(band_label(e.band)) + "\n\n";
  std::vector<std::string> stated;
  for (const FieldView& f : job_fields(r.job))
    if (f.source.kind != SourceKind::Default) stated.push_back("`" + f.name + "=" + f.value + "` (" + describe_source(f.source) + ")");
  if (!stated.empty()) md += "Read from: " + join(stated, ", ") + "\n\n";
  std::size_t shown = 0;
  for (const Remediation& rem : r.plan.ranked) {
    if (shown++ == remediation_limit) break;
    md += std::string(shown == 1 ? "What would make it fit:\n" : "") + "- " + (rem.fits ? "✓" : "✗") + " −" +
          format_bytes(rem.saved) + " → " + format_bytes(rem.new_total) + " " + rem.label + "\n";
  }
  for (const std::string& n : e.notes) md += "\n> " + n;
  return md + "\n";
}

nlohmann::ordered_json report_json(const EstimateReport& r) {
  const Estimate& e = r.estimate;
  nlohmann::ordered_json j;
  j["version"] = 1;
  j["mode"] = r.compat_mode ? "compat" : "preflight";
  nlohmann::ordered_json model = {{"reference", r.job.model.value}};
  if (e.known) {
    model["id"] = e.model.id;
    model["params"] = e.model.params;
    model["trainable_params"] = e.run.trainable + e.run.lora_params;
    model["confidence"] = confidence_name(e.model.confidence);
    model["source"] = e.model.params_source;
    if (e.model.arch) model["family"] = e.model.arch->family_text;
  } else {
    model["confidence"] = "UNKNOWN";
    model["unknown_reason"] = e.unknown_reason;
  }
  j["model"] = model;
  j["config"] = config_json(r);
  const bool known = r.compat_mode ? r.reference.known : e.known;
  j["total_bytes"] = known ? nlohmann::ordered_json(report_total(r)) : nlohmann::ordered_json(nullptr);
  j["interval_bytes"] = known ? nlohmann::ordered_json({report_low(r), report_high(r)}) : nlohmann::ordered_json(nullptr);
  j["band"] = band_name(known ? report_band(r) : Band::Unknown);
  j["utilization"] = r.compat_mode ? r.reference.utilization : e.utilization;
  j["breakdown"] = r.compat_mode ? compat_breakdown_json(r.reference) : breakdown_json(e);
  if (e.target) j["gpu"] = gpu_json(*e.target, r.compat_mode ? r.reference.usable_bytes : e.target->usable_bytes);
  else j["gpu"] = nullptr;
  j["notes"] = r.compat_mode ? r.reference.notes : e.notes;
  nlohmann::ordered_json rems = nlohmann::ordered_json::array();
  for (const Remediation& rem : r.compat_mode ? r.reference.remediations : r.plan.ranked) rems.push_back(remediation_json(rem));
  j["remediations"] = rems;
  if (!r.compat_mode) {
    nlohmann::ordered_json singles = nlohmann::ordered_json::array();
    for (const Remediation& rem : r.plan.singles) singles.push_back(remediation_json(rem));
    j["single_changes"] = singles;
  }
  if (r.script) {
    nlohmann::ordered_json fields = nlohmann::ordered_json::object();
    for (const ScriptOrigin::FieldLine& f : r.script->fields)
      fields[f.name] = {{"line", f.line}, {"read", f.detail}, {"known", !f.unknown}};
    j["script"] = {{"path", r.script->path},
                   {"entry_point", r.script->entry_point.empty() ? nlohmann::ordered_json(nullptr)
                                                                 : nlohmann::ordered_json(r.script->entry_point)},
                   {"line", r.script->line}, {"job", r.script->job + 1}, {"jobs", r.script->jobs}, {"fields", fields}};
  }
  if (!e.known || r.compat_mode) {
    if (r.compat_mode && e.known) j["preflight"] = {{"total_bytes", e.total}, {"interval_bytes", {e.low, e.high}}, {"band", band_name(e.band)}};
    return j;
  }
  // preflight's additions
  j["phase"] = e.peak()->name;
  nlohmann::ordered_json phases = nlohmann::ordered_json::array();
  for (const Phase& p : e.phases) phases.push_back({{"name", p.name}, {"allocated_bytes", p.allocated}});
  j["phases"] = phases;
  nlohmann::ordered_json terms = nlohmann::ordered_json::array();
  for (const Term& t : e.breakdown)
    terms.push_back({{"key", t.key}, {"label", t.label}, {"bytes", t.bytes}, {"uncertainty", t.uncertainty},
                     {"provenance", provenance_name(t.provenance)}, {"basis", t.basis}});
  j["terms"] = terms;
  j["activation_detail"] = {{"saved", e.term_bytes("activations")}, {"logits", e.term_bytes("logits")},
                            {"backward_workspace", e.term_bytes("backward_workspace")}};
  j["unknown_terms"] = e.unknown_terms;
  nlohmann::ordered_json widen = nlohmann::ordered_json::array();
  for (const Widening& w : e.widenings) widen.push_back({{"field", w.field}, {"alternative", w.alternative}, {"total_bytes", w.total}});
  j["widenings"] = widen;
  const InverseAnswers& inv = r.plan.inverse;
  j["inverse"] = {{"largest_batch", inv.largest_batch ? nlohmann::ordered_json(*inv.largest_batch) : nlohmann::ordered_json(nullptr)},
                  {"longest_context", inv.longest_context ? nlohmann::ordered_json(*inv.longest_context) : nlohmann::ordered_json(nullptr)},
                  {"context_field", inv.context_field}};
  nlohmann::ordered_json diffs = nlohmann::ordered_json::array();
  for (const CompatDifference& d : r.differences)
    diffs.push_back({{"term", d.term}, {"reference_bytes", d.reference_bytes}, {"preflight_bytes", d.preflight_bytes}, {"why", d.why}});
  j["reference"] = {{"total_bytes", r.reference.total}, {"interval_bytes", {r.reference.low, r.reference.high}},
                    {"band", band_name(r.reference.band)}, {"usable_bytes", r.reference.usable_bytes}, {"differences", diffs}};
  return j;
}

}  // namespace preflight::estimator
