#include "server/cli/estimate_command.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "analysis/line_index.h"
#include "estimator/script_reader.h"
#include "server/cli/check_command.h"
#include "server/cli/deepspeed_file.h"
#include "server/cli/file_io.h"
#include "server/cli/number_options.h"

namespace preflight::server {
namespace {

namespace est = preflight::estimator;
using est::Source;

// Parses an enum flag; on an unknown value writes the error and returns false.
template <class E, class Parse>
bool parse_flag(const std::string& text, const char* flag, Parse parse, est::Field<E>& field, std::ostream& err) {
  if (text.empty()) return true;
  std::optional<E> value = parse(text);
  if (!value) {
    err << "preflight: unknown value '" << text << "' for " << flag << "\n";
    return false;
  }
  field.set(*value, Source::flag(flag));
  return true;
}

template <class T, class U>
void set_if(const std::optional<U>& v, const char* flag, est::Field<T>& field) {
  if (v) field.set(static_cast<T>(*v), Source::flag(flag));
}

bool numeric_flags(const EstimateArgs& a, est::JobSpec& job, std::ostream& err) {
  // The command line's validators refuse these first; callers in-process get the same check.
  struct Bounded {
    std::optional<int> value;
    const char* flag;
    int max;
  };
  for (const Bounded& b : {Bounded{a.batch_size, "--batch-size", kMaxBatchSize}, {a.seq_len, "--seq-len", kMaxTokens},
                           {a.image_size, "--image-size", kMaxImageSide}, {a.world_size, "--world-size", kMaxRanks},
                           {a.max_context, "--max-context", kMaxTokens}, {a.lora_rank, "--lora-rank", kMaxLoraRank},
                           {a.accumulation, "--accumulation", kMaxAccumulation}, {a.tensor_parallel, "--tp", kMaxParallelDegree},
                           {a.pipeline_parallel, "--pp", kMaxParallelDegree}, {a.prompt_len, "--prompt-len", kMaxTokens},
                           {a.beams, "--beams", kMaxBeams}}) {
    if (b.value && (*b.value < 1 || *b.value > b.max)) {
      err << "preflight: " << b.flag << ": must be an integer from 1 to " << b.max << ", not '" << *b.value << "'\n";
      return false;
    }
  }
  if (a.batch_size) job.batch_size.set(*a.batch_size, Source::flag("--batch-size"));
  set_if(a.seq_len, "--seq-len", job.seq_len);
  set_if(a.image_size, "--image-size", job.image_size);
  set_if(a.world_size, "--world-size", job.world_size);
  set_if(a.max_context, "--max-context", job.max_context);
  set_if(a.lora_rank, "--lora-rank", job.lora_rank);
  set_if(a.accumulation, "--accumulation", job.accumulation_steps);
  set_if(a.tensor_parallel, "--tp", job.tensor_parallel);
  set_if(a.pipeline_parallel, "--pp", job.pipeline_parallel);
  set_if(a.prompt_len, "--prompt-len", job.prompt_len);
  set_if(a.beams, "--beams", job.beams);
  if (a.frozen_fraction) {
    // Written so that NaN fails it too (CLI11 reads "nan" and "inf" as doubles).
    if (!(*a.frozen_fraction >= 0 && *a.frozen_fraction <= 1)) {
      err << "preflight: --frozen-fraction must be a number within 0..1, not " << *a.frozen_fraction << "\n";
      return false;
    }
    job.frozen_fraction.set(*a.frozen_fraction, Source::flag("--frozen-fraction"));
  }
  return true;
}

void boolean_flags(const EstimateArgs& a, est::JobSpec& job) {
  auto on = [](bool given, const char* flag, est::Field<bool>& field, bool value = true) {
    if (given) field.set(value, Source::flag(flag));
  };
  on(a.checkpointing, "--checkpointing", job.gradient_checkpointing);
  on(a.inference || a.generate, a.generate ? "--generate" : "--inference", job.inference_only);
  on(a.generate, "--generate", job.generation);
  on(a.offload_optimizer, "--offload-optimizer", job.offload_optimizer);
  on(a.offload_params, "--offload-params", job.offload_params);
  on(a.sequence_parallel, "--sp", job.sequence_parallel);
  on(a.activation_offload, "--activation-offload", job.activation_offload);
  on(a.keep_grads, "--keep-grads", job.grads_set_to_none, false);
  on(a.full_prompt_logits, "--full-prompt-logits", job.full_prompt_logits);
  on(a.no_double_quant, "--no-double-quant", job.double_quant, false);
  on(a.ddp_bucket_view, "--ddp-bucket-view", job.ddp_bucket_view);
  if (a.flash && a.attention.empty()) job.attention.set(est::Attention::Sdpa, Source::flag("--flash"));
  if (a.chunked_loss) job.loss_impl.set(est::LossImpl::Chunked, Source::flag("--chunked-loss"));
  if (!a.lora_targets.empty()) job.lora_targets.set(a.lora_targets, Source::flag("--lora-targets"));
}

// The flags on top of `job` (what the script says): a flag always wins.
std::optional<est::JobSpec> job_from_args(const EstimateArgs& a, std::ostream& err, est::JobSpec job = {}) {
  if (!a.model.empty()) job.model.set(a.model, Source::flag("--model"));
  if (!a.cuda_context.empty()) {
    std::optional<int64_t> bytes = est::parse_memory(a.cuda_context);
    if (!bytes || *bytes > int64_t{64} << 30) {
      err << "preflight: could not parse --cuda-context '" << a.cuda_context
          << "': a size from 1 byte to 64GiB (e.g. 1.3GiB, 512MiB)\n";
      return std::nullopt;
    }
    job.cuda_context_bytes.set(bytes, Source::flag("--cuda-context"));
  }
  if (!a.params.empty()) {
    std::optional<int64_t> count = est::parse_count(a.params);
    if (!count) {
      err << "preflight: could not parse --params '" << a.params
          << "': a parameter count from 1 to 1e15 (e.g. 7B, 124M, 6738415616)\n";
      return std::nullopt;
    }
    job.params.set(count, Source::flag("--params"));
  }
  if (!a.trainable_params.empty()) {
    std::optional<int64_t> count = est::parse_count(a.trainable_params);
    if (!count) {
      err << "preflight: could not parse --trainable-params '" << a.trainable_params
          << "': a parameter count from 1 to 1e15 (e.g. 4.2M, 6738415616)\n";
      return std::nullopt;
    }
    if (a.frozen_fraction) {
      err << "preflight: give --trainable-params or --frozen-fraction, not both\n";
      return std::nullopt;
    }
    job.trainable_params.set(count, Source::flag("--trainable-params"));
  }
  if (!numeric_flags(a, job, err)) return std::nullopt;
  boolean_flags(a, job);
  const bool ok = parse_flag(a.dtype, "--dtype", est::parse_precision, job.precision, err) &&
                  parse_flag(a.optimizer, "--optimizer", est::parse_optimizer, job.optimizer, err) &&
                  parse_flag(a.optimizer_impl, "--optimizer-impl", est::parse_optimizer_impl, job.optimizer_impl, err) &&
                  parse_flag(a.sharding, "--sharding", est::parse_sharding, job.sharding, err) &&
                  parse_flag(a.attention, "--attention", est::parse_attention, job.attention, err) &&
                  parse_flag(a.peft, "--peft", est::parse_peft, job.peft, err) &&
                  parse_flag(a.quantization, "--quantization", est::parse_quantization, job.quantization, err) &&
                  parse_flag(a.head, "--head", est::parse_head, job.head, err);
  if (!ok) return std::nullopt;
  if (!a.kv_cache_dtype.empty()) {
    if (a.kv_cache_dtype != "fp8" && a.kv_cache_dtype != "model") {
      err << "preflight: unknown value '" << a.kv_cache_dtype << "' for --kv-cache-dtype (model or fp8)\n";
      return std::nullopt;
    }
    job.kv_cache_dtype.set(a.kv_cache_dtype == "fp8" ? est::KvCacheDtype::Fp8 : est::KvCacheDtype::Model,
                           Source::flag("--kv-cache-dtype"));
  }
  return job;
}

// ---------------------------------------------------------------- terminal report

constexpr int kBarWidth = 24;

std::string pad(std::string s, std::size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}
std::string pad_left(std::string s, std::size_t width) {
  if (s.size() < width) s.insert(0, width - s.size(), ' ');
  return s;
}

// A bar of block characters, padded with spaces to kBarWidth columns (each block is one
// column but three bytes, so byte-based padding would misalign).
std::string bar(int64_t bytes, int64_t largest) {
  const int n = largest > 0 ? std::clamp(int(double(bytes) / double(largest) * kBarWidth + 0.5), 1, kBarWidth) : 0;
  std::string out;
  for (int i = 0; i < n; ++i) out += "█";
  return out + std::string(kBarWidth - n, ' ');
}

std::string percent(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, v < 0.01 && v > 0 ? "%.1f%%" : "%.0f%%", 100 * v);
  return buf;
}

std::string params_text(int64_t n) {
  char buf[32];
  if (n >= 1000000000) std::snprintf(buf, sizeof buf, "%.2f B", double(n) / 1e9);
  else std::snprintf(buf, sizeof buf, "%.1f M", double(n) / 1e6);
  return buf;
}

const char* verdict(est::Band b) {
  switch (b) {
    case est::Band::Fits: return "✓ fits with margin";
    case est::Band::Tight: return "~ may not fit: the capacity is inside the interval (the point estimate fits)";
    case est::Band::MayNotFit: return "? may not fit: a term is unknown (see below), the real peak is higher";
    case est::Band::LikelyOom: return "✗ OOM (likely)";
    case est::Band::CertainOom: return "✗ OOM";
    case est::Band::Unknown: break;
  }
  return "? unknown";
}

std::string config_line(const est::EstimateReport& r) {
  const est::JobSpec& j = r.job;
  const est::Run& run = r.estimate.run;
  std::vector<std::string> parts = {std::string(est::precision_name(j.precision.value))};
  if (run.training) parts.push_back(std::string(est::optimizer_name(j.optimizer.value)) + " (" +
                                    std::string(est::optimizer_impl_name(j.optimizer_impl.value)) + ")");
  parts.push_back("batch " + std::to_string(j.batch_size.value));
  if (run.seq > 0 && !r.estimate.model.is_cnn() && !run.generation) parts.push_back("seq " + std::to_string(run.seq));
  if (run.image > 0) parts.push_back("image " + std::to_string(run.image) + "px");
  if (run.accumulation > 1) parts.push_back(std::to_string(run.accumulation) + "x accumulation");
  if (run.checkpointing) parts.push_back("checkpointing");
  if (r.estimate.model.has_shape()) parts.push_back(std::string(est::attention_name(run.attention)) + " attention");
  if (run.sharding != est::Sharding::None) parts.push_back(std::string(est::sharding_name(run.sharding)) + " x" + std::to_string(run.world));
  if (run.tensor_parallel > 1) parts.push_back("tp " + std::to_string(run.tensor_parallel));
  if (run.pipeline_parallel > 1) parts.push_back("pp " + std::to_string(run.pipeline_parallel));
  if (run.quantization != est::Quantization::None) parts.push_back(std::string(est::quantization_name(run.quantization)) + " weights");
  if (run.lora_params > 0) parts.push_back("LoRA r" + std::to_string(j.lora_rank.value));
  if (run.generation) parts.push_back("context " + std::to_string(run.context) + " · generation (KV cache)");
  else if (!run.training) parts.push_back("inference only");
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : " · ") + p;
  return out;
}

