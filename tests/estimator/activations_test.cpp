// Activations on hand-computed cases: the per-block inventory written out tensor by tensor.
#include <gtest/gtest.h>

#include "estimator/activations.h"
#include "test_support.h"

namespace preflight::estimator {
namespace {

using testing::kFlag;
using testing::training_job;

TrainingActivations activations_of(const JobSpec& job) {
  const ModelProfile p = resolve_model(job, builtin_catalog());
  std::vector<std::string> notes;
  return training_activations(p, resolve_run(job, p, nullptr, notes));
}

TEST(Activations, Gpt2UnderAutocastWithEagerAttention) {
  JobSpec j = training_job("gpt2", 1, 128, Precision::AmpFp16);
  j.attention.set(Attention::Eager, kFlag);
  const TrainingActivations a = activations_of(j);
  const int64_t h = 768, I = 3072, s = 128, heads = 12;
  // Per token and block: ln_1 input fp32 (4h + 8 mean/rstd), c_attn's fp16 input copy (2h),
  // q/k/v copies for the matmuls (3 x 2h), merged heads (2h), residual dropout mask (h),
  // ln_2 (4h + 8), c_fc's input copy (2h), NewGELU's fp32 pow input, tanh output and
  // 1 + tanh (3 x 4I) and 0.5x (2I), c_proj's fp16 copy (2I), MLP dropout mask (h).
  const int64_t per_token = (4 * h + 8) + 2 * h + 6 * h + 2 * h + h + (4 * h + 8) + 2 * h + 14 * I + 2 * I + h;
  EXPECT_EQ(per_token, 86 * h + 16);
  // Scores per key position: fp32 softmax output (4), dropout mask (1), fp16 dropped copy (2).
  const int64_t per_layer = per_token * s + 7 * heads * s * s;
  // Outside the blocks: embedding dropout mask (h), ln_f (4h + 8), lm_head's fp16 input (2h).
  const int64_t outside = (h + 4 * h + 8 + 2 * h) * s;
  EXPECT_EQ(a.per_layer, per_layer);
  EXPECT_EQ(a.retained, per_layer * 12 + outside);
  const int64_t logits = s * 50257;
  EXPECT_EQ(a.logits_held, 2 * logits);
  EXPECT_EQ(a.logits_log_probs, 4 * logits);
  EXPECT_EQ(a.logits_backward, 8 * logits);
}

TEST(Activations, LlamaPureBf16WithSdpa) {
  const TrainingActivations a = activations_of(training_job("llama-2-7b", 2, 512, Precision::PureBf16));
  const int64_t h = 4096, I = 11008, heads = 32, tokens = 2 * 512;
  // RMSNorm: fp32 copy (4h) + rstd (4) + the normalised bf16 tensor for its weight (2h), twice;
  // q/k/v inputs share the norm output (2h) and so do gate/up (2h); q, k, v as SDPA keeps them
  // (repeat_kv expands K/V: 3 x 2h); SDPA output (2h) + fp32 logsumexp (4 per head); merged
  // heads (2h); SwiGLU keeps gate, act(gate), up (3 x 2I) and the product for down (2I).
  const int64_t per_token = 2 * (4 * h + 4 + 2 * h) + 2 * h + 2 * h + 6 * h + 2 * h + 4 * heads + 2 * h + 8 * I;
  EXPECT_EQ(a.per_layer, per_token * tokens);
  EXPECT_EQ(a.retained, per_token * tokens * 32 + (4 * h + 4) * tokens + 2 * h * tokens);
}

TEST(Activations, CheckpointingKeepsBlockInputsAndOneBlock) {
  JobSpec j = training_job("llama-2-7b", 2, 512, Precision::PureBf16);
  const TrainingActivations full = activations_of(j);
  j.gradient_checkpointing.set(true, kFlag);
  const TrainingActivations ckpt = activations_of(j);
  const int64_t tokens = 2 * 512, outside = (4 * 4096 + 4) * tokens + 2 * 4096 * tokens;
  EXPECT_EQ(ckpt.retained, 32 * 2 * 4096 * tokens + full.per_layer + outside);
}

TEST(Activations, FrozenBaseDropsInputsKeptOnlyForWeightGradients) {
  JobSpec j = training_job("llama-2-7b", 1, 512, Precision::PureBf16);
  const TrainingActivations full = activations_of(j);
  j.peft.set(Peft::Lora, kFlag);
  const TrainingActivations lora = activations_of(j);
  EXPECT_LT(lora.per_layer, full.per_layer);
  // q_proj and v_proj adapters read the norm output: one shared 2h tensor comes back.
  const int64_t h = 4096, tokens = 512;
  const int64_t dropped = (2 * h /*norm weight grads*/ * 2 + 2 * h + 2 * h + 2 * h + 2 * 11008) * tokens;
  EXPECT_EQ(full.per_layer - lora.per_layer, dropped - 2 * h * tokens);
}

TEST(Activations, CnnUsesMeasuredPerSampleBytes) {
  JobSpec j;
  j.model.set("resnet50", kFlag);
  j.batch_size.set(32, kFlag);
  j.precision.set(Precision::AmpFp16, kFlag);
  EXPECT_EQ(activations_of(j).retained, 43060992LL * 32);
  j.image_size.set(448, kFlag);
  EXPECT_EQ(activations_of(j).retained, 43060992LL * 32 * 4);  // area scaling
}

TEST(Activations, UnknownWithoutAShape) {
  JobSpec j;
  j.params.set(int64_t(7e9), kFlag);
  EXPECT_FALSE(activations_of(j).known);
}

TEST(Activations, TensorAndSequenceParallelDivide) {
  JobSpec j = training_job("llama-2-7b", 1, 2048, Precision::PureBf16);
  const int64_t one = activations_of(j).per_layer;
  j.tensor_parallel.set(4, kFlag);
  const int64_t tp = activations_of(j).per_layer;
  j.sequence_parallel.set(true, kFlag);
  const int64_t sp = activations_of(j).per_layer;
  EXPECT_LT(tp, one);
  EXPECT_GT(tp, one / 4);  // norms and residual stay replicated without SP
  EXPECT_NEAR(double(sp), double(one) / 4, double(one) * 0.001);
}

}  // namespace
}  // namespace preflight::estimator

