// Every cost term on a hand-computed case. The expected values are written as the formula
// with the model's numbers, so a change to a term's formula shows here.
#include <gtest/gtest.h>

#include "estimator/terms.h"
#include "test_support.h"

namespace preflight::estimator {
namespace {

using testing::kFlag;
using testing::training_job;

struct Case {
  ModelProfile profile;
  Run run;
};

Case resolve(const JobSpec& job, const Target* target = nullptr) {
  Case c;
  c.profile = resolve_model(job, builtin_catalog());
  std::vector<std::string> notes;
  c.run = resolve_run(job, c.profile, target, notes);
  return c;
}

constexpr int64_t kLlama7b = 6738415616;
constexpr int64_t kGpt2 = 124439808;

TEST(Terms, WeightsFollowTheStoredDtypeAndQuantisation) {
  Case fp32 = resolve(training_job("llama-2-7b", 1, 512, Precision::Fp32));
  EXPECT_EQ(weights_term(fp32.profile, fp32.run).bytes, kLlama7b * 4);
  Case bf16 = resolve(training_job("llama-2-7b", 1, 512, Precision::PureBf16));
  EXPECT_EQ(weights_term(bf16.profile, bf16.run).bytes, kLlama7b * 2);
  // nf4 with double quantisation on the block linears, the rest (embeddings, head, norms) in bf16:
  // 0.5 B + an 8-bit absmax per 64 + an fp32 second-level scale per 64 x 256 (bitsandbytes).
  JobSpec q = training_job("llama-2-7b", 1, 512, Precision::PureBf16);
  q.inference_only.set(true, kFlag);
  q.quantization.set(Quantization::Nf4, kFlag);
  Case nf4 = resolve(q);
  const double n = (4.0 * 4096 * 4096 + 3.0 * 4096 * 11008) * 32;
  const double expected = (double(kLlama7b) - n) * 2 + n * 0.5 + n / 64 + 4 * n / (64 * 256);
  EXPECT_EQ(weights_term(nf4.profile, nf4.run).bytes, static_cast<int64_t>(expected));
  // GPT-2 also registers a 1024 x 1024 bool causal mask per layer.
  Case gpt2 = resolve(training_job("gpt2", 1, 128, Precision::Fp32));
  EXPECT_EQ(weights_term(gpt2.profile, gpt2.run).bytes, kGpt2 * 4 + 1024LL * 1024 * 12);
}

TEST(Terms, GradientsAreFreedBetweenStepsUnlessKeptOrAccumulated) {
  Case c = resolve(training_job("llama-2-7b", 1, 512, Precision::Fp32));
  EXPECT_EQ(gradients_term(c.profile, c.run, true).bytes, kLlama7b * 4);
  EXPECT_EQ(gradients_term(c.profile, c.run, false).bytes, 0);
  JobSpec sharded = training_job("llama-2-7b", 1, 512, Precision::PureBf16);
  sharded.sharding.set(Sharding::Zero2, kFlag);
  sharded.world_size.set(8, kFlag);
  Case z2 = resolve(sharded);
  EXPECT_EQ(gradients_term(z2.profile, z2.run, true).bytes, kLlama7b * 2 / 8);
  EXPECT_EQ(weights_term(z2.profile, z2.run).bytes, kLlama7b * 2);  // ZeRO-2 keeps full weights
}

TEST(Terms, OptimizerStateBytesFollowTheParameterDtype) {
  Case fp32 = resolve(training_job("llama-2-7b", 1, 512, Precision::Fp32));
  EXPECT_EQ(optimizer_state_term(fp32.profile, fp32.run).bytes, kLlama7b * 8);
  Case bf16 = resolve(training_job("llama-2-7b", 1, 512, Precision::PureBf16));
  EXPECT_EQ(optimizer_state_term(bf16.profile, bf16.run).bytes, kLlama7b * 4);  // torchtune's 2 x 2 B
  JobSpec master = training_job("llama-2-7b", 1, 512, Precision::Fp16Master);
  Case m = resolve(master);
  EXPECT_EQ(optimizer_state_term(m.profile, m.run).bytes, kLlama7b * 8);  // steps the fp32 master
  EXPECT_EQ(master_weights_term(m.run).bytes, kLlama7b * 4);  // ZeRO paper: 2 + 2 + 4 + 8 = 16 B
  JobSpec sgd = training_job("llama-2-7b", 1, 512, Precision::Fp32);
  sgd.optimizer.set(Optimizer::Sgd, kFlag);
  Case s = resolve(sgd);
  EXPECT_EQ(optimizer_state_term(s.profile, s.run).bytes, 0);
  // 8-bit: 2 B + two fp32 absmax per 2048 for large tensors, 8 B for tensors under 4096 elements.
  JobSpec eight = training_job("llama-2-7b", 1, 512, Precision::Fp32);
  eight.optimizer.set(Optimizer::AdamW8bit, kFlag);
  Case e = resolve(eight);
  const double small = (2.0 * 4096) * 32;  // two RMSNorm weights per block
  const double large = double(kLlama7b) - small;
  EXPECT_EQ(optimizer_state_term(e.profile, e.run).bytes, static_cast<int64_t>(large * (2 + 8.0 / 2048) + small * 8));
  JobSpec offload = training_job("llama-2-7b", 1, 512, Precision::Fp32);
  offload.offload_optimizer.set(true, kFlag);
  Case o = resolve(offload);
  EXPECT_EQ(optimizer_state_term(o.profile, o.run).bytes, 0);
}

TEST(Terms, AdafactorFactorsEveryMatrix) {
  JobSpec j = training_job("llama-2-7b", 1, 512, Precision::Fp32);
  j.optimizer.set(Optimizer::Adafactor, kFlag);
  Case c = resolve(j);
  const double per_block = 4.0 * (4096 + 4096) + 3.0 * (4096 + 11008) + 2.0 * 4096;
  EXPECT_EQ(optimizer_state_term(c.profile, c.run).bytes, static_cast<int64_t>(4.0 * per_block * 32));
}

TEST(Terms, ForeachStepHoldsOneParameterSizedTemporary) {
  Case c = resolve(training_job("gpt2", 4, 128, Precision::Amp));
  EXPECT_EQ(optimizer_step_term(c.profile, c.run).bytes, kGpt2 * 4);
  JobSpec fused = training_job("gpt2", 4, 128, Precision::Amp);
  fused.optimizer_impl.set(OptimizerImpl::Fused, kFlag);
  Case f = resolve(fused);
  EXPECT_EQ(optimizer_step_term(f.profile, f.run).bytes, 0);
}

TEST(Terms, AutocastCopiesOnlyMatmulWeights) {
  Case c = resolve(training_job("gpt2", 4, 128, Precision::Amp));
  const int64_t block_linears = (768LL * 2304 + 768 * 768 + 2 * 768 * 3072) * 12;
  EXPECT_EQ(autocast_cache_term(c.profile, c.run).bytes, (block_linears + 50257LL * 768) * 2);  // + the tied head
  Case pure = resolve(training_job("gpt2", 4, 128, Precision::PureBf16));
  EXPECT_EQ(autocast_cache_term(pure.profile, pure.run).bytes, 0);
}

TEST(Terms, CommunicationBuffersOfDdpAndZero) {
  JobSpec ddp = training_job("gpt2", 4, 128, Precision::Fp32);
  ddp.sharding.set(Sharding::Ddp, kFlag);
  ddp.world_size.set(4, kFlag);
  Case d = resolve(ddp);
  EXPECT_EQ(ddp_buckets_term(d.run).bytes, kGpt2 * 4);
  ddp.ddp_bucket_view.set(true, kFlag);
  EXPECT_EQ(ddp_buckets_term(resolve(ddp).run).bytes, 0);
  JobSpec z = training_job("llama-2-7b", 1, 512, Precision::Fp16Master);
  z.sharding.set(Sharding::Zero2, kFlag);
  z.world_size.set(8, kFlag);
  Case zc = resolve(z);
  EXPECT_EQ(zero_buckets_term(zc.profile, zc.run).bytes, static_cast<int64_t>(5e8 * 2));
}

TEST(Terms, GatheredWorkingSetOfFullSharding) {
  JobSpec j = training_job("llama-2-7b", 1, 512, Precision::PureBf16);
  j.sharding.set(Sharding::FsdpFull, kFlag);
  j.world_size.set(8, kFlag);
  Case c = resolve(j);
  const int64_t block = 4 * 4096LL * 4096 + 3 * 4096LL * 11008 + 2 * 4096;
  EXPECT_EQ(gathered_params_term(c.profile, c.run, false).bytes, 2 * block * 2);
  EXPECT_EQ(gathered_params_term(c.profile, c.run, true).bytes, 2 * block * 2 + block * 2);
  EXPECT_EQ(weights_term(c.profile, c.run).bytes, kLlama7b * 2 / 8);
}

TEST(Terms, KvCacheUsesStoredHeadDimGqaAndBeams) {
  JobSpec j;
  j.model.set("llama-3-8b", kFlag);
  j.generation.set(true, kFlag);
  j.precision.set(Precision::PureBf16, kFlag);
  j.max_context.set(8192, kFlag);
  Case c = resolve(j);
  EXPECT_EQ(kv_cache_term(c.profile, c.run, 16, 8192).bytes, 2LL * 32 * 8 * 128 * 8192 * 16 * 2);  // 16 GiB
  // Gemma-7B: head_dim 256 (hidden / heads would be 192).
  j.model.set("gemma-7b", kFlag);
  Case g = resolve(j);
  EXPECT_EQ(kv_cache_term(g.profile, g.run, 1, 1000).bytes, 2LL * 28 * 16 * 256 * 1000 * 2);
  j.kv_cache_dtype.set(KvCacheDtype::Fp8, kFlag);
  Case g8 = resolve(j);
  EXPECT_EQ(kv_cache_term(g8.profile, g8.run, 1, 1000).bytes, 2LL * 28 * 16 * 256 * 1000 * 1);
  // Whisper: the decoder's layers, plus the cross-attention cache over 1500 encoder positions.
  j.model.set("whisper-small", kFlag);
  j.kv_cache_dtype = JobSpec{}.kv_cache_dtype;
  Case w = resolve(j);
  EXPECT_EQ(kv_cache_term(w.profile, w.run, 1, 448).bytes, 2LL * 12 * 12 * 64 * 2 * (448 + 1500));
}

TEST(Terms, ContextAndAllocator) {
  const Target t4 = testing::target("t4");
  EXPECT_EQ(cuda_context_term(&t4).bytes, 135LL << 20);
  EXPECT_EQ(cuda_context_term(&t4).provenance, Provenance::Measured);
  const Target a100 = testing::target("a100-80gb");
  EXPECT_EQ(cuda_context_term(&a100).bytes, default_cuda_context_bytes());
  EXPECT_EQ(cuda_context_term(&a100).provenance, Provenance::Assumed);
  EXPECT_EQ(allocator_term(1000000000).bytes, static_cast<int64_t>(1e9 * (allocator_factor() - 1)));
  EXPECT_EQ(allocator_term(1).provenance, Provenance::Fitted);
}

}  // namespace
}  // namespace preflight::estimator