void write_sources(const est::EstimateReport& r, std::ostream& out) {
  std::string stated, defaulted;
  const bool training = r.estimate.known ? r.estimate.run.training : !r.job.inference_only.value;
  for (const est::FieldView& f : est::job_fields(r.job)) {
    if (f.source.kind == est::SourceKind::CommandLine) stated += (stated.empty() ? "" : ", ") + f.name + "=" + f.source.detail;
  }
  std::string unknown;
  if (r.script)
    for (const est::ScriptOrigin::FieldLine& f : r.script->fields) {
      const std::string where = r.script->path + ":" + std::to_string(f.line);
      if (f.unknown) unknown += (unknown.empty() ? "" : "; ") + f.name + " at " + where + ": " + f.detail;
      else stated += (stated.empty() ? "" : ", ") + f.name + "=" + where;
    }
  for (const est::FieldView& f : est::job_fields(r.job)) {
    const bool training_field = f.name == "optimizer" || f.name == "optimizer_impl" || f.name == "grads_set_to_none";
    const bool shown = (training_field && training) || f.name == "attention" || f.name == "precision" ||
                       (f.name == "seq_len" && !r.job.generation.value);
    if (shown && f.source.kind == est::SourceKind::Default)
      defaulted += (defaulted.empty() ? "" : "; ") + f.name + " = " + f.source.detail;
  }
  out << "Read from  " << (stated.empty() ? "(no flags)" : stated) << "\n";
  if (!unknown.empty()) out << "Unknown    " << unknown << " (not folded to a value: the interval widens)\n";
  if (!defaulted.empty()) out << "Defaults   " << defaulted << "\n";
}

