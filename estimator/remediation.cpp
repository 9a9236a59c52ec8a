// The remediation search. Candidates are JobSpec edits; every one is priced by a full
// estimate of the edited job (never by subtracting a term), so interactions between
// changes (checkpointing after flash, 8-bit state after LoRA) are exact within the model.
#include "estimator/remediation.h"

#include <algorithm>
#include <functional>

namespace preflight::estimator {
namespace {

struct Candidate {
  std::string label;
  std::string group;  // at most one change per group in a combination
  int disruption = 0;
  std::string note;
  std::function<void(JobSpec&)> apply;
};

const Source kSolver = Source::derived("remediation");
constexpr std::size_t kSearchedCandidates = 12;

bool is_adam(Optimizer o) { return o == Optimizer::Adam || o == Optimizer::AdamW; }
bool has_state(Optimizer o) { return o != Optimizer::Sgd; }

// SDPA where the family has an SDPA path in transformers (T5 and GPT-J do not).
void add_sdpa(const Estimate& base, std::vector<Candidate>& out) {
  const ModelProfile& m = base.model;
  if (m.has_shape() && base.run.attention == Attention::Eager && !m.id.starts_with("t5") && !m.id.starts_with("gpt-j"))
    out.push_back({"SDPA / flash attention", "attention", 0, "same result; removes the O(seq^2) score matrix",
                   [](JobSpec& j) { j.attention.set(Attention::Sdpa, kSolver); }});
}

// Devices a multi-device remediation may use: the target's, unless more were allowed.
int offered_devices(const Target& target, const RemediationOptions& options) {
  return options.allow_more_devices ? std::max(8, target.device_count) : target.device_count;
}

std::vector<Candidate> training_candidates(const JobSpec& job, const Estimate& base, const Target& target,
                                           const RemediationOptions& options) {
  const Run& r = base.run;
  const ModelProfile& m = base.model;
  std::vector<Candidate> out;
  add_sdpa(base, out);
  if (is_adam(r.optimizer) && r.optimizer_impl == OptimizerImpl::Foreach)
    out.push_back({"fused AdamW (fused=True)", "optimizer_impl", 0, "same update in one kernel: no foreach temporaries",
                   [](JobSpec& j) { j.optimizer_impl.set(OptimizerImpl::Fused, kSolver); }});
  if (r.logits && r.loss == LossImpl::Full)
    out.push_back({"chunked / fused cross-entropy", "loss", 0, "same loss without materialising every logit (Liger, torchtune)",
                   [](JobSpec& j) { j.loss_impl.set(LossImpl::Chunked, kSolver); }});
  if (!r.checkpointing && (m.has_shape() || m.is_cnn()))
    out.push_back({"gradient checkpointing", "activations", 1, "recomputes each block in backward, about 30 % slower",
                   [](JobSpec& j) { j.gradient_checkpointing.set(true, kSolver); }});
  if (!r.activation_offload && m.has_shape())
    out.push_back({"activation offloading to CPU", "activations", 2, "saved tensors move to pinned host memory; PCIe-bound",
                   [](JobSpec& j) { j.activation_offload.set(true, kSolver); }});
  if (r.accumulation == 1 && r.optimizer_impl != OptimizerImpl::InBackward && !r.shards_gradients() && has_state(r.optimizer))
    out.push_back({"optimizer step in backward", "optimizer_impl", 1,
                   "steps each parameter as its gradient arrives; no accumulation or global clipping",
                   [](JobSpec& j) { j.optimizer_impl.set(OptimizerImpl::InBackward, kSolver); }});
  if (is_adam(r.optimizer))
    out.push_back({"8-bit AdamW (bitsandbytes)", "optimizer", 1, "quantised optimizer state, minimal quality impact",
                   [](JobSpec& j) { j.optimizer.set(Optimizer::AdamW8bit, kSolver); }});
  if (has_state(r.optimizer) && r.optimizer != Optimizer::Adafactor)
    out.push_back({"Adafactor optimizer", "optimizer", 2, "factored second moment; needs its own learning-rate tuning",
                   [](JobSpec& j) { j.optimizer.set(Optimizer::Adafactor, kSolver); }});
  if (r.precision == Precision::Fp32)
    out.push_back({target.bf16 ? "bf16 mixed precision (autocast)" : "fp16 mixed precision (autocast + GradScaler)",
                   "precision", 1, "low-precision activations, fp32 weights",
                   [bf16 = target.bf16](JobSpec& j) { j.precision.set(bf16 ? Precision::AmpBf16 : Precision::AmpFp16, kSolver); }});
  if (r.precision != Precision::PureBf16 && r.precision != Precision::PureFp16)
    out.push_back({target.bf16 ? "pure bf16 weights" : "pure fp16 weights", "precision", 2,
                   "half-size weights, gradients and state; long runs may want stochastic rounding",
                   [bf16 = target.bf16](JobSpec& j) { j.precision.set(bf16 ? Precision::PureBf16 : Precision::PureFp16, kSolver); }});
  if (r.batch >= 2)
    out.push_back({"halve micro-batch (2x accumulation)", "batch", 1, "same global batch, twice the steps",
                   [](JobSpec& j) {
                     j.batch_size.set(std::max(1, j.batch_size.value / 2), kSolver);
                     j.accumulation_steps.set(std::max(1, j.accumulation_steps.value) * 2, kSolver);
                   }});
  if (r.batch >= 4)
    out.push_back({"quarter micro-batch (4x accumulation)", "batch", 1, "same global batch, four times the steps",
                   [](JobSpec& j) {
                     j.batch_size.set(std::max(1, j.batch_size.value / 4), kSolver);
                     j.accumulation_steps.set(std::max(1, j.accumulation_steps.value) * 4, kSolver);
                   }});
  if (m.has_shape() && r.seq >= 256)
    out.push_back({"halve the sequence length (or pack shorter samples)", "sequence", 3, "changes what one sample holds",
                   [seq = r.seq](JobSpec& j) { j.seq_len.set(static_cast<int>(seq / 2), kSolver); }});
  if (m.layout && job.peft.value == Peft::None && r.quantization == Quantization::None && r.frozen_fraction < 0.5) {
    out.push_back({"LoRA r=16 on every linear", "peft", 3, "trains adapters only; the base model is frozen",
                   [](JobSpec& j) {
                     j.peft.set(Peft::Lora, kSolver);
                     j.lora_rank.set(16, kSolver);
                     j.lora_targets.set({"all-linear"}, kSolver);
                   }});
    out.push_back({"QLoRA: 4-bit base (nf4) + LoRA r=16", "peft", 3,
                   "frozen nf4 base weights, the rest in bf16 (torch_dtype=bfloat16), fp32 adapters",
                   [bf16 = target.bf16](JobSpec& j) {
                     j.peft.set(Peft::Qlora, kSolver);
                     j.precision.set(bf16 ? Precision::PureBf16 : Precision::PureFp16, kSolver);
                     j.quantization.set(Quantization::Nf4, kSolver);
                     j.lora_rank.set(16, kSolver);
                     j.lora_targets.set({"all-linear"}, kSolver);
                   }});
  }
  if (!r.offload_optimizer && has_state(r.optimizer))
    out.push_back({"optimizer state offloaded to CPU", "offload", 2, "the step runs on the host (ZeRO-Offload); slower steps",
                   [](JobSpec& j) { j.offload_optimizer.set(true, kSolver); }});
  const int devices = offered_devices(target, options);
  if (devices > 1 && !r.shards_params())
    out.push_back({"FSDP full shard across " + std::to_string(devices) + " devices", "sharding", 2,
                   "shards weights, gradients and state over the target's devices",
                   [devices](JobSpec& j) {
                     j.sharding.set(Sharding::FsdpFull, kSolver);
                     j.world_size.set(devices, kSolver);
                   }});
  return out;
}

std::vector<Candidate> serving_candidates(const Estimate& base, const Target& target, const RemediationOptions& options) {
  const Run& r = base.run;
  const ModelProfile& m = base.model;
  std::vector<Candidate> out;
  add_sdpa(base, out);
  if (r.generation && r.kv_bytes > 1)
    out.push_back({"fp8 KV cache", "kv", 1, "half-size cache; small quality cost",
                   [](JobSpec& j) { j.kv_cache_dtype.set(KvCacheDtype::Fp8, kSolver); }});
  if (r.generation && r.context >= 512)
    out.push_back({"halve the maximum context", "context", 3, "shorter prompts or outputs",
                   [ctx = r.context](JobSpec& j) { j.max_context.set(static_cast<int>(ctx / 2), kSolver); }});
  if (r.batch >= 2)
    out.push_back({r.generation ? "halve the concurrent sequences" : "halve the batch", "batch", 2, "lower throughput",
                   [](JobSpec& j) { j.batch_size.set(std::max(1, j.batch_size.value / 2), kSolver); }});
  if (m.layout && r.quantization == Quantization::None) {
    out.push_back({"4-bit weights (nf4, bitsandbytes)", "quantization", 2, "about 0.52 B per weight; small quality cost",
                   [](JobSpec& j) { j.quantization.set(Quantization::Nf4, kSolver); }});
    out.push_back({"int8 weights (bitsandbytes)", "quantization", 2, "1 B per weight",
                   [](JobSpec& j) { j.quantization.set(Quantization::Int8, kSolver); }});
  }
  if (r.precision == Precision::Fp32 || r.precision == Precision::Amp || r.precision == Precision::AmpBf16 ||
      r.precision == Precision::AmpFp16)
    out.push_back({target.bf16 ? "bf16 weights" : "fp16 weights", "precision", 1, "the usual serving dtype",
                   [bf16 = target.bf16](JobSpec& j) { j.precision.set(bf16 ? Precision::PureBf16 : Precision::PureFp16, kSolver); }});
  const int devices = offered_devices(target, options);
  if (devices > 1 && r.tensor_parallel == 1 && m.has_shape())
    out.push_back({"tensor parallel across " + std::to_string(devices) + " devices", "parallel", 2,
                   "weights, heads and cache split over the target's devices",
                   [devices](JobSpec& j) {
                     j.tensor_parallel.set(devices, kSolver);
                     j.world_size.set(devices, kSolver);
                   }});
  return out;
}

struct Evaluator {
  const Target& target;
  const Catalog& catalog;
  int count = 0;
  Estimate operator()(const JobSpec& job) {
    ++count;
    return estimate(job, target, catalog);
  }
};

Remediation priced(const std::vector<const Candidate*>& changes, const Estimate& base, const Estimate& changed,
                   int64_t usable) {
  Remediation r;
  for (const Candidate* c : changes) {
    r.changes.push_back(c->label);
    r.label += (r.label.empty() ? "" : " + ") + c->label;
    r.disruption = std::max(r.disruption, c->disruption);
    r.disruption_sum += c->disruption;
    r.note += (r.note.empty() ? "" : "; ") + c->note;
  }
  r.saved = base.total - changed.total;
  r.new_total = changed.total;
  r.new_low = changed.low;
  r.new_high = changed.high;
  r.new_band = changed.band;
  r.fits = changed.high < usable;
  return r;
}

// Fits first, then the least disruptive (worst change, then all changes together), then the
// fewest changes, then the largest saving.
bool better(const Remediation& a, const Remediation& b) {
  if (a.fits != b.fits) return a.fits;
  if (a.disruption != b.disruption) return a.disruption < b.disruption;
  if (a.disruption_sum != b.disruption_sum) return a.disruption_sum < b.disruption_sum;
  if (a.changes.size() != b.changes.size()) return a.changes.size() < b.changes.size();
  return a.saved > b.saved;
}

bool contains_all(std::vector<std::string> outer, std::vector<std::string> inner) {
  std::sort(outer.begin(), outer.end());
  std::sort(inner.begin(), inner.end());
  return std::includes(outer.begin(), outer.end(), inner.begin(), inner.end());
}

// Keeps every single change, the minimal fitting combinations (none of whose proper subsets
// fits: adding a change to a fitting set only costs more), and, when no combination fits at
// all, the one combination that saves the most (how far the levers go together).
std::vector<Remediation> worth_showing(const std::vector<Remediation>& all) {
  std::vector<Remediation> fitting_combos, out;
  const Remediation* best_miss = nullptr;
  for (const Remediation& r : all) {
    if (r.changes.size() == 1) {
      out.push_back(r);
    } else if (r.fits) {
      fitting_combos.push_back(r);
    } else if (!best_miss || r.saved > best_miss->saved) {
      best_miss = &r;
    }
  }
  const bool any_fits = std::any_of(all.begin(), all.end(), [](const Remediation& r) { return r.fits; });
  for (const Remediation& combo : fitting_combos) {
    const bool minimal = std::none_of(all.begin(), all.end(), [&](const Remediation& other) {
      return other.fits && other.changes.size() < combo.changes.size() && contains_all(combo.changes, other.changes);
    });
    if (minimal) out.push_back(combo);
  }
  if (!any_fits && best_miss) out.push_back(*best_miss);
  return out;
}

void search_combinations(const std::vector<const Candidate*>& useful, std::size_t start,
                         std::vector<const Candidate*>& chosen, const JobSpec& job, const Estimate& base,
                         Evaluator& eval, int max_changes, std::vector<Remediation>& out) {
  for (std::size_t i = start; i < useful.size(); ++i) {
    const Candidate* c = useful[i];
    if (std::any_of(chosen.begin(), chosen.end(), [&](const Candidate* x) { return x->group == c->group; })) continue;
    chosen.push_back(c);
    if (chosen.size() >= 2) {
      JobSpec changed = job;
      for (const Candidate* x : chosen) x->apply(changed);
      const Estimate e = eval(changed);
      if (e.known && e.total < base.total) out.push_back(priced(chosen, base, e, eval.target.usable_bytes));
    }
    if (int(chosen.size()) < max_changes) search_combinations(useful, i + 1, chosen, job, base, eval, max_changes, out);
    chosen.pop_back();
  }
}

// Largest value in [1, limit] for which `fits(value)` holds, assuming monotonicity.
template <class F>
std::optional<int64_t> largest_fitting(int64_t limit, F fits) {
  if (!fits(1)) return std::nullopt;
  int64_t lo = 1, hi = 2;  // invariant: lo fits
  while (hi <= limit && fits(hi)) lo = hi, hi *= 2;
  if (hi > limit) {
    if (fits(limit)) return limit;
    hi = limit;
  }
  while (hi - lo > 1) {  // lo fits, hi does not
    const int64_t mid = lo + (hi - lo) / 2;
    (fits(mid) ? lo : hi) = mid;
  }
  return lo;
}

InverseAnswers inverse_answers(const JobSpec& job, const Estimate& base, Evaluator& eval) {
  InverseAnswers a;
  const int64_t usable = eval.target.usable_bytes;
  auto fits = [&](const JobSpec& j) {
    const Estimate e = eval(j);
    return e.known && e.high < usable;
  };
  if (auto b = largest_fitting(1 << 16, [&](int64_t v) {
        JobSpec j = job;
        j.batch_size.set(static_cast<int>(v), kSolver);
        return fits(j);
      }))
    a.largest_batch = static_cast<int>(*b);
  const Shape* shape = base.model.shape();
  if (!shape || shape->vocab <= 0) return a;  // vision models: the sequence follows the image size
  a.context_field = base.run.generation ? "max_context" : "seq_len";
  a.longest_context = largest_fitting(int64_t(1) << 21, [&](int64_t v) {
    JobSpec j = job;
    if (base.run.generation) j.max_context.set(static_cast<int>(v), kSolver);
    else j.seq_len.set(static_cast<int>(v), kSolver);
    return fits(j);
  });
  return a;
}

}  // namespace

RemediationPlan plan_remediations(const JobSpec& job, const Estimate& baseline, const Target& target,
                                  const RemediationOptions& options, const Catalog& catalog) {
  RemediationPlan plan;
  if (!baseline.known) return plan;
  Evaluator eval{target, catalog};
  const bool wanted = band_is_failure(baseline.band) || baseline.band == Band::Tight;
  if (wanted) {
    const std::vector<Candidate> candidates = baseline.run.training ? training_candidates(job, baseline, target, options)
                                                                    : serving_candidates(baseline, target, options);
    std::vector<const Candidate*> useful;
    for (const Candidate& c : candidates) {
      JobSpec changed = job;
      c.apply(changed);
      const Estimate e = eval(changed);
      if (!e.known || e.total >= baseline.total) continue;
      useful.push_back(&c);
      plan.singles.push_back(priced({&c}, baseline, e, target.usable_bytes));
    }
    // The combination search runs over the twelve changes that save the most alone (12
    // candidates x up to 4 changes: at most 793 combinations, §10.6).
    std::vector<std::size_t> order(useful.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return plan.singles[a].saved > plan.singles[b].saved; });
    std::vector<const Candidate*> searched;
    for (std::size_t i = 0; i < order.size() && searched.size() < kSearchedCandidates; ++i) searched.push_back(useful[order[i]]);
    std::vector<Remediation> all = plan.singles;
    std::vector<const Candidate*> chosen;
    search_combinations(searched, 0, chosen, job, baseline, eval, options.max_changes, all);
    all = worth_showing(all);
    std::stable_sort(all.begin(), all.end(), better);
    auto cheapest = std::find_if(all.begin(), all.end(), [](const Remediation& r) { return r.fits; });
    if (cheapest != all.end()) {
      cheapest->cheapest_fitting = true;
      plan.cheapest_fitting = *cheapest;
      if (baseline.band == Band::Tight) plan.restore_margin = *cheapest;
    }
    auto largest = std::max_element(plan.singles.begin(), plan.singles.end(),
                                    [](const Remediation& a, const Remediation& b) { return a.saved < b.saved; });
    if (largest != plan.singles.end()) {
      for (Remediation& r : all)
        if (r.changes.size() == 1 && r.label == largest->label) r.largest_single = true;
      largest->largest_single = true;
      plan.largest_single = *largest;
    }
    for (Remediation& r : all) {
      const bool flagged = r.cheapest_fitting || r.largest_single;
      if (plan.ranked.size() < options.limit || flagged) plan.ranked.push_back(r);
    }
  }
  // Without activations a batch or context size has nothing to scale: no inverse answers
  // (the reference printed "largest micro-batch 65536" for a model given by its count).
  const bool shape_terms_known = baseline.activations_known && baseline.unknown_terms.empty();
  if (shape_terms_known && (baseline.run.training || baseline.run.generation || baseline.model.has_shape()))
    plan.inverse = inverse_answers(job, baseline, eval);
  plan.evaluations = eval.count;
  return plan;
}

}  // namespace preflight::estimator
