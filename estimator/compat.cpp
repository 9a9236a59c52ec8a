// torch-preflight 0.4's cost model, as estimator.md Part I specifies it. Every constant here
// is the reference's, with the provenance it gives (§3.14); nothing here is preflight's own
// model. Each term is computed in floating point and truncated toward zero at its end.
#include "estimator/compat.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include "estimator/bytes.h"

namespace preflight::estimator {
namespace {

constexpr int64_t kMiB = int64_t(1) << 20;
constexpr double kFragmentation = 0.105;             // measured, six T4 runs
constexpr int64_t kDefaultContext = 135 * kMiB;      // measured, one T4
constexpr double kUnknownActivationSpread = 0.25;

enum class RefPrecision { Fp32, Amp, PureFp16, PureBf16, Fp16Master };
enum class RefSharding { None, Ddp, Zero1, Zero2, Zero3 };

struct RefConfig {
  int64_t batch = 1;
  std::optional<int64_t> seq;
  std::optional<int64_t> image;
  RefPrecision precision = RefPrecision::Fp32;
  Optimizer optimizer = Optimizer::AdamW;
  bool checkpointing = false;
  bool flash = false;
  int accumulation = 1;
  int world = 1;
  RefSharding sharding = RefSharding::None;
  bool offload_optimizer = false;
  bool offload_params = false;
  bool generation = false;
  std::optional<int64_t> max_context;
  double frozen_fraction = 0.0;
  std::optional<int64_t> trainable;  // --trainable-params (the reference's own flag)
  bool inference = false;
};

RefPrecision ref_precision(Precision p) {
  switch (p) {
    case Precision::Fp32: return RefPrecision::Fp32;
    case Precision::Amp:
    case Precision::AmpFp16:
    case Precision::AmpBf16: return RefPrecision::Amp;
    case Precision::PureFp16: return RefPrecision::PureFp16;
    case Precision::PureBf16: return RefPrecision::PureBf16;
    case Precision::Fp16Master: return RefPrecision::Fp16Master;
  }
  return RefPrecision::Fp32;
}

RefSharding ref_sharding(Sharding s) {
  switch (s) {
    case Sharding::None: return RefSharding::None;
    case Sharding::Ddp: return RefSharding::Ddp;
    case Sharding::Zero1: return RefSharding::Zero1;
    case Sharding::Zero2:
    case Sharding::FsdpGradOp: return RefSharding::Zero2;
    default: break;
  }
  return RefSharding::Zero3;  // FSDP full shard maps to zero-3 (§2)
}

Optimizer ref_optimizer(Optimizer o) { return o == Optimizer::PagedAdamW8bit ? Optimizer::AdamW8bit : o; }

RefConfig ref_config(const JobSpec& job) {
  RefConfig c;
  c.batch = std::max(1, job.batch_size.value);
  if (job.seq_len.value) c.seq = *job.seq_len.value;
  if (job.image_size.value) c.image = *job.image_size.value;
  c.precision = ref_precision(job.precision.value);
  c.optimizer = ref_optimizer(job.optimizer.value);
  c.checkpointing = job.gradient_checkpointing.value;
  c.flash = job.attention.stated() && job.attention.value != Attention::Eager;
  c.accumulation = std::max(1, job.accumulation_steps.value);
  c.world = std::max(1, job.world_size.value.value_or(1));  // the target's count is not used (§3.11)
  c.sharding = ref_sharding(job.sharding.value);
  c.offload_optimizer = job.offload_optimizer.value;
  c.offload_params = job.offload_params.value;
  c.generation = job.generation.value;
  c.max_context = job.max_context.value;
  c.frozen_fraction = job.frozen_fraction.value;
  c.trainable = job.trainable_params.value;
  c.inference = job.inference_only.value || job.generation.value;
  return c;
}

struct RefBytes {
  int param, grad, act, master, cast;
};
RefBytes ref_bytes(RefPrecision p) {
  switch (p) {
    case RefPrecision::Fp32: return {4, 4, 4, 0, 0};
    case RefPrecision::Amp: return {4, 4, 2, 0, 2};
    case RefPrecision::PureFp16:
    case RefPrecision::PureBf16: return {2, 2, 2, 0, 0};
    case RefPrecision::Fp16Master: return {2, 2, 2, 4, 0};
  }
  return {4, 4, 4, 0, 0};
}

// §3.4: states and bytes per state, fixed per kind.
std::pair<double, double> ref_optimizer_states(Optimizer o) {
  switch (o) {
    case Optimizer::Sgd: return {0, 4};
    case Optimizer::SgdMomentum: return {1, 4};
    case Optimizer::Adam:
    case Optimizer::AdamW: return {2, 4};
    case Optimizer::AdamW8bit:
    case Optimizer::PagedAdamW8bit: return {2, 1};
    case Optimizer::Adafactor: return {0.1, 4};
    case Optimizer::Lion: return {1, 4};
    case Optimizer::Lion8bit: return {1, 1};
    case Optimizer::RmsProp:
    case Optimizer::Adagrad: return {1, 4};
  }
  return {2, 4};
}

int64_t trunc(double v) { return saturated_bytes(v); }

struct RefProfile {
  const Architecture* arch = nullptr;
  int64_t params = 0;
  double half_width = 0.10;
};

// §3.7.1 + §3.7.4 / §3.8.1 / §3.7.3 / §3.7.5.
std::optional<double> ref_activations(const RefProfile& p, const RefConfig& c, int act) {
  const double scale = act / 2.0, b = double(c.batch);
  if (p.arch && p.arch->cnn) {
    const CnnProfile& cnn = *p.arch->cnn;
    double per_sample = double(cnn.activation_bytes_per_sample);
    if (c.image) per_sample *= std::pow(double(*c.image) / cnn.reference_image_size, 2.0);
    double total = per_sample * b * scale;
    if (c.checkpointing) total *= 0.3;
    if (c.inference) total *= 0.2;
    return total;
  }
  if (!p.arch || !p.arch->shape) return std::nullopt;
  const Shape& s = *p.arch->shape;
  const double h = s.hidden, a = s.heads, L = s.layers;
  const double c_lin = s.uses_dropout ? 36.0 : 32.0, c_attn = s.uses_dropout ? 6.0 : 2.0;
  if (c.generation) {
    const double context = double(c.max_context.value_or(c.seq.value_or(s.max_position > 0 ? s.max_position : 1)));
    const double scores = c.flash ? 0.0 : 2.0 * a * context * b;
    return (c_lin * b * h + scores) * 2.0 * scale;
  }
  const double seq = double(c.seq.value_or(s.max_position));
  double body = 0;
  if (p.arch->family == Family::EncoderDecoder) {
    double enc_linear = 0, dec_linear = 0, cross_kv = 0, attn = 0;
    if (s.activation_family == "t5") enc_linear = 48.44, dec_linear = 60.58, cross_kv = 4.05, attn = 6.0;
    else if (s.activation_family == "whisper") enc_linear = 33.20, dec_linear = 40.21, cross_kv = 4.19, attn = 2.0;
    else return std::nullopt;
    const double s_enc = s.activation_family == "whisper" ? 1500.0 : seq, Ld = s.decoder_layers;
    const double enc = L * (enc_linear * h * s_enc + (c.flash ? 0 : attn * a * s_enc * s_enc));
    const double dec = Ld * (dec_linear * h * seq + cross_kv * h * s_enc +
                             (c.flash ? 0 : attn * a * seq * seq + attn * a * seq * s_enc));
    const double total = (enc + dec) * b;
    if (c.checkpointing) body = (2.0 * b * h * (L * s_enc + Ld * seq) + total / (L + Ld)) * scale;
    else if (c.inference) body = total * 2.0 / (L + Ld) * scale;
    else body = total * scale;
  } else {
    const double linear = c_lin * seq * b * h;
    const double attention = c.flash ? 0.0 : c_attn * a * seq * seq * b;
    if (c.checkpointing) body = (2.0 * seq * b * h * L + (linear + attention)) * scale;
    else if (c.inference) body = (linear + attention) * 2.0 * scale;
    else body = (linear + attention) * L * scale;
  }
  double head = 0;
  if (s.has_lm_head && s.vocab > 0) head = b * seq * s.vocab * (c.inference ? double(act) : 14.0);
  return body + head;
}

double ref_kv_cache(const RefProfile& p, const RefConfig& c, int act) {
  if (!c.generation || !p.arch || !p.arch->shape) return 0;
  const Shape& s = *p.arch->shape;
  const std::optional<int64_t> context =
      c.max_context ? c.max_context : (c.seq ? c.seq : (s.max_position > 0 ? std::optional<int64_t>(s.max_position) : std::nullopt));
  if (!context) return 0;
  const double d_head = double(s.hidden / s.heads);  // h // a: the stored head_dim is ignored
  return 2.0 * s.layers * s.kv_heads_or_heads() * d_head * double(*context) * double(c.batch) * act;
}

Term ref_term(std::string key, std::string label, int64_t bytes) {
  return Term{std::move(key), std::move(label), bytes, 0.0, Provenance::Published, "torch-preflight 0.4"};
}

struct RefResult {
  std::vector<Term> terms;
  int64_t total = 0, low = 0, high = 0;
  double spread = 0;
  bool activations_known = true;
};

RefResult ref_evaluate(const RefProfile& p, const RefConfig& c, std::optional<int64_t> context_bytes) {
  const RefBytes bytes = ref_bytes(c.precision);
  const bool training = !c.inference;
  const double W = c.world;
  const bool z1 = c.sharding == RefSharding::Zero1, z2 = c.sharding == RefSharding::Zero2,
             z3 = c.sharding == RefSharding::Zero3;
  const double P = double(p.params);
  const double Pt = c.trainable ? std::min(P, double(*c.trainable))
                   : c.frozen_fraction > 0 ? double(trunc(P * (1.0 - c.frozen_fraction))) : P;
  const auto [states, per_state] = ref_optimizer_states(c.optimizer);
  RefResult r;
  const int64_t weights = trunc(P * bytes.param / (z3 ? W : 1.0));
  const int64_t grads = training ? trunc(Pt * bytes.grad / (z2 || z3 ? W : 1.0)) : 0;
  const int64_t opt = training && !c.offload_optimizer ? trunc(Pt * states * per_state / (z1 || z2 || z3 ? W : 1.0)) : 0;
  const int64_t master = training && !c.offload_optimizer ? trunc(Pt * bytes.master / (z1 || z2 || z3 ? W : 1.0)) : 0;
  const int64_t cast = trunc(P * bytes.cast / (z3 ? W : 1.0));
  const std::optional<double> act = ref_activations(p, c, bytes.act);
  r.activations_known = act.has_value();
  const int64_t activations = act ? trunc(*act) : 0;
  const int64_t kv = trunc(ref_kv_cache(p, c, bytes.act));
  const int64_t context = context_bytes.value_or(kDefaultContext);
  const int64_t frag = trunc(kFragmentation * double(weights + grads + opt + master + cast + activations));
  r.terms = {ref_term("weights", "weights", weights),
             ref_term("gradients", "gradients", grads),
             ref_term("optimizer_state", "optimizer state", opt),
             ref_term("master_weights", "master weights", master),
             ref_term("autocast_cache", "autocast cache", cast),
             ref_term("activations", "activations", activations),
             ref_term("KV_cache", "KV cache", kv),
             ref_term("CUDA_context", "CUDA context", context),
             ref_term("fragmentation", "fragmentation", frag)};
  for (const Term& t : r.terms) r.total += t.bytes;
  r.spread = std::min(p.half_width + (r.activations_known ? 0.0 : kUnknownActivationSpread), 1.0);
  r.low = trunc(double(r.total) * (1.0 - r.spread));
  r.high = trunc(double(r.total) * (1.0 + r.spread));
  return r;
}

// §7.1: the candidate table, in evaluation order.
struct RefCandidate {
  std::string label;
  int disruption;
  std::string group;
  std::string note;
  std::function<bool(const RefConfig&)> applicable;
  std::function<void(RefConfig&)> apply;
};

std::vector<RefCandidate> ref_candidates() {
  auto not_zero3_with = [](int w) {
    return [w](const RefConfig& c) { (void)w; return !(c.sharding == RefSharding::Zero3 && c.world >= 2); };
  };
  auto shard = [](int w) { return [w](RefConfig& c) { c.sharding = RefSharding::Zero3; c.world = w; }; };
  return {
      {"flash attention / SDPA", 0, "attention", "mathematically equivalent, removes the O(seq^2) attention term",
       [](const RefConfig& c) { return !c.flash; }, [](RefConfig& c) { c.flash = true; }},
      {"gradient checkpointing", 1, "checkpointing", "same result, roughly 30% slower",
       [](const RefConfig& c) { return !c.checkpointing; }, [](RefConfig& c) { c.checkpointing = true; }},
      {"8-bit AdamW (bitsandbytes)", 1, "optimizer", "quantised optimizer state, minimal quality impact",
       [](const RefConfig& c) { return c.optimizer == Optimizer::Adam || c.optimizer == Optimizer::AdamW; },
       [](RefConfig& c) { c.optimizer = Optimizer::AdamW8bit; }},
      {"Adafactor optimizer", 2, "optimizer", "factored second moment",
       [](const RefConfig& c) { return c.optimizer != Optimizer::Adafactor; },
       [](RefConfig& c) { c.optimizer = Optimizer::Adafactor; }},
      {"mixed precision (autocast)", 2, "precision", "low-precision activations",
       [](const RefConfig& c) { return c.precision == RefPrecision::Fp32; },
       [](RefConfig& c) { c.precision = RefPrecision::Amp; }},
      {"pure bf16 weights", 3, "precision", "bf16 weights and gradients",
       [](const RefConfig& c) { return c.precision != RefPrecision::PureFp16 && c.precision != RefPrecision::PureBf16; },
       [](RefConfig& c) { c.precision = RefPrecision::PureBf16; }},
      {"halve micro-batch (2x accumulation)", 2, "batch", "same global batch, more steps",
       [](const RefConfig& c) { return c.batch >= 4; }, [](RefConfig& c) { c.batch /= 2; c.accumulation *= 2; }},
      {"quarter micro-batch (4x accumulation)", 3, "batch", "same global batch, more steps",
       [](const RefConfig& c) { return c.batch >= 8; }, [](RefConfig& c) { c.batch /= 4; c.accumulation *= 4; }},
      {"FSDP / ZeRO-3 across 2 GPUs", 3, "sharding", "shards weights, gradients and state", not_zero3_with(2), shard(2)},
      {"FSDP / ZeRO-3 across 4 GPUs", 4, "sharding", "shards weights, gradients and state", not_zero3_with(4), shard(4)},
      {"FSDP / ZeRO-3 across 8 GPUs", 4, "sharding", "shards weights, gradients and state", not_zero3_with(8), shard(8)},
      {"LoRA / freeze the backbone", 5, "freeze", "trains adapters only",
       [](const RefConfig& c) { return c.frozen_fraction <= 0.5; }, [](RefConfig& c) { c.frozen_fraction = 0.99; }},
  };
}

Remediation ref_remediation(std::string label, int disruption, std::string note, const RefResult& base,
                            const RefResult& changed, int64_t usable) {
  Remediation r;
  r.label = std::move(label);
  r.changes = {r.label};
  r.saved = base.total - changed.total;
  r.new_total = changed.total;
  r.new_low = changed.low;
  r.new_high = changed.high;
  r.new_band = band_for(changed.low, changed.total, changed.high, usable);
  r.fits = changed.high < usable;
  r.disruption = disruption;
  r.note = std::move(note);
  return r;
}

std::optional<Remediation> ref_greedy_stack(const RefProfile& p, const RefConfig& base_config, const RefResult& base,
                                            const std::vector<RefCandidate>& candidates, int64_t usable,
                                            std::optional<int64_t> context) {
  std::vector<const RefCandidate*> order;
  for (const RefCandidate& c : candidates) order.push_back(&c);
  std::stable_sort(order.begin(), order.end(), [](auto* a, auto* b) { return a->disruption < b->disruption; });
  RefConfig config = base_config;
  RefResult current = base;
  std::vector<std::string> used_groups, labels;
  int max_disruption = 0;
  for (const RefCandidate* c : order) {
    if (std::find(used_groups.begin(), used_groups.end(), c->group) != used_groups.end() || !c->applicable(config))
      continue;
    RefConfig next = config;
    c->apply(next);
    RefResult evaluated = ref_evaluate(p, next, context);
    if (evaluated.total >= current.total) continue;
    config = next;
    current = evaluated;
    used_groups.push_back(c->group);
    labels.push_back(c->label);
    max_disruption = std::max(max_disruption, c->disruption);
    std::string joined;
    for (const std::string& l : labels) joined += (joined.empty() ? "" : " + ") + l;
    if (current.high < usable)
      return ref_remediation(joined, max_disruption + 1, "the smallest combination that fits", base, current, usable);
    if (labels.size() == 4) break;
  }
  if (labels.empty()) return std::nullopt;
  std::string joined;
  for (const std::string& l : labels) joined += (joined.empty() ? "" : " + ") + l;
  const std::string note = current.total < usable
                               ? "lands inside the card but not inside the error margin: it may run, with no headroom"
                               : "does not fit even combined: a larger GPU, more devices or a parameter-efficient method";
  Remediation r = ref_remediation(joined, max_disruption + 1, note, base, current, usable);
  r.fits = false;
  return r;
}

std::vector<Remediation> ref_solver(const RefProfile& p, const RefConfig& config, const RefResult& base, int64_t usable,
                                    std::optional<int64_t> context, std::size_t limit) {
  const std::vector<RefCandidate> candidates = ref_candidates();
  std::vector<Remediation> out;
  for (const RefCandidate& c : candidates) {
    if (!c.applicable(config)) continue;
    RefConfig changed = config;
    c.apply(changed);
    const RefResult evaluated = ref_evaluate(p, changed, context);
    if (base.total - evaluated.total <= 0) continue;
    out.push_back(ref_remediation(c.label, c.disruption, c.note, base, evaluated, usable));
  }
  const bool any_fits = std::any_of(out.begin(), out.end(), [](const Remediation& r) { return r.fits; });
  if (!any_fits)
    if (auto stack = ref_greedy_stack(p, config, base, candidates, usable, context)) out.push_back(*stack);
  std::stable_sort(out.begin(), out.end(), [](const Remediation& a, const Remediation& b) {
    if (a.fits != b.fits) return a.fits;
    if (a.disruption != b.disruption) return a.disruption < b.disruption;
    return a.saved > b.saved;
  });
  if (out.size() > limit) out.resize(limit);
  return out;
}

std::string gib(int64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GiB", double(bytes) / double(int64_t(1) << 30));
  return buf;
}

void ref_notes(const RefProfile& p, const RefConfig& c, const RefResult& r, const std::optional<Target>& target,
               std::vector<std::string>& notes) {
  if (c.accumulation > 1) notes.push_back("gradient accumulation does not change the peak");
  if (c.precision == RefPrecision::Amp) notes.push_back("autocast keeps fp32 parameters");
  if (target && !target->bf16 && (c.precision == RefPrecision::Amp || c.precision == RefPrecision::PureBf16))
    notes.push_back("no bf16 on this card: fp16 will be used");
  if (c.sharding == RefSharding::Ddp && c.world > 1) notes.push_back("DDP replicates everything");
  const Shape* s = p.arch && p.arch->shape ? &*p.arch->shape : nullptr;
  if (s && !c.flash && c.seq && *c.seq >= 2048) notes.push_back("O(seq^2) attention dominates");
  if (!r.activations_known) notes.push_back("activations unknown: the real peak is higher");
  if (r.terms[6].bytes > 0 && !c.max_context) notes.push_back("KV cache sized from the sequence length only");
  if (c.offload_params) notes.push_back("offload_param detected but not subtracted: the real peak is lower");
  (void)gib;
}

}  // namespace

int64_t CompatEstimate::term_bytes(std::string_view key) const {
  for (const Term& t : breakdown)
    if (t.key == key) return t.bytes;
  return 0;
}

CompatEstimate compat_estimate(const JobSpec& job, const std::optional<Target>& target, const Catalog& catalog,
                               std::size_t remediation_limit) {
  CompatEstimate out;
  RefProfile p;
  p.arch = job.model.value.empty() ? nullptr : catalog.find_architecture(job.model.value);
  if (job.params.value) {
    p.params = *job.params.value;
    p.half_width = 0.20;
    if (p.arch && std::llabs(p.params - p.arch->params) > p.arch->params / 100) p.arch = nullptr;
  } else if (p.arch) {
    p.params = p.arch->anchor_params.value_or(p.arch->params);
  }
  if (p.params <= 0) {
    out.unknown_reason = "the reference resolves no profile for this model";
    return out;
  }
  out.known = true;
  out.model_id = p.arch ? p.arch->id : "custom";
  out.params = p.params;
  const RefConfig config = ref_config(job);
  std::optional<int64_t> context;
  if (target && target->gpu && target->gpu->anchor && target->gpu->anchor->measured_context_mib)
    context = *target->gpu->anchor->measured_context_mib * kMiB;
  const RefResult r = ref_evaluate(p, config, context);
  out.breakdown = r.terms;
  out.total = r.total;
  out.low = r.low;
  out.high = r.high;
  out.spread = r.spread;
  out.activations_known = r.activations_known;
  ref_notes(p, config, r, target, out.notes);
  if (!target) return out;
  out.usable_bytes = target->reference_usable_bytes;
  out.utilization = double(r.total) / double(std::max<int64_t>(1, out.usable_bytes));
  out.band = band_for(r.low, r.total, r.high, out.usable_bytes);
  if (band_is_failure(out.band)) out.remediations = ref_solver(p, config, r, out.usable_bytes, context, remediation_limit);
  return out;
}

std::vector<CompatDifference> compat_differences(const Estimate& ours, const CompatEstimate& ref) {
  std::vector<CompatDifference> out;
  if (!ours.known || !ref.known) return out;
  auto ours_of = [&](std::string_view key) { return ours.term_bytes(key); };
  const int64_t our_acts = ours_of("activations") + ours_of("logits") + ours_of("backward_workspace");
  const std::string phase = ours.peak() ? ours.peak()->name : "";
  auto add = [&](std::string term, int64_t reference, int64_t preflight, std::string why) {
    const int64_t scale = std::max<int64_t>({reference, preflight, 1});
    // In doubles: byte counts saturate near 64 PiB, where `* 100` would overflow int64.
    if (std::fabs(double(reference) - double(preflight)) * 100.0 < double(scale)) return;  // within 1 %
    out.push_back({std::move(term), reference, preflight, std::move(why)});
  };
  add("gradients", ref.term_bytes("gradients"), ours_of("gradients"),
      "the peak is the '" + phase + "' phase, not a sum: gradients freed by zero_grad(set_to_none=True) are absent "
      "before the optimizer step; present at the step");
  add("optimizer_state", ref.term_bytes("optimizer_state"), ours_of("optimizer_state"),
      "state bytes follow the parameter dtype (torch); 8-bit keeps 32-bit state for small tensors");
  add("autocast_cache", ref.term_bytes("autocast_cache"), ours_of("autocast_cache"),
      "only matmul weights are cast (not embeddings or norms), and only while the graph lives");
  add("activations", ref.term_bytes("activations"), our_acts,
      "derived per block from the tensors autograd saves (dtype-exact under autocast), plus the loss's "
      "gradient buffers at the phase they peak");
  add("KV_cache", ref.term_bytes("KV_cache"), ours_of("KV_cache"),
      "the stored head_dim, the decoder's layer count, beams, and the prefill / decode phase that peaks");
  add("CUDA_context", ref.term_bytes("CUDA_context"), ours_of("CUDA_context"),
      "per-card measured value where one exists, else an assumed 512 MiB for current CUDA stacks");
  add("fragmentation", ref.term_bytes("fragmentation"), ours_of("fragmentation"),
      "allocator overhead fitted to measured reserved peaks, applied to the whole phase peak");
  if (ours_of("optimizer_step_temporaries") > 0)
    out.push_back({"optimizer_step_temporaries", 0, ours_of("optimizer_step_temporaries"),
                   "the foreach optimizer step allocates one parameter-sized temporary (not in the reference)"});
  if (ours.target && ref.usable_bytes != ours.target->usable_bytes)
    out.push_back({"usable_bytes", ref.usable_bytes, ours.target->usable_bytes,
                   "usable memory is the driver-reported / runtime-visible total, not nominal x (1 - reserve)"});
  return out;
}

}  // namespace preflight::estimator