namespace preflight::estimator {
namespace {

TEST(Activations, PipelineFirstStageHoldsOneMicroBatchPerStage) {
  JobSpec j = testing::training_job("llama-2-7b", 1, 1024, Precision::PureBf16);
  j.pipeline_parallel.set(4, testing::kFlag);
  j.accumulation_steps.set(8, testing::kFlag);
  const TrainingActivations a = activations_of(j);
  const int64_t tokens = 1024, h = 4096;
  const int64_t outside = (4 * h + 4) * tokens + 2 * h * tokens;
  EXPECT_EQ(a.retained, a.per_layer * 8 /*32 / 4 blocks*/ * 4 /*1F1B: 4 in flight*/ + outside);
}

TEST(Activations, DecodeStepIsOneTokenPerSequence) {
  JobSpec j;
  j.model.set("llama-3-8b", testing::kFlag);
  j.generation.set(true, testing::kFlag);
  j.precision.set(Precision::PureBf16, testing::kFlag);
  const ModelProfile p = resolve_model(j, builtin_catalog());
  std::vector<std::string> notes;
  const estimator::Run r = resolve_run(j, p, nullptr, notes);
  const ForwardActivations d = decode_step(p, r, 16, 8192);
  // residual + norm output (2 x 2h) and the widest of SDPA's nothing and SwiGLU's 3 x 2I.
  EXPECT_EQ(d.working_set, (2 * 2 * 4096 + 3 * 2 * 14336) * 16);
  EXPECT_EQ(d.logits, 16LL * 128256 * (2 + 8));  // logits, fp32 copy, probabilities
}

}  // namespace
}  // namespace preflight::estimator