void write_terms(const std::vector<est::Term>& terms, std::ostream& out, bool with_sources) {
  int64_t largest = 0;
  for (const est::Term& t : terms) largest = std::max(largest, t.bytes);
  for (const est::Term& t : terms) {
    if (t.bytes <= 0) continue;
    out << "  " << pad(t.label, 30) << pad_left(est::format_bytes(t.bytes), 11) << "  " << bar(t.bytes, largest);
    if (with_sources) out << " " << pad(std::string(est::provenance_name(t.provenance)), 9) << " ±" << pad(percent(t.uncertainty), 5) << t.basis;
    out << "\n";
  }
}

void write_remediation(const est::Remediation& r, std::ostream& out) {
  const char* mark = r.fits ? "✓" : (r.new_total < r.new_high && r.new_band == est::Band::Tight ? "~" : "✗");
  out << "  " << mark << "  −" << pad_left(est::format_bytes(r.saved), 10) << "  →  " << pad_left(est::format_bytes(r.new_total), 10)
      << "   " << r.label;
  if (r.cheapest_fitting) out << "   [cheapest that fits]";
  if (r.largest_single) out << "   [largest single saving]";
  out << "\n       " << r.note << "\n";
}

void write_inverse(const est::EstimateReport& r, std::ostream& out) {
  const est::InverseAnswers& inv = r.plan.inverse;
  if (!r.estimate.target) return;
  if (!r.estimate.unknown_terms.empty()) {
    out << "\nOn this target: no largest micro-batch or longest sequence (" << r.estimate.unknown_terms.front()
        << " unknown: nothing to scale)\n";
    return;
  }
  out << "\nOn this target: largest micro-batch that fits "
      << (inv.largest_batch ? std::to_string(*inv.largest_batch) : std::string("none (batch 1 does not fit)"));
  if (!inv.context_field.empty())
    out << "; longest " << (inv.context_field == "seq_len" ? "sequence" : "context") << " that fits "
        << (inv.longest_context ? std::to_string(*inv.longest_context) + " tokens" : std::string("none"));
  out << "\n";
}

