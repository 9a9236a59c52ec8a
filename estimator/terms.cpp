// Cost terms: one function each, formula and constant provenance beside it.
//
// Conventions: P = every parameter, Pt = trainable base parameters, La = LoRA adapter
// parameters (fp32, with fp32 gradients and states, as peft keeps them under autocast).
// Divisors: ZeRO / FSDP shard degree (`Run::shard_degree`), tensor parallel t, pipeline
// stages p (a stage holds 1/p of the blocks).
#include "estimator/terms.h"

#include <algorithm>
#include <cmath>

#include "estimator/bytes.h"

namespace preflight::estimator {
namespace {

constexpr int64_t kMiB = int64_t(1) << 20;

// Fitted: the ratio of peak reserved to peak allocated bytes (plus everything the terms do
// not see: cuBLAS workspaces, rounding to the allocator's 512 B / 2 MiB granularity, blocks
// cached between phases), least squares on the relative error of the eight T4 peaks of
// estimator.md §9.5 with every other constant fixed. `preflight_estimator_calibration --fit`
// recomputes it; leave-one-out errors are printed there.
constexpr double kAllocatorFactor = 1.1611;
// Fitted alongside: 1.645 x the RMS leave-one-out residual of that fit, as a fraction of the
// phase peak (the 90 % half-width the interval uses for this term).
constexpr double kAllocatorHalfWidth = 0.046;
// Assumed: current stacks (CUDA 12, lazy module loading) hold a few hundred MiB per process
// before the first tensor; 1,343 MiB was reported for CUDA 11.2 without lazy loading (HF docs).
constexpr int64_t kDefaultContextBytes = 512 * kMiB;
constexpr double kAssumedContextHalfWidth = 0.5;
// Published defaults: DeepSpeed ZeRO reduce_bucket_size and stage-3 prefetch bucket.
constexpr double kZeroReduceBucketElements = 5e8;
constexpr double kZeroPrefetchElements = 5e7;
// Published: bitsandbytes block sizes (8-bit optimizer state 2048, nf4 weights 64, double
// quantisation groups 256 absmax values) and the minimum tensor size for 8-bit state (4096).
constexpr double kBnbOptimizerBlock = 2048;
constexpr double kNf4Block = 64;
constexpr double kDoubleQuantGroup = 256;

double param_uncertainty(const ModelProfile& p) { return p.confidence == Confidence::High ? 0.005 : 0.05; }

double model_parallel_divisor(const Run& r) { return double(r.tensor_parallel) * r.pipeline_parallel; }

int64_t quantized_params(const ModelProfile& p, const Run& r) {
  if (r.quantization == Quantization::None) return 0;
  // Assumed without a layout: block linears are about 90 % of a transformer's parameters.
  return p.layout ? p.layout->quantizable_params() : static_cast<int64_t>(double(p.params) * 0.9);
}

// Output rows of the quantised matrices (one fp32 scale per row for int8).
int64_t quantized_rows(const ModelProfile& p) {
  if (!p.layout) return 0;
  int64_t rows = 0;
  for (const BlockLinear& l : p.layout->linears)
    rows += l.out * l.copies * (l.decoder ? p.layout->decoder_layers : p.layout->encoder_layers);
  return rows;
}

double quantized_bytes(const ModelProfile& p, const Run& r, int64_t n) {
  switch (r.quantization) {
    case Quantization::Int8: return double(n) + 4.0 * double(quantized_rows(p));  // int8 + per-row fp32 scale
    case Quantization::Nf4:
      return r.double_quant ? n * 0.5 + n / kNf4Block + 4.0 * n / (kNf4Block * kDoubleQuantGroup)
                            : n * 0.5 + 4.0 * n / kNf4Block;
    case Quantization::Fp8: return double(n);  // per-tensor scales are negligible
    case Quantization::None: break;
  }
  return 0;
}

// State dtype of torch optimizers: the parameter's (2 B for pure bf16), fp32 when an fp32
// master copy is what the optimizer steps (fp16-master). estimator.md §10.2.
int state_dtype_bytes(const Run& r) { return r.master_bytes > 0 ? 4 : r.param_bytes; }

// Parameters of tensors below bitsandbytes' 4096-element minimum (biases, norms): these keep
// 32-bit optimizer state under 8-bit optimizers.
int64_t small_tensor_params(const ModelProfile& p) {
  if (!p.layout) return 0;
  const ModelLayout& l = *p.layout;
  int64_t biases = 0;
  for (const BlockLinear& m : l.linears)
    if (m.bias) biases += m.out * m.copies * (m.decoder ? l.decoder_layers : l.encoder_layers);
  return biases + l.block_other_params * l.encoder_layers + l.decoder_block_other_params * l.decoder_layers;
}

// HF Adafactor (beta1=None): factored second moment (a row and a column vector) for every
// matrix, a full one for vectors; fp32. Without a layout the reference's 0.1 x 4 B (assumed).
double adafactor_state_bytes(const ModelProfile& p, int64_t trainable) {
  if (!p.layout || trainable <= 0) return 0.4 * double(trainable);
  const ModelLayout& l = *p.layout;
  double factored = 0;
  for (const BlockLinear& m : l.linears)
    factored += double(m.in + m.out) * m.copies * (m.decoder ? l.decoder_layers : l.encoder_layers);
  const double vectors = double(small_tensor_params(p));
  const double share = double(trainable) / double(std::max<int64_t>(1, p.params));
  return 4.0 * (factored + vectors) * share;  // embedding tables factor to V + h: negligible
}

double optimizer_bytes_per_param(const ModelProfile& p, const Run& r, int64_t trainable) {
  const double s = state_dtype_bytes(r);
  const double small = double(std::min(small_tensor_params(p), trainable));
  const double large = double(trainable) - small;
  switch (r.optimizer) {
    case Optimizer::Sgd: return 0;
    case Optimizer::SgdMomentum:
    case Optimizer::Lion:
    case Optimizer::RmsProp:
    case Optimizer::Adagrad: return s * trainable;
    case Optimizer::Adam:
    case Optimizer::AdamW: return 2 * s * trainable;
    case Optimizer::AdamW8bit:
    case Optimizer::PagedAdamW8bit: return large * (2.0 + 8.0 / kBnbOptimizerBlock) + small * 8.0;
    case Optimizer::Lion8bit: return large * (1.0 + 4.0 / kBnbOptimizerBlock) + small * 4.0;
    case Optimizer::Adafactor: return adafactor_state_bytes(p, trainable);
  }
  return 0;
}

int64_t largest_matrix(const ModelProfile& p) {
  if (p.layout) return std::max(p.layout->largest_matrix_params(), p.layout->tied_head_params + p.layout->head_params);
  return p.params / 50;  // assumed: no layout, a 50th of the model
}

int64_t largest_block(const ModelProfile& p) {
  if (p.layout) return p.layout->largest_block_params();
  return static_cast<int64_t>(kZeroPrefetchElements);  // assumed: DeepSpeed's prefetch bucket
}

Term make(std::string key, std::string label, double bytes, double u, Provenance prov, std::string basis) {
  return Term{std::move(key), std::move(label), saturated_bytes(bytes), u, prov, std::move(basis)};
}

}  // namespace

std::string_view provenance_name(Provenance p) {
  switch (p) {
    case Provenance::Measured: return "measured";
    case Provenance::Fitted: return "fitted";
    case Provenance::Published: return "published";
    case Provenance::Derived: return "derived";
    case Provenance::Assumed: return "assumed";
    case Provenance::Unknown: break;
  }
  return "unknown";
}

double allocator_factor() { return kAllocatorFactor; }
int64_t default_cuda_context_bytes() { return kDefaultContextBytes; }

// weights = (P - Pq) x param bytes + quantised(Pq) + La x 4 [+ GPT-2's causal-mask buffers],
// divided by the shard degree (ZeRO-3 / FSDP full) and by t x p. Param offload keeps none
// resident (the gathered working set is its own term).
Term weights_term(const ModelProfile& p, const Run& r) {
  const int64_t pq = quantized_params(p, r);
  double bytes = double(p.params - pq) * r.param_bytes + quantized_bytes(p, r, pq) + 4.0 * double(r.lora_params);
  // Published: transformers' GPT2Attention registers a max_position^2 bool causal mask per layer.
  if (p.layout && p.shape() && p.id.starts_with("gpt2"))
    bytes += double(p.shape()->max_position) * p.shape()->max_position * p.shape()->layers;
  if (r.shards_params()) bytes /= r.shard_degree;
  if (r.offload_params && r.shards_params()) bytes = 4.0 * double(r.lora_params);
  std::string basis = std::to_string(p.params) + " params x " + std::to_string(r.param_bytes) + " B";
  if (pq > 0) basis += ", " + std::to_string(pq) + " quantised (" + std::string(quantization_name(r.quantization)) + ")";
  return make("weights", "weights", bytes / model_parallel_divisor(r), param_uncertainty(p), Provenance::Published,
              basis);
}

// gradients = Pt x grad bytes + La x 4, divided by the shard degree under ZeRO-2/3 / FSDP.
// Optimizer-in-backward never holds more than the largest parameter's gradient.
Term gradients_term(const ModelProfile& p, const Run& r, bool all) {
  if (!r.training) return make("gradients", "gradients", 0, 0, Provenance::Derived, "no backward");
  double bytes = double(r.trainable) * r.grad_bytes + 4.0 * double(r.lora_params);
  if (r.shards_gradients()) bytes /= r.shard_degree;
  std::string basis = std::to_string(r.trainable + r.lora_params) + " trainable x " + std::to_string(r.grad_bytes) + " B";
  if (r.optimizer_impl == OptimizerImpl::InBackward) {
    bytes = double(r.trainable > 0 ? largest_matrix(p) : 0) * r.grad_bytes;
    basis = "optimizer step in backward: one parameter's gradient at a time";
  } else if (!all) {
    bytes = 0;
    basis = "freed by zero_grad(set_to_none=True) before the forward pass";
  }
  return make("gradients", "gradients", bytes / model_parallel_divisor(r), param_uncertainty(p), Provenance::Published,
              basis);
}

// optimizer_state = states x state dtype x Pt (+ La x fp32 states), divided by the shard
// degree under ZeRO-1/2/3 / FSDP; zero when offloaded. Bytes per state follow the parameter
// dtype for torch optimizers (§10.2); bitsandbytes 8-bit keeps 32-bit state below 4096
// elements and an fp32 absmax per 2048-element block.
Term optimizer_state_term(const ModelProfile& p, const Run& r) {
  if (!r.training || r.offload_optimizer)
    return make("optimizer_state", "optimizer state", 0, 0, Provenance::Derived,
                r.training ? "offloaded to the CPU" : "no optimizer");
  Run adapters = r;
  adapters.param_bytes = 4;
  adapters.master_bytes = 0;
  ModelProfile no_layout;
  double bytes = optimizer_bytes_per_param(p, r, r.trainable) + optimizer_bytes_per_param(no_layout, adapters, r.lora_params);
  if (r.shards_optimizer()) bytes /= r.shard_degree;
  return make("optimizer_state", "optimizer state", bytes / model_parallel_divisor(r), param_uncertainty(p),
              Provenance::Published,
              std::string(optimizer_name(r.optimizer)) + ", state dtype " + std::to_string(state_dtype_bytes(r)) + " B" +
                  (r.lora_params > 0 ? " (LoRA adapters: fp32)" : ""));
}

// fp32 master copy of fp16 weights (DeepSpeed / Apex O2): 4 B x Pt, sharded like the state.
Term master_weights_term(const Run& r) {
  double bytes = r.training && !r.offload_optimizer ? double(r.trainable) * r.master_bytes : 0.0;
  if (r.shards_optimizer()) bytes /= r.shard_degree;
  return make("master_weights", "master weights", bytes / model_parallel_divisor(r), 0.005, Provenance::Published,
              "fp32 copy stepped by the optimizer");
}

// torch's foreach Adam/AdamW/RMSprop/Adagrad allocate one list of parameter-sized tensors
// (sqrt of the second moment) during step(): Pt x state bytes (published: torch.optim
// _multi_tensor_* implementations). Fused and bitsandbytes kernels update in place;
// DeepSpeed ZeRO steps with its fused Adam; for-loop / per-parameter steps hold two
// temporaries of one parameter at a time.
Term optimizer_step_term(const ModelProfile& p, const Run& r) {
  const std::string key = "optimizer_step_temporaries", label = "optimizer step temporaries";
  if (!r.training || r.offload_optimizer) return make(key, label, 0, 0, Provenance::Derived, "no step on the device");
  const bool sqrt_list = r.optimizer == Optimizer::Adam || r.optimizer == Optimizer::AdamW ||
                         r.optimizer == Optimizer::RmsProp || r.optimizer == Optimizer::Adagrad;
  const bool deepspeed = r.sharding == Sharding::Zero1 || r.sharding == Sharding::Zero2 || r.sharding == Sharding::Zero3;
  const double s = state_dtype_bytes(r);
  double bytes = 0;
  std::string basis = "fused / in-place update";
  if (sqrt_list && r.optimizer_impl == OptimizerImpl::Foreach && !deepspeed) {
    bytes = double(r.trainable) * s + 4.0 * double(r.lora_params);
    if (r.shards_optimizer()) bytes /= r.shard_degree;
    basis = "foreach step: one parameter-sized list (torch._foreach_sqrt)";
  } else if (r.optimizer_impl == OptimizerImpl::ForLoop || r.optimizer_impl == OptimizerImpl::InBackward ||
             r.optimizer == Optimizer::Adafactor || r.optimizer == Optimizer::Lion) {
    bytes = 2.0 * double(r.trainable > 0 ? largest_matrix(p) : 0) * s;
    basis = "per-parameter step: two temporaries of the largest parameter";
  }
  return make(key, label, bytes / model_parallel_divisor(r), 0.05, Provenance::Published, basis);
}

// Autocast's low-precision copies of every matmul weight (block linears, the head or tied
// embedding, poolers, conv front-ends; not embeddings or norms), kept by the graph from
// first use in forward to that layer's backward: 2 B each. Not in pure modes, not for
// quantised weights (bitsandbytes dequantises inside its own kernel). Under FSDP the copies
// are of gathered weights and are saved for backward, so they are not sharded; FSDP2 with a
// bf16 mixed-precision policy gathers bf16 directly (no copies).
Term autocast_cache_term(const ModelProfile& p, const Run& r) {
  const std::string key = "autocast_cache", label = "autocast cache";
  if (!r.autocast || r.sharding == Sharding::Fsdp2) return make(key, label, 0, 0, Provenance::Derived, "no autocast copies");
  int64_t matmul = p.is_cnn() || !p.layout ? p.params : p.layout->matmul_weight_params();
  if (r.quantization != Quantization::None) matmul -= quantized_params(p, r);
  const double bytes = double(std::max<int64_t>(0, matmul)) * r.act_bytes / model_parallel_divisor(r);
  return make(key, label, bytes, p.layout || p.is_cnn() ? 0.05 : 0.15, Provenance::Derived,
              std::to_string(matmul) + " matmul weights x " + std::to_string(r.act_bytes) + " B");
}

// DDP with gradient_as_bucket_view=False (its default) keeps flat bucket copies of every
// gradient for all-reduce (published: torch.nn.parallel.DistributedDataParallel docs).
Term ddp_buckets_term(const Run& r) {
  const bool on = r.training && r.sharding == Sharding::Ddp && r.world > 1 && !r.ddp_bucket_view;
  const double bytes = on ? double(r.trainable) * r.grad_bytes + 4.0 * double(r.lora_params) : 0.0;
  return make("communication_buffers", "DDP gradient buckets", bytes / model_parallel_divisor(r), 0.05,
              Provenance::Published, "gradient_as_bucket_view=False copies");
}

// DeepSpeed ZeRO-1/2: the contiguous reduce bucket (reduce_bucket_size elements of the
// gradient dtype; published default 5e8), capped at the trainable count.
Term zero_buckets_term(const ModelProfile& p, const Run& r) {
  const bool on = r.training && (r.sharding == Sharding::Zero1 || r.sharding == Sharding::Zero2) && r.world > 1;
  const double elements = std::min(kZeroReduceBucketElements, double(r.trainable + r.lora_params));
  (void)p;
  return make("communication_buffers", "ZeRO reduce bucket", on ? elements * r.grad_bytes : 0.0, 0.25,
              Provenance::Published, "reduce_bucket_size default 5e8 elements");
}

// ZeRO-3 / FSDP full shard: the working set of unsharded parameters, the current unit and
// the prefetched next one (assumed: one transformer block per FSDP unit, forward and
// backward prefetch of one unit; DeepSpeed caps it at stage3_max_live_parameters); in
// backward also the current unit's unsharded gradient before reduce-scatter.
Term gathered_params_term(const ModelProfile& p, const Run& r, bool backward) {
  const std::string key = "gathered_parameters", label = "gathered parameters (FSDP / ZeRO-3)";
  if (!r.shards_params() || r.shard_degree <= 1) return make(key, label, 0, 0, Provenance::Derived, "not sharded");
  const double gather_bytes = r.sharding == Sharding::Fsdp2 && r.autocast ? 2.0 : r.param_bytes;
  double bytes = 2.0 * double(largest_block(p)) * gather_bytes;
  if (backward && r.training) bytes += double(largest_block(p)) * r.grad_bytes;
  return make(key, label, bytes / r.tensor_parallel, 0.3, Provenance::Assumed, "two unsharded units (current + prefetch)");
}

// bitsandbytes / fp8 dequantise one matrix at a time into the compute dtype (assumed); only
// block linears are quantised, so the largest of those (not the head) bounds the buffer.
Term dequantization_term(const ModelProfile& p, const Run& r) {
  const double largest = p.layout ? double(p.layout->largest_matrix_params()) : double(largest_matrix(p));
  const double bytes = r.quantization == Quantization::None ? 0.0 : largest * 2.0;
  return make("dequantization", "dequantisation buffer", bytes / r.tensor_parallel, 0.25, Provenance::Assumed,
              "the largest quantised matrix in bf16");
}

// KV cache = 2 (K, V) x decoder layers x kv_heads x head_dim x context x sequences x bytes,
// with the stored head_dim (not h / a); encoder-decoder models add the cross-attention cache
// over the encoder output; a sliding-window model caps its local layers (half of them:
// Gemma-2 alternates) at the window. Heads divide over tensor-parallel ranks.
Term kv_cache_term(const ModelProfile& p, const Run& r, int64_t sequences, int64_t context) {
  const Shape* s = p.shape();
  if (!s || !r.generation) return make("KV_cache", "KV cache", 0, 0, Provenance::Derived, "no generation");
  const bool encdec = p.arch->family == Family::EncoderDecoder;
  const double layers = encdec ? s->decoder_layers : s->layers;
  const double per_position = 2.0 * s->kv_heads_or_heads() * s->head_dim_or_derived() * double(sequences) * r.kv_bytes;
  double positions = layers * double(context);
  if (s->sliding_window > 0 && context > s->sliding_window)
    positions = layers / 2 * double(context) + layers / 2 * double(s->sliding_window);
  if (encdec) positions += layers * double(s->encoder_seq_len > 0 ? s->encoder_seq_len : context);
  return make("KV_cache", "KV cache", per_position * positions / r.tensor_parallel, 0.01, Provenance::Derived,
              "2 x " + std::to_string(int(layers)) + " layers x " + std::to_string(s->kv_heads_or_heads()) +
                  " kv heads x " + std::to_string(s->head_dim_or_derived()) + " x " + std::to_string(context) +
                  " tokens x " + std::to_string(sequences) + " sequences x " + std::to_string(r.kv_bytes) + " B");
}

Term cuda_context_term(const Target* target, std::optional<int64_t> stated) {
  if (stated)
    return make("CUDA_context", "CUDA context", double(*stated), 0.05, Provenance::Measured,
                "stated (--cuda-context): measured on the user's stack");
  if (target && target->measured_context_bytes)
    return make("CUDA_context", "CUDA context", double(*target->measured_context_bytes), 0.05, Provenance::Measured,
                "measured on this card (CUDA 12, lazy loading)");
  return make("CUDA_context", "CUDA context", double(kDefaultContextBytes), kAssumedContextHalfWidth,
              Provenance::Assumed, "assumed 512 MiB (CUDA 12, lazy loading; 1.3 GiB on CUDA 11 without it)");
}

Term allocator_term(int64_t allocated) {
  const double bytes = double(allocated) * (kAllocatorFactor - 1.0);
  const double u = kAllocatorHalfWidth / (kAllocatorFactor - 1.0);
  return make("fragmentation", "allocator overhead", bytes, u, Provenance::Fitted,
              "x" + std::to_string(kAllocatorFactor).substr(0, 5) + " of the phase peak (fitted, 8 T4 runs)");
}

}  // namespace preflight::estimator
