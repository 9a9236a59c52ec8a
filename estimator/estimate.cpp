#include "estimator/estimate.h"

#include <algorithm>
#include <cmath>

#include "estimator/activations.h"
#include "estimator/bytes.h"
#include "estimator/report.h"

namespace preflight::estimator {
namespace {

bool parameter_proportional(std::string_view key) {
  return key == "weights" || key == "gradients" || key == "optimizer_state" || key == "master_weights" ||
         key == "optimizer_step_temporaries" || key == "communication_buffers";
}

Term activation_term(const std::string& key, const std::string& label, int64_t bytes, double u, std::string basis) {
  return Term{key, label, bytes, u, Provenance::Derived, std::move(basis)};
}

// Derived, checked against measured peaks: the half-width is the calibration residual.
constexpr double kActivationHalfWidth = 0.10;
constexpr double kLogitsHalfWidth = 0.10;
constexpr double kBackwardWorkspaceHalfWidth = 0.25;
// Reference behaviour kept as the floor: when activations cannot be estimated the interval's
// upper side widens by at least a quarter of the total (estimator.md §6.2). A quarter is far
// too little for an LLM fine-tune (activations and logits are often larger than the model
// states), so the top also covers a same-size stand-in (unknown_terms_stand_in below).
constexpr double kUnknownActivationWidening = 0.25;

struct ModelStates {
  Term weights, gradients_all, gradients_persistent, state, master, step, autocast, ddp, zero, gathered_fwd,
      gathered_bwd, dequant;
};

ModelStates model_states(const ModelProfile& p, const Run& r) {
  const bool persistent = !r.grads_set_to_none || r.accumulation > 1;
  return {weights_term(p, r),           gradients_term(p, r, true),  gradients_term(p, r, persistent),
          optimizer_state_term(p, r),   master_weights_term(r),      optimizer_step_term(p, r),
          autocast_cache_term(p, r),    ddp_buckets_term(r),         zero_buckets_term(p, r),
          gathered_params_term(p, r, false), gathered_params_term(p, r, true), dequantization_term(p, r)};
}

Phase make_phase(std::string name, std::vector<Term> terms) {
  Phase ph{std::move(name), {}, 0};
  for (Term& t : terms) {
    if (t.bytes <= 0) continue;
    ph.allocated += t.bytes;
    ph.terms.push_back(std::move(t));
  }
  return ph;
}

std::vector<Phase> training_phases(const ModelProfile& p, const Run& r, bool& activations_known) {
  const ModelStates m = model_states(p, r);
  const TrainingActivations a = training_activations(p, r);
  activations_known = a.known;
  const std::string method = a.known ? a.method : "unknown: no architecture shape";
  const Term saved = activation_term("activations", "activations", a.retained, kActivationHalfWidth, method);
  const Term held = activation_term("logits", "logits", a.logits_held, kLogitsHalfWidth, "model-dtype logits kept by the output");
  const Term loss = activation_term("logits", "logits + loss backward", a.logits_held + a.logits_log_probs + a.logits_backward,
                                    kLogitsHalfWidth, "logits, fp32 log-probs, two fp32 gradient buffers");
  const Term layer = activation_term("backward_workspace", "top block backward", a.layer_backward,
                                     kBackwardWorkspaceHalfWidth, "the top block's gradient temporaries");
  std::vector<Phase> phases;
  phases.push_back(make_phase("loss backward", {m.weights, m.autocast, m.gradients_persistent, m.state, m.master, m.ddp,
                                                m.zero, m.gathered_bwd, m.dequant, saved, loss}));
  phases.push_back(make_phase("layer backward", {m.weights, m.autocast, m.gradients_persistent, m.state, m.master,
                                                 m.ddp, m.zero, m.gathered_bwd, m.dequant, saved, held, layer}));
  if (r.optimizer_impl != OptimizerImpl::InBackward)
    phases.push_back(make_phase("optimizer step", {m.weights, m.gradients_all, m.state, m.master, m.step, m.ddp, held}));
  return phases;
}

std::vector<Phase> inference_phases(const ModelProfile& p, const Run& r, bool& activations_known) {
  const ModelStates m = model_states(p, r);
  const ForwardActivations f = inference_forward(p, r, r.batch, r.seq, false);
  activations_known = f.known;
  return {make_phase("forward", {m.weights, m.gathered_fwd, m.dequant,
                                 activation_term("activations", "activations", f.working_set, kActivationHalfWidth,
                                                 f.known ? f.method : "unknown: no architecture shape"),
                                 activation_term("logits", "logits", f.logits, kLogitsHalfWidth, "model-dtype logits")})};
}

std::vector<Phase> generation_phases(const ModelProfile& p, const Run& r, bool& activations_known) {
  const ModelStates m = model_states(p, r);
  const int64_t sequences = r.batch * r.beams;  // beams are expanded before the prefill
  const ForwardActivations pre = inference_forward(p, r, sequences, r.prompt, !r.full_prompt_logits);
  const ForwardActivations dec = decode_step(p, r, sequences, r.context);
  activations_known = pre.known;
  std::vector<Phase> phases;
  phases.push_back(make_phase(
      "prefill", {m.weights, m.gathered_fwd, m.dequant, kv_cache_term(p, r, sequences, r.prompt),
                  activation_term("activations", "activations", pre.working_set, kActivationHalfWidth, pre.method),
                  activation_term("logits", "logits", pre.logits, kLogitsHalfWidth,
                                  r.full_prompt_logits ? "every prompt position" : "last position, fp32")}));
  phases.push_back(make_phase(
      "decode", {m.weights, m.gathered_fwd, m.dequant, kv_cache_term(p, r, sequences, r.context),
                 activation_term("activations", "activations", dec.working_set, kActivationHalfWidth, dec.method),
                 activation_term("logits", "logits", dec.logits, kLogitsHalfWidth, "logits, fp32 copy, probabilities")}));
  return phases;
}

int64_t half_width(const std::vector<Term>& terms) {
  double proportional = 0, independent = 0;
  for (const Term& t : terms) {
    const double w = t.uncertainty * double(t.bytes);
    if (parameter_proportional(t.key)) proportional += w;
    else independent += w * w;
  }
  return static_cast<int64_t>(std::sqrt(proportional * proportional + independent));
}

// Families whose transformers implementation has no SDPA path run eager attention.
Attention default_attention(const ModelProfile& p) {
  if (p.id.starts_with("t5") || p.id.starts_with("gpt-j")) return Attention::Eager;
  return Attention::Sdpa;
}

JobSpec with_family_defaults(JobSpec job, const ModelProfile& p) {
  // Only a default is replaced: an interval alternative (Derived) must keep its value.
  if (job.attention.defaulted()) {
    const Attention a = default_attention(p);
    if (a != job.attention.value)
      job.attention.set(a, Source::by_default("eager (this family has no SDPA path in transformers)"));
  }
  return job;
}

// The alternatives a defaulted field could plausibly take; each is a full estimate.
std::vector<std::pair<std::string, JobSpec>> alternatives(const JobSpec& job, const ModelProfile& p) {
  std::vector<std::pair<std::string, JobSpec>> out;
  auto add = [&](std::string label, JobSpec changed) { out.emplace_back(std::move(label), std::move(changed)); };
  if (job.attention.defaulted() && p.has_shape() && job.attention.value != Attention::Eager) {
    JobSpec j = job;
    j.attention.set(Attention::Eager, Source::derived("interval alternative"));
    add("attention: eager (older transformers, attn_implementation=\"eager\")", j);
  }
  if (!job.inference_only.value && !job.generation.value) {
    if (job.optimizer_impl.defaulted() && job.optimizer_impl.value == OptimizerImpl::Foreach) {
      JobSpec j = job;
      j.optimizer_impl.value = OptimizerImpl::Fused;
      add("optimizer step: fused (HF Trainer's adamw_torch_fused)", j);
    }
    if (job.grads_set_to_none.defaulted() && job.grads_set_to_none.value) {
      JobSpec j = job;
      j.grads_set_to_none.value = false;
      add("zero_grad(set_to_none=False): gradients kept between steps", j);
    }
  }
  // A precision nobody stated (no flag, no autocast or cast seen; a trainer's configuration
  // may still set one): fp32, the widest, is assumed; bf16 weights, gradients and optimizer
  // state bound the interval from below (issue 25: published peaks that state no precision).
  if (job.precision.defaulted() && job.precision.value == Precision::Fp32) {
    JobSpec j = job;
    j.precision.set(Precision::PureBf16, Source::derived("interval alternative"));
    add("precision: not stated, pure bf16 (weights, gradients, optimizer state) for the lower bound", j);
  }
  // An optimizer nobody stated: AdamW (two states per parameter) is assumed; plain SGD, which
  // keeps none, bounds the interval from below.
  if (!job.inference_only.value && !job.generation.value && job.optimizer.defaulted() &&
      job.optimizer.value == Optimizer::AdamW) {
    JobSpec j = job;
    j.optimizer.set(Optimizer::Sgd, Source::derived("interval alternative"));
    add("optimizer: not stated, SGD without momentum (no state) for the lower bound", j);
    // Both unstated: they are independent, so the bottom has both at their lowest.
    if (job.precision.defaulted() && job.precision.value == Precision::Fp32) {
      j.precision.set(Precision::PureBf16, Source::derived("interval alternative"));
      add("precision and optimizer: not stated, pure bf16 with SGD for the lower bound", j);
    }
  }
  // A value the script sets but the reader could not fold: the default stands in, and a
  // larger one bounds the interval (assumed: 4x the micro-batch; the model's full length).
  if (job.batch_size.source.kind == SourceKind::Unknown) {
    JobSpec j = job;
    j.batch_size.value = std::max(1, job.batch_size.value) * 4;
    add("batch_size: unknown (" + job.batch_size.source.blocking_expression + "), 4x assumed for the upper bound", j);
  }
  // A sequence length nobody stated (or the script sets but the reader could not fold): the
  // estimate assumed a length; the model's maximum position is the upper bound.
  const Shape* s = p.shape();
  const bool text_model = s && s->vocab > 0 && !p.is_cnn() && p.arch->family != Family::VisionTransformer;
  if (text_model && !job.seq_len.value && !job.generation.value && s->max_position > 0) {
    JobSpec j = job;
    j.seq_len.set(s->max_position, Source::derived("the model's maximum position"));
    const std::string why = job.seq_len.source.kind == SourceKind::Unknown
                                ? "unknown (" + job.seq_len.source.blocking_expression + ")"
                                : "not read";
    add("seq_len: " + why + ", the model's maximum position " + std::to_string(s->max_position) +
            " for the upper bound",
        j);
  }
  if (job.generation.value && job.full_prompt_logits.defaulted() && !job.full_prompt_logits.value) {
    JobSpec j = job;
    j.full_prompt_logits.value = true;
    add("prefill logits for every prompt position (transformers < 4.45)", j);
  }
  return out;
}

// The catalogue's decoder-only transformer nearest in parameter count (log scale): the
// stand-in for a model known only by its count. Not a measurement of the user's model; it
// bounds what activations of a model that size plausibly add.
const Architecture* same_size_transformer(int64_t params, const Catalog& catalog) {
  const Architecture* best = nullptr;
  double best_distance = 0;
  for (const Architecture& a : catalog.architectures()) {
    if (a.family != Family::DecoderOnly || !a.shape || a.params <= 0 || a.shape->num_experts > 0) continue;
    const double distance = std::fabs(std::log(double(a.params) / double(std::max<int64_t>(1, params))));
    if (!best || distance < best_distance) best = &a, best_distance = distance;
  }
  return best;
}

// What the unknown terms of a shapeless model would add if it were the same-size stand-in at
// the job's batch and sequence (its maximum position when the job gives none): the terms the
// shape decides (activations, logits, backward workspace, KV cache) of the stand-in's peak
// phase, with the allocator overhead.
struct StandIn {
  std::string id;
  int64_t seq = 0;
  int64_t bytes = 0;
};

Estimate evaluate(const JobSpec& job, const std::optional<Target>& target, const Catalog& catalog);

std::optional<StandIn> unknown_terms_stand_in(const JobSpec& job, const Estimate& e, const Catalog& catalog) {
  const Architecture* proxy = same_size_transformer(e.model.params, catalog);
  if (!proxy) return std::nullopt;
  JobSpec j = job;
  j.model.set(proxy->id, Source::derived("same-size stand-in for unknown activations"));
  j.params = JobSpec{}.params;
  const Estimate alt = evaluate(j, e.target, catalog);
  if (!alt.known || !alt.peak()) return std::nullopt;
  int64_t shape_terms = 0;
  for (const Term& t : alt.peak()->terms)
    if (t.key == "activations" || t.key == "logits" || t.key == "backward_workspace" || t.key == "KV_cache")
      shape_terms += t.bytes;
  return StandIn{proxy->id, alt.run.seq, saturated_bytes(double(shape_terms) * allocator_factor())};
}

std::vector<std::string> unknown_terms_of(const Estimate& e, bool activations_known) {
  std::vector<std::string> out;
  if (!activations_known) out.push_back("activations");
  if (e.run.generation && !e.model.has_shape()) out.push_back("KV cache");
  if (e.run.adapters_unknown) out.push_back("LoRA adapters");
  return out;
}

Estimate evaluate(const JobSpec& job, const std::optional<Target>& target, const Catalog& catalog) {
  Estimate e;
  e.model = resolve_model(job, catalog);
  e.target = target;
  if (!e.model.known) {
    e.unknown_reason = e.model.reason;
    return e;
  }
  const JobSpec resolved = with_family_defaults(job, e.model);
  const Target* t = target ? &*target : nullptr;
  e.run = resolve_run(resolved, e.model, t, e.notes);
  e.known = true;
  bool activations_known = true;
  if (e.run.generation) e.phases = generation_phases(e.model, e.run, activations_known);
  else if (e.run.training) e.phases = training_phases(e.model, e.run, activations_known);
  else e.phases = inference_phases(e.model, e.run, activations_known);
  e.activations_known = activations_known;
  for (std::size_t i = 1; i < e.phases.size(); ++i)
    if (e.phases[i].allocated > e.phases[e.peak_phase].allocated) e.peak_phase = i;
  const Phase& peak = e.phases[e.peak_phase];
  e.breakdown = peak.terms;
  e.breakdown.push_back(cuda_context_term(t, resolved.cuda_context_bytes.value));
  e.breakdown.push_back(allocator_term(peak.allocated));
  for (const Term& term : e.breakdown) e.total += term.bytes;
  const int64_t half = half_width(e.breakdown);
  e.low = std::max<int64_t>(0, e.total - half);
  e.high = e.total + half;
  e.unknown_terms = unknown_terms_of(e, activations_known);
  if (!activations_known) {
    const int64_t floor_high = e.high + saturated_bytes(double(e.total) * kUnknownActivationWidening);
    std::optional<StandIn> stand_in = unknown_terms_stand_in(job, e, catalog);
    e.high = std::max(floor_high, stand_in ? e.high + stand_in->bytes : 0);
    std::string note = "activations unknown (no architecture shape): not in the total, the real peak is higher; the "
                       "interval's top adds at least 25 % of the total";
    if (stand_in) {
      note += " or, if larger, the activations and logits of " + stand_in->id +
              " (the catalogue's decoder-only transformer nearest in parameter count) at batch " +
              std::to_string(e.run.batch) + " x " + std::to_string(stand_in->seq) + " tokens (" +
              format_bytes(stand_in->bytes) + ", a derived stand-in, not a measurement)";
      if (!job.seq_len.value) note += "; give --seq-len, the stand-in's maximum position was used";
    }
    e.notes.push_back(note);
  }
  return e;
}

void widen_for_defaults(Estimate& e, const JobSpec& job, const std::optional<Target>& target, const Catalog& catalog) {
  const double low_ratio = e.total > 0 ? double(e.low) / double(e.total) : 1.0;
  const double high_ratio = e.total > 0 ? double(e.high) / double(e.total) : 1.0;
  for (auto& [label, changed] : alternatives(with_family_defaults(job, e.model), e.model)) {
    const Estimate alt = evaluate(changed, target, catalog);
    if (!alt.known || alt.total == e.total) continue;
    e.widenings.push_back({label.substr(0, label.find(':')), label, alt.total});
    e.low = std::min(e.low, saturated_bytes(double(alt.total) * low_ratio));
    e.high = std::max(e.high, saturated_bytes(double(alt.total) * high_ratio));
  }
}

}  // namespace

std::string_view band_name(Band b) {
  switch (b) {
    case Band::Fits: return "FITS";
    case Band::Tight: return "TIGHT";
    case Band::MayNotFit: return "MAY_NOT_FIT";
    case Band::LikelyOom: return "LIKELY_OOM";
    case Band::CertainOom: return "CERTAIN_OOM";
    case Band::Unknown: break;
  }
  return "UNKNOWN";
}

std::string_view band_label(Band b) {
  switch (b) {
    case Band::Fits: return "fits with margin";
    case Band::Tight: return "may not fit: the capacity is inside the interval";
    case Band::MayNotFit: return "may not fit: a term is unknown";
    case Band::LikelyOom: return "does not fit (likely OOM)";
    case Band::CertainOom: return "does not fit (OOM)";
    case Band::Unknown: break;
  }
  return "unknown";
}

bool band_is_failure(Band b) { return b == Band::LikelyOom || b == Band::CertainOom; }

Band band_for(int64_t low, int64_t total, int64_t high, int64_t usable, bool terms_known) {
  if (usable <= 0) return Band::Unknown;
  if (!terms_known && total < usable) return Band::MayNotFit;
  if (high < usable) return Band::Fits;
  if (total < usable) return Band::Tight;
  if (low < usable) return Band::LikelyOom;
  return Band::CertainOom;
}

int64_t Estimate::term_bytes(std::string_view key) const {
  int64_t total_bytes = 0;
  for (const Term& t : breakdown)
    if (t.key == key) total_bytes += t.bytes;
  return total_bytes;
}

Estimate estimate(const JobSpec& job, const std::optional<Target>& target, const Catalog& catalog,
                  const EstimateOptions& options) {
  Estimate e = evaluate(job, target, catalog);
  if (!e.known) return e;
  for (const FieldView& f : job_fields(job))
    if (f.source.kind == SourceKind::Unknown)
      e.notes.push_back(f.name + " could not be determined (" + f.source.blocking_expression + "): " + f.value +
                        " assumed, interval widened");
  if (options.widen_for_defaults) widen_for_defaults(e, job, target, catalog);
  if (target) {
    e.utilization = double(e.total) / double(std::max<int64_t>(1, target->usable_bytes));
    e.band = band_for(e.low, e.total, e.high, target->usable_bytes, e.unknown_terms.empty());
  }
  return e;
}

}  // namespace preflight::estimator