void write_reference(const est::EstimateReport& r, std::ostream& out) {
  const est::CompatEstimate& ref = r.reference;
  if (!ref.known) return;
  out << "\nReference  torch-preflight 0.4 (--compat): " << est::format_bytes(ref.total) << " ("
      << est::format_bytes(ref.low) << " – " << est::format_bytes(ref.high) << ")";
  if (ref.usable_bytes > 0) out << " against " << est::format_bytes(ref.usable_bytes) << " → " << est::band_name(ref.band);
  out << "\n";
  for (const est::CompatDifference& d : r.differences)
    out << "  " << pad(d.term, 28) << pad_left(est::format_bytes(d.reference_bytes), 11) << " → "
        << pad_left(est::format_bytes(d.preflight_bytes), 11) << "  " << d.why << "\n";
}

void write_compat(const est::EstimateReport& r, std::ostream& out) {
  const est::CompatEstimate& ref = r.reference;
  out << "Mode       compat: torch-preflight 0.4's cost model (estimator.md Part I)\n";
  out << "Model      " << ref.model_id << "   " << params_text(ref.params) << " params\n\n";
  write_terms(ref.breakdown, out, false);
  out << "  " << std::string(46, '-') << "\n  " << pad("projected peak", 30) << pad_left(est::format_bytes(ref.total), 11)
      << "   (" << est::format_bytes(ref.low) << " – " << est::format_bytes(ref.high) << ")\n\n";
  if (r.estimate.target)
    out << "Target     " << r.estimate.target->display_name << " (" << est::format_bytes(ref.usable_bytes)
        << " usable)   →   " << percent(ref.utilization) << " of capacity   " << verdict(ref.band) << "\n";
  if (!ref.remediations.empty()) out << "\nWhat would make it fit:\n";
  for (const est::Remediation& rem : ref.remediations) write_remediation(rem, out);
  for (const std::string& n : ref.notes) out << "note: " << n << "\n";
  if (r.estimate.known)
    out << "\npreflight's own estimate (without --compat): " << est::format_bytes(r.estimate.total) << " ("
        << est::band_name(r.estimate.band) << ")\n";
}

}  // namespace

