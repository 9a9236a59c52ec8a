#include "estimator/run.h"

#include <algorithm>

namespace preflight::estimator {
namespace {

bool pure_low_precision(Precision p) {
  return p == Precision::PureFp16 || p == Precision::PureBf16 || p == Precision::Fp16Master;
}

void resolve_numerics(const JobSpec& job, const Target* target, Run& r, std::vector<std::string>& notes) {
  r.precision = job.precision.value;
  r.autocast = r.precision == Precision::Amp || r.precision == Precision::AmpFp16 || r.precision == Precision::AmpBf16;
  const bool low = pure_low_precision(r.precision);
  r.param_bytes = low ? 2 : 4;
  r.grad_bytes = r.param_bytes;
  r.act_bytes = r.precision == Precision::Fp32 ? 4 : 2;
  r.residual_bytes = low ? 2 : 4;
  r.master_bytes = r.precision == Precision::Fp16Master ? 4 : 0;
  r.quantization = job.quantization.value;
  r.double_quant = job.double_quant.value;
  const bool wants_bf16 = r.precision == Precision::AmpBf16 || r.precision == Precision::PureBf16;
  if (target && !target->bf16 && wants_bf16)
    notes.push_back(target->display_name + " has no native bf16: expect fp16 (same memory, needs a GradScaler)");
  if (r.autocast) notes.push_back("autocast keeps fp32 weights and adds low-precision copies for every matmul");
}

void resolve_workload(const JobSpec& job, const ModelProfile& profile, Run& r, std::vector<std::string>& notes) {
  r.generation = job.generation.value;
  r.training = !job.inference_only.value && !r.generation;
  r.optimizer = job.optimizer.value;
  r.optimizer_impl = job.optimizer_impl.value;
  r.grads_set_to_none = job.grads_set_to_none.value;
  r.accumulation = std::max(1, job.accumulation_steps.value);
  r.checkpointing = job.gradient_checkpointing.value && r.training;
  r.activation_offload = job.activation_offload.value && r.training;
  r.attention = job.attention.value;
  r.loss = job.loss_impl.value;
  r.head = job.head.value;
  r.batch = std::max(1, job.batch_size.value);
  const Shape* shape = profile.shape();
  if (job.seq_len.value) {
    r.seq = *job.seq_len.value;
  } else if (shape) {
    r.seq = shape->max_position;
    r.seq_defaulted = true;
    if (!profile.is_cnn() && shape->vocab > 0 && profile.arch->family != Family::VisionTransformer && !r.generation) {
      // A text model's maximum position (131,072 for Qwen2.5) is what the model accepts,
      // not what a fine-tune feeds it: the point estimate assumes the length transformers'
      // run_clm example falls back to, and the maximum bounds the interval (estimate.cpp).
      r.seq = std::min<int64_t>(shape->max_position, assumed_sequence_length());
      notes.push_back("sequence length not read: " + std::to_string(r.seq) +
                      " tokens assumed for the estimate; the model's maximum position (" +
                      std::to_string(shape->max_position) + ") bounds the interval; give --seq-len");
    }
  }
  if (shape && profile.arch->family == Family::VisionTransformer && job.image_size.value && shape->patch_size > 0) {
    const int64_t side = *job.image_size.value / shape->patch_size;
    if (!job.seq_len.value) r.seq = side * side + 1;  // patches + [CLS]
  }
  r.image = job.image_size.value.value_or(profile.is_cnn() ? profile.arch->cnn->reference_image_size : 0);
  if (r.accumulation > 1)
    notes.push_back("gradient accumulation keeps every gradient alive across micro-batches: charged in forward/backward");
}

bool head_has_vocabulary(const ModelProfile& profile, Head head) {
  const Shape* s = profile.shape();
  if (!s || s->vocab <= 0) return false;
  switch (head) {
    case Head::CausalLm:
    case Head::MaskedLm: return true;
    case Head::SequenceClassification:
    case Head::None: return false;
    case Head::CatalogDefault: break;
  }
  return s->has_lm_head;
}

void resolve_trainable(const JobSpec& job, const ModelProfile& profile, Run& r, std::vector<std::string>& notes) {
  r.frozen_fraction = std::clamp(job.frozen_fraction.value, 0.0, 1.0);
  const int64_t trainable_base = profile.params - profile.frozen_table_params;
  const Peft peft = job.peft.value == Peft::None && job.quantization.value != Quantization::None && r.training
                        ? Peft::Qlora  // k-bit weights cannot be trained directly
                        : job.peft.value;
  if (peft == Peft::Qlora && r.quantization == Quantization::None) r.quantization = Quantization::Nf4;
  if (peft != Peft::None && r.training) {
    r.base_frozen = true;
    r.trainable = 0;
    if (job.trainable_params.value) {
      // The adapters' count as stated: their placement (for activations) still follows the
      // layout's plan where one exists.
      if (profile.layout) r.lora = lora_plan(*profile.layout, std::max(1, job.lora_rank.value), job.lora_targets.value);
      r.lora_params = *job.trainable_params.value;
    } else if (profile.layout) {
      r.lora = lora_plan(*profile.layout, std::max(1, job.lora_rank.value), job.lora_targets.value);
      r.lora_params = r.lora.trainable;
    } else {
      r.adapters_unknown = true;
      notes.push_back("LoRA on a model without a known layout: adapter size unknown (charged as 0)");
    }
    if (job.peft.value == Peft::None)
      notes.push_back("quantised weights are frozen: training them means adapters (QLoRA); rank " +
                      std::to_string(std::max(1, job.lora_rank.value)) + " assumed");
  } else {
    if (job.trainable_params.value && trainable_base > 0) {
      const int64_t stated = *job.trainable_params.value;
      if (stated > trainable_base)
        notes.push_back("--trainable-params " + std::to_string(stated) + " exceeds the model's " +
                        std::to_string(trainable_base) + " trainable parameters: all of them are charged");
      r.frozen_fraction = 1.0 - double(std::min(stated, trainable_base)) / double(trainable_base);
    }
    r.trainable = r.training ? static_cast<int64_t>(double(trainable_base) * (1.0 - r.frozen_fraction)) : 0;
    if (r.training && job.trainable_params.value) r.trainable = std::min(*job.trainable_params.value, trainable_base);
    r.base_frozen = r.frozen_fraction >= 1.0;
  }
  r.logits = head_has_vocabulary(profile, r.head);
}

void resolve_parallelism(const JobSpec& job, const Target* target, Run& r, std::vector<std::string>& notes) {
  r.sharding = job.sharding.value;
  r.tensor_parallel = std::max(1, job.tensor_parallel.value);
  r.pipeline_parallel = std::max(1, job.pipeline_parallel.value);
  r.sequence_parallel = job.sequence_parallel.value && r.tensor_parallel > 1;
  r.offload_optimizer = job.offload_optimizer.value;
  r.offload_params = job.offload_params.value;
  r.ddp_bucket_view = job.ddp_bucket_view.value;
  if (job.world_size.value) {
    r.world = std::max(1, *job.world_size.value);
  } else {
    const bool distributed = r.sharding != Sharding::None || r.tensor_parallel > 1 || r.pipeline_parallel > 1;
    r.world = distributed && target ? target->device_count : 1;
    if (distributed && target && target->device_count > 1)
      notes.push_back("world size " + std::to_string(r.world) + " from the target (" + target->count_basis + ")");
  }
  // In int64: each degree may be up to 2^16 (docs/numbers.md), so their product overflows int.
  const int64_t model_parallel = int64_t{r.tensor_parallel} * r.pipeline_parallel;
  const int data_parallel = static_cast<int>(std::max<int64_t>(1, r.world / model_parallel));
  r.shard_degree = data_parallel;
  if (r.sharding == Sharding::FsdpHybrid) {
    // HSDP shards inside a node and replicates across nodes: one node's devices, at most 8.
    const int per_node = target && target->instance ? std::min(target->device_count, 8) : std::min(data_parallel, 8);
    r.shard_degree = std::max(1, std::min(per_node, data_parallel));
  }
  if (r.autocast && (r.sharding == Sharding::FsdpFull || r.sharding == Sharding::FsdpHybrid || r.sharding == Sharding::Zero3))
    notes.push_back("torch.autocast under FSDP keeps a low-precision copy of every gathered weight until its backward "
                    "(not sharded); an FSDP MixedPrecision policy (--sharding fsdp2) gathers bf16 instead");
  if (r.sharding == Sharding::Ddp && r.world > 1) notes.push_back("DDP replicates weights, gradients and optimizer state on every rank");
  if (r.shards_optimizer() && r.shard_degree == 1)
    notes.push_back("sharding over one rank divides nothing: give --world-size or a multi-device target");
}

void resolve_generation(const JobSpec& job, const ModelProfile& profile, Run& r, std::vector<std::string>& notes) {
  if (!r.generation) return;
  const Shape* s = profile.shape();
  r.context = job.max_context.value.value_or(job.seq_len.value.value_or(s ? s->max_position : 0));
  if (!job.max_context.value)
    notes.push_back("KV cache sized from the sequence length alone (" + std::to_string(r.context) +
                    " tokens): give --max-context (prompt + generated)");
  r.prompt = std::min<int64_t>(job.prompt_len.value.value_or(r.context), r.context);
  r.beams = std::max(1, job.beams.value);
  r.kv_bytes = job.kv_cache_dtype.value == KvCacheDtype::Fp8 ? 1 : r.act_bytes;
  r.full_prompt_logits = job.full_prompt_logits.value;
}

}  // namespace

int64_t assumed_sequence_length() { return 1024; }

bool Run::shards_params() const {
  return sharding == Sharding::Zero3 || sharding == Sharding::FsdpFull || sharding == Sharding::FsdpHybrid ||
         sharding == Sharding::Fsdp2;
}
bool Run::shards_gradients() const {
  return shards_params() || sharding == Sharding::Zero2 || sharding == Sharding::FsdpGradOp;
}
bool Run::shards_optimizer() const { return shards_gradients() || sharding == Sharding::Zero1; }

Run resolve_run(const JobSpec& job, const ModelProfile& profile, const Target* target, std::vector<std::string>& notes) {
  Run r;
  resolve_numerics(job, target, r, notes);
  resolve_workload(job, profile, r, notes);
  resolve_trainable(job, profile, r, notes);
  resolve_parallelism(job, target, r, notes);
  resolve_generation(job, profile, r, notes);
  return r;
}

}  // namespace preflight::estimator