namespace preflight::estimator {
namespace {

TEST(Terms, DequantisationAndSingleStateOptimizers) {
  JobSpec q = testing::training_job("llama-2-7b", 1, 512, Precision::PureBf16);
  q.inference_only.set(true, testing::kFlag);
  q.quantization.set(Quantization::Int8, testing::kFlag);
  const ModelProfile p = resolve_model(q, builtin_catalog());
  std::vector<std::string> notes;
  const estimator::Run r = resolve_run(q, p, nullptr, notes);
  EXPECT_EQ(dequantization_term(p, r).bytes, 4096LL * 11008 * 2);  // the largest block matrix, in bf16
  // int8: one byte per weight plus an fp32 scale per output row.
  const int64_t n = (4 * 4096LL * 4096 + 3 * 4096LL * 11008) * 32;
  const int64_t rows = (4 * 4096LL + 2 * 11008 + 4096) * 32;
  EXPECT_EQ(weights_term(p, r).bytes, (6738415616LL - n) * 2 + n + 4 * rows);
  for (Optimizer o : {Optimizer::Lion, Optimizer::RmsProp, Optimizer::Adagrad, Optimizer::SgdMomentum}) {
    JobSpec j = testing::training_job("gpt2", 1, 128, Precision::Fp32);
    j.optimizer.set(o, testing::kFlag);
    const ModelProfile gp = resolve_model(j, builtin_catalog());
    const estimator::Run gr = resolve_run(j, gp, nullptr, notes);
    EXPECT_EQ(optimizer_state_term(gp, gr).bytes, 124439808LL * 4) << optimizer_name(o);
  }
}

}  // namespace
}  // namespace preflight::estimator