void write_estimate_terminal(const est::EstimateReport& r, std::ostream& out) {
  const est::Estimate& e = r.estimate;
  if (r.compat_mode && r.reference.known) return write_compat(r, out);
  if (!e.known) {
    out << "Model      UNKNOWN: " << e.unknown_reason << "\n";
    write_sources(r, out);
    out << "\nVerdict    ? unknown: no estimate without a model\n";
    return;
  }
  out << "Model      " << e.model.id << "  (" << e.model.params_source << ", " << est::confidence_name(e.model.confidence)
      << ")   " << params_text(e.model.params) << " params"
      << (e.run.training ? ", " + params_text(e.run.trainable + e.run.lora_params) + " trainable" : std::string(", inference"))
      << "\n";
  out << "Config     " << config_line(r) << "\n";
  write_sources(r, out);
  out << "Phases    ";
  for (std::size_t i = 0; i < e.phases.size(); ++i)
    out << (i ? ", " : " ") << e.phases[i].name << " " << est::format_bytes(e.phases[i].allocated) << (i == e.peak_phase ? " (peak)" : "");
  out << "\n\n";
  write_terms(e.breakdown, out, true);
  for (const std::string& term : e.unknown_terms)
    out << "  " << pad(term, 30) << pad_left("unknown", 11) << "  not in the total: no architecture shape (see the note)\n";
  out << "  " << std::string(46, '-') << "\n  " << pad("projected peak (" + e.peak()->name + ")", 30)
      << pad_left(est::format_bytes(e.total), 11) << "   (" << est::format_bytes(e.low) << " – " << est::format_bytes(e.high) << ")\n";
  for (const est::Widening& w : e.widenings)
    out << "  interval widened: " << w.alternative << " → " << est::format_bytes(w.total) << "\n";
  out << "\n";
  if (e.target) {
    out << "Target     " << e.target->display_name << " (" << est::format_bytes(e.target->usable_bytes) << " usable";
    if (e.target->device_count > 1) out << " per device, " << e.target->device_count << " devices";
    out << ")   →   " << percent(e.utilization) << " of capacity   " << verdict(e.band) << "\n";
  } else {
    out << "Target     none given (--gpu NAME|INSTANCE|Nx... or --gpu-memory): verdict unknown\n";
  }
  if (!r.plan.ranked.empty())
    out << "\n" << (e.band == est::Band::Tight ? "To restore the margin:" : "What would make it fit:") << "\n";
  for (const est::Remediation& rem : r.plan.ranked) write_remediation(rem, out);
  if (!r.plan.ranked.empty() && !r.plan.cheapest_fitting)
    out << "  nothing here fits, even combined: a larger GPU, more devices (--gpu Nx...), or a smaller model\n";
  if (!r.plan.singles.empty()) out << "\nEach change alone:\n";
  for (const est::Remediation& s : r.plan.singles)
    out << "  " << pad(s.label, 56) << " −" << pad_left(est::format_bytes(s.saved), 10) << "  →  "
        << pad_left(est::format_bytes(s.new_total), 10) << "  " << est::band_name(s.new_band) << "\n";
  write_inverse(r, out);
  write_reference(r, out);
  if (!e.notes.empty()) out << "\n";
  for (const std::string& n : e.notes) out << "note: " << n << "\n";
}

