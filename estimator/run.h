// A job spec resolved against a model and a target: concrete numbers the cost terms read
// (bytes per element of each tensor class, tokens, trainable counts, divisors). Resolution
// is where defaults meet the model (sequence = max position, world size = the target's
// device count for sharded plans) and where the notes about those choices are written.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "estimator/hardware.h"
#include "estimator/job.h"
#include "estimator/layout.h"
#include "estimator/profile.h"

namespace preflight::estimator {

struct Run {
  // Numerics (bytes per element).
  Precision precision = Precision::Fp32;
  bool autocast = false;      // torch.autocast casts fp32 weights and inputs per matmul
  int param_bytes = 4;        // weights as stored
  int grad_bytes = 4;         // gradients of trainable weights
  int act_bytes = 4;          // activations (compute dtype)
  int residual_bytes = 4;     // the residual stream / norm outputs (fp32 under autocast)
  int master_bytes = 0;       // fp32 master copy (fp16-master)
  Quantization quantization = Quantization::None;
  bool double_quant = true;

  // Workload.
  bool training = true;
  Optimizer optimizer = Optimizer::AdamW;
  OptimizerImpl optimizer_impl = OptimizerImpl::Foreach;
  bool grads_set_to_none = true;
  int accumulation = 1;
  bool checkpointing = false;
  bool activation_offload = false;
  Attention attention = Attention::Sdpa;
  LossImpl loss = LossImpl::Full;
  Head head = Head::CatalogDefault;
  bool logits = false;  // a vocabulary-sized output exists (LM head)
  int64_t batch = 1;
  int64_t seq = 0;      // tokens per sample (decoder length for encoder-decoder)
  int64_t image = 0;    // square side, pixels
  bool seq_defaulted = false;

  // Trainable parameters.
  int64_t trainable = 0;     // base parameters with gradients
  int64_t lora_params = 0;   // adapter parameters (fp32)
  LoraPlan lora;
  bool base_frozen = false;  // every base weight frozen (LoRA, QLoRA, frozen_fraction = 1)
  bool adapters_unknown = false;  // LoRA on a model without a layout: adapter count unknown
  double frozen_fraction = 0.0;

  // Parallelism.
  int world = 1;
  Sharding sharding = Sharding::None;
  int shard_degree = 1;  // ranks a sharded state is divided over (HSDP: devices per node)
  int tensor_parallel = 1;
  bool sequence_parallel = false;
  int pipeline_parallel = 1;
  bool offload_optimizer = false;
  bool offload_params = false;
  bool ddp_bucket_view = false;

  // Generation.
  bool generation = false;
  int64_t context = 0;  // tokens the KV cache holds
  int64_t prompt = 0;   // tokens of the prefill pass
  int beams = 1;
  int kv_bytes = 2;
  bool full_prompt_logits = false;

  bool shards_params() const;      // ZeRO-3 / FSDP full / hybrid / FSDP2
  bool shards_gradients() const;   // + ZeRO-2 / FSDP grad-op
  bool shards_optimizer() const;   // + ZeRO-1
};

/// Tokens per sample assumed when a text model's sequence length is neither stated nor read:
/// the block size transformers' run_clm example uses when the tokenizer allows more (1024);
/// an assumption, shown as one, with the model's maximum position as the interval's top.
int64_t assumed_sequence_length();

/// Resolves `job` for `profile` on `target` (may be null: no hardware). Appends the
/// notes the resolution implies (bf16 on a card without it, sequence defaulted, ...).
Run resolve_run(const JobSpec& job, const ModelProfile& profile, const Target* target,
                std::vector<std::string>& notes);

}  // namespace preflight::estimator