CLI::App* add_estimate_command(CLI::App& app, EstimateArgs& a) {
  CLI::App* cmd = app.add_subcommand("estimate", "Project the peak GPU memory of a training or serving run");
  cmd->add_option("script", a.script, "Training script: its jobs and their configuration are read from it (flags win)");
  cmd->add_option("--gpu", a.gpu, "Target GPU, cloud instance or Nx<gpu> (see `preflight gpus --instances`)");
  cmd->add_option("--gpu-memory", a.gpu_memory, "Explicit per-device capacity, e.g. 48GiB");
  cmd->add_option("--cuda-context", a.cuda_context,
                  "Device memory the CUDA context takes, as measured on your stack, e.g. 1.3GiB "
                  "(default: the card's measured context, else 512 MiB for CUDA 12)");
  cmd->add_option("--model", a.model, "Architecture name or hub id (see the catalogue)");
  cmd->add_option("--params", a.params, "Parameter count when the model is not in the catalogue, e.g. 7B");
  cmd->add_option("--batch-size", a.batch_size, "Per-device micro-batch")->check(integer_in(1, kMaxBatchSize));
  cmd->add_option("--seq-len", a.seq_len, "Sequence length (default: the model's maximum position)")->check(integer_in(1, kMaxTokens));
  cmd->add_option("--image-size", a.image_size, "Image side in pixels (vision models)")->check(integer_in(1, kMaxImageSide));
  cmd->add_option("--dtype", a.dtype, "fp32, amp, amp-fp16, amp-bf16, pure-fp16, pure-bf16, fp16-master");
  cmd->add_option("--optimizer", a.optimizer,
                  "sgd, sgd-momentum, adam, adamw, adamw-8bit, paged-adamw-8bit, adafactor, lion, lion-8bit, rmsprop, adagrad");
  cmd->add_option("--world-size", a.world_size, "Ranks (default: the target's device count for sharded plans)")->check(integer_in(1, kMaxRanks));
  cmd->add_option("--sharding", a.sharding, "none, ddp, zero-1, zero-2, zero-3, fsdp, fsdp-grad-op, fsdp-hybrid, fsdp2");
  cmd->add_flag("--checkpointing", a.checkpointing, "Gradient checkpointing is on");
  cmd->add_flag("--flash", a.flash, "Flash attention / SDPA (same as --attention sdpa)");
  cmd->add_flag("--inference", a.inference, "Inference only, no backward");
  cmd->add_flag("--generate", a.generate, "Autoregressive decoding with a KV cache (implies --inference)");
  cmd->add_option("--max-context", a.max_context, "Tokens the KV cache holds (prompt + generated)")->check(integer_in(1, kMaxTokens));
  cmd->add_option("--peft", a.peft, "lora or qlora");
  cmd->add_option("--lora-rank", a.lora_rank, "LoRA rank (default 16)")->check(integer_in(1, kMaxLoraRank));
  cmd->add_option("--quantization", a.quantization, "Weight quantisation: int8, nf4, fp8");
  cmd->add_option("-f,--format", a.format, "Output format: terminal or json");
  // preflight's additions
  cmd->add_flag("--compat", a.compat, "Report torch-preflight 0.4's figures (its cost model, interval and solver)");
  cmd->add_option("--attention", a.attention, "eager, sdpa or flash (default: SDPA where transformers has it)");
  cmd->add_option("--optimizer-impl", a.optimizer_impl, "foreach (torch default), fused, for-loop, in-backward");
  cmd->add_option("--accumulation", a.accumulation, "Gradient accumulation steps")->check(integer_in(1, kMaxAccumulation));
  cmd->add_option("--lora-targets", a.lora_targets, "LoRA target modules (comma-separated; all-linear)")->delimiter(',');
  cmd->add_option("--frozen-fraction", a.frozen_fraction, "Share of base parameters without gradients (frozen backbone)");
  cmd->add_option("--trainable-params", a.trainable_params,
                  "Parameters with gradients, e.g. 4.2M (torch-preflight's flag; the adapters' count with --peft)");
  cmd->add_option("--head", a.head, "Task head the loading class adds: causal-lm, masked-lm, sequence-classification, none");
  cmd->add_option("--deepspeed", a.deepspeed,
                  "DeepSpeed config JSON: ZeRO stage, offload, bf16/fp16, micro-batch, accumulation (\"auto\" stays unknown)");
  cmd->add_flag("--offload-optimizer", a.offload_optimizer, "Optimizer state on the CPU (ZeRO-Offload)");
  cmd->add_flag("--offload-params", a.offload_params, "Parameters on the CPU (ZeRO-3 offload_param)");
  cmd->add_option("--tp", a.tensor_parallel, "Tensor-parallel degree")->check(integer_in(1, kMaxParallelDegree));
  cmd->add_flag("--sp", a.sequence_parallel, "Sequence parallelism (with --tp)");
  cmd->add_option("--pp", a.pipeline_parallel, "Pipeline-parallel stages")->check(integer_in(1, kMaxParallelDegree));
  cmd->add_option("--prompt-len", a.prompt_len, "Prompt tokens of the prefill (default: the whole context)")->check(integer_in(1, kMaxTokens));
  cmd->add_option("--beams", a.beams, "Beam count (multiplies the KV cache)")->check(integer_in(1, kMaxBeams));
  cmd->add_option("--kv-cache-dtype", a.kv_cache_dtype, "model or fp8");
  cmd->add_flag("--chunked-loss", a.chunked_loss, "Chunked / fused cross-entropy (Liger, torchtune)");
  cmd->add_flag("--activation-offload", a.activation_offload, "Saved activations offloaded to the CPU");
  cmd->add_flag("--keep-grads", a.keep_grads, "zero_grad(set_to_none=False): gradients stay allocated");
  cmd->add_flag("--full-prompt-logits", a.full_prompt_logits, "Prefill computes logits for every prompt position");
  cmd->add_flag("--no-double-quant", a.no_double_quant, "nf4 without double quantisation");
  cmd->add_flag("--ddp-bucket-view", a.ddp_bucket_view, "DDP gradient_as_bucket_view=True");
  cmd->add_flag("--allow-more-gpus", a.allow_more_gpus, "Let remediations add devices beyond the target's");
  return cmd;
}

namespace {

struct ScriptedJob {
  est::JobSpec spec;
  std::optional<est::ScriptOrigin> origin;
};

uint32_t line_of(const analysis::LineIndex& lines, uint32_t offset) {
  return lines.to_line_column(offset, analysis::ColumnUnit::Utf8Bytes).line + 1;
}

// Every field the script stated or blocked, with its line, for the report.
std::vector<est::ScriptOrigin::FieldLine> script_fields(const est::JobSpec& spec, const analysis::LineIndex& lines) {
  std::vector<est::ScriptOrigin::FieldLine> out;
  for (const est::FieldView& f : est::job_fields(spec)) {
    const bool unknown = f.source.kind == est::SourceKind::Unknown;
    if ((f.source.kind != est::SourceKind::Script && !unknown) || !f.source.range) continue;
    std::string detail = unknown ? "`" + f.source.blocking_expression + "`" : f.source.detail;
    out.push_back({f.name, line_of(lines, f.source.range->begin), std::move(detail), unknown});
  }
  return out;
}

// The jobs of `path` (one job of defaults when there is no script or no entry point in it).
bool read_script_jobs(const std::string& path, std::vector<ScriptedJob>& jobs, std::ostream& err) {
  if (path.empty()) {
    jobs.push_back({});
    return true;
  }
  ReadResult file = read_source_file(path);
  if (!file.text) {
    err << "preflight: " << path << ": " << file.error << "\n";
    return false;
  }
  const analysis::LineIndex lines(*file.text);
  const std::vector<est::ScriptJob> read = est::read_jobs(*file.text);
  if (read.empty()) {
    err << "preflight: note: " << path << " has no training or generation entry point "
        << "(no loop with .backward(), Trainer.train(), Trainer.fit() or .generate()); flags and defaults only\n";
    jobs.push_back({{}, est::ScriptOrigin{path, "", 0, 0, 0, {}}});
    return true;
  }
  for (std::size_t i = 0; i < read.size(); ++i) {
    est::ScriptJob job = read[i];
    apply_script_deepspeed(job, path);
    est::ScriptOrigin origin{path, job.entry_point, line_of(lines, job.anchor.begin), i, read.size(),
                             script_fields(job.spec, lines)};
    jobs.push_back({job.spec, std::move(origin)});
  }
  return true;
}

}  // namespace

int run_estimate(const EstimateArgs& a, std::ostream& out, std::ostream& err) {
  if (a.format != "terminal" && a.format != "json") {
    err << "preflight: unknown --format '" << a.format << "' (terminal or json)\n";
    return kExitUsage;
  }
  if (!a.script.empty() && !std::filesystem::is_regular_file(a.script)) {
    err << "preflight: no such file: " << a.script << "\n";
    return kExitUsage;
  }
  if (a.script.empty() && a.model.empty() && a.params.empty()) {
    err << "preflight: give a script, or --model / --params\n";
    return kExitUsage;
  }
  std::optional<int64_t> capacity;
  if (!a.gpu_memory.empty() && !(capacity = est::parse_memory(a.gpu_memory))) {
    err << "preflight: could not parse --gpu-memory '" << a.gpu_memory
        << "': a size from 1 byte to 8192TiB (e.g. 48GiB, 24gb, 40960MiB)\n";
    return kExitUsage;
  }
  std::optional<est::Target> target;
  if (!a.gpu.empty() || capacity) {
    std::string error;
    target = est::resolve_target(est::builtin_catalog(), a.gpu, capacity, error);
    if (!target) {
      err << "preflight: " << error << "\n";
      return kExitUsage;
    }
  }
  std::vector<ScriptedJob> jobs;
  if (!read_script_jobs(a.script, jobs, err)) return kExitUsage;
  est::RemediationOptions options;
  options.allow_more_devices = a.allow_more_gpus;
  std::vector<est::EstimateReport> reports;
  for (ScriptedJob& sj : jobs) {
    if (!a.deepspeed.empty()) {
      // The flag's config replaces what the script's says; explicit flags still win over it.
      const std::string error = apply_deepspeed_file(a.deepspeed, Source::flag("--deepspeed " + a.deepspeed), sj.spec);
      if (!error.empty()) {
        err << "preflight: --deepspeed " << a.deepspeed << ": " << error << "\n";
        return kExitUsage;
      }
    }
    std::optional<est::JobSpec> job = job_from_args(a, err, std::move(sj.spec));
    if (!job) return kExitUsage;
    reports.push_back(est::build_report(*job, target, a.compat, options));
    reports.back().script = std::move(sj.origin);
  }
  bool failed = false, unknown_name = false;
  for (const est::EstimateReport& r : reports) {
    failed = failed || est::band_is_failure(est::report_band(r));
    // A name the catalogue lacks is an error the user can fix (a typo, a hub id we do not
    // hold): exit non-zero with the nearest names, not a quiet "unknown".
    if (!r.estimate.known && !r.estimate.model.suggestions.empty()) {
      unknown_name = true;
      err << "preflight: unknown model '" << r.job.model.value << "'; did you mean:";
      for (const std::string& id : r.estimate.model.suggestions) err << " " << id;
      err << "? (or give --params COUNT)\n";
    }
  }
  if (a.format == "json") {
    nlohmann::ordered_json j = est::report_json(reports.front());
    if (reports.size() > 1) {
      nlohmann::ordered_json all = nlohmann::ordered_json::array();
      for (const est::EstimateReport& r : reports) all.push_back(est::report_json(r));
      j["jobs"] = all;
    }
    out << j.dump(2) << "\n";
  } else {
    for (std::size_t i = 0; i < reports.size(); ++i) {
      if (i > 0) out << "\n";
      if (reports.size() > 1)
        out << "── job " << i + 1 << " of " << reports.size() << ": " << reports[i].script->entry_point << " ("
            << reports[i].script->path << ":" << reports[i].script->line << ")\n";
      write_estimate_terminal(reports[i], out);
    }
  }
  if (unknown_name) return kExitUsage;
  return failed ? kExitFindings : kExitClean;
}

}  // namespace preflight::server
