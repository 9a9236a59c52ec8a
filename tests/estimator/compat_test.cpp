// Compat mode reproduces the reference's worked examples (estimator.md §9) to the byte; the
// default mode differs where its report says, and for the reason it gives.
#include <gtest/gtest.h>

#include <map>

#include "estimator/compat.h"
#include "test_support.h"

namespace preflight::estimator {
namespace {

using testing::kFlag;
using testing::target;
using testing::training_job;

std::map<std::string, int64_t> terms_of(const CompatEstimate& c) {
  std::map<std::string, int64_t> out;
  for (const Term& t : c.breakdown) out[t.key] = t.bytes;
  return out;
}

TEST(Compat, Gpt2OnT4_9_1) {
  const CompatEstimate c = compat_estimate(training_job("gpt2", 4, 128, Precision::Amp), target("t4"));
  const auto t = terms_of(c);
  EXPECT_EQ(t.at("weights"), 497759232);
  EXPECT_EQ(t.at("gradients"), 497759232);
  EXPECT_EQ(t.at("optimizer_state"), 995518464);
  EXPECT_EQ(t.at("autocast_cache"), 248879616);
  EXPECT_EQ(t.at("activations"), 586734592);
  EXPECT_EQ(t.at("CUDA_context"), 141557760);
  EXPECT_EQ(t.at("fragmentation"), 296798369);
  EXPECT_EQ(c.total, 3265007265);
  EXPECT_EQ(c.low, 2938506538);
  EXPECT_EQ(c.high, 3591507991);
  EXPECT_EQ(c.usable_bytes, 16836271800);
  EXPECT_EQ(c.band, Band::Fits);
  EXPECT_EQ(c.notes, (std::vector<std::string>{"autocast keeps fp32 parameters", "no bf16 on this card: fp16 will be used"}));
}

TEST(Compat, Llama2OnA100_9_2_WithItsSolver) {
  const CompatEstimate c = compat_estimate(training_job("llama-2-7b", 4, 2048, Precision::Amp), target("a100-80gb"));
  const auto t = terms_of(c);
  EXPECT_EQ(t.at("activations"), 72389492736);
  EXPECT_EQ(t.at("fragmentation"), 20336502251);
  EXPECT_EQ(c.total, 214159033835);
  EXPECT_EQ(c.low, 192743130451);
  EXPECT_EQ(c.high, 235574937218);
  EXPECT_EQ(c.band, Band::CertainOom);
  ASSERT_EQ(c.remediations.size(), 6u);
  const std::vector<std::pair<std::string, double>> expected = {
      {"flash attention / SDPA", 164.09}, {"gradient checkpointing", 133.15}, {"8-bit AdamW (bitsandbytes)", 157.84},
      {"Adafactor optimizer", 146.75},    {"halve micro-batch (2x accumulation)", 162.20}};
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(c.remediations[i].label, expected[i].first);
    EXPECT_NEAR(c.remediations[i].new_total / testing::kGiB, expected[i].second, 0.005);
    EXPECT_FALSE(c.remediations[i].fits);
  }
  const Remediation& stack = c.remediations[5];
  EXPECT_EQ(stack.label, "flash attention / SDPA + gradient checkpointing + 8-bit AdamW (bitsandbytes) + halve micro-batch (2x accumulation)");
  EXPECT_NEAR(stack.new_total / testing::kGiB, 86.89, 0.005);
  EXPECT_FALSE(stack.fits);
  EXPECT_EQ(stack.disruption, 3);
}

TEST(Compat, Llama3GenerationOnA100_9_3) {
  const JobSpec j = testing::generation_job("llama-3-8b", 16, 8192, Precision::PureBf16);
  const CompatEstimate c = compat_estimate(j, target("a100-80gb"));
  const auto t = terms_of(c);
  EXPECT_EQ(t.at("weights"), 16060522496);
  EXPECT_EQ(t.at("activations"), 20971520);
  EXPECT_EQ(t.at("KV_cache"), 17179869184);
  EXPECT_EQ(t.at("fragmentation"), 1688556871);
  EXPECT_EQ(c.total, 35091477831);
  EXPECT_NEAR(c.low / testing::kGiB, 29.41, 0.005);
  EXPECT_NEAR(c.high / testing::kGiB, 35.95, 0.005);
  EXPECT_EQ(c.band, Band::Fits);
  EXPECT_TRUE(c.notes.empty());
}

TEST(Compat, Resnet50OnT4_9_4) {
  JobSpec j;
  j.model.set("resnet50", kFlag);
  j.batch_size.set(32, kFlag);
  j.image_size.set(224, kFlag);
  j.precision.set(Precision::Amp, kFlag);
  const CompatEstimate c = compat_estimate(j, target("t4"));
  const auto t = terms_of(c);
  EXPECT_EQ(t.at("activations"), 1377951744);
  EXPECT_EQ(t.at("fragmentation"), 192987723);
  EXPECT_EQ(c.total, 2172523803);
  EXPECT_EQ(c.band, Band::Fits);
}

TEST(Compat, ReferenceIgnoresTheInstanceDeviceCount) {
  JobSpec j = training_job("llama-2-7b", 1, 2048, Precision::Amp);
  j.sharding.set(Sharding::Zero3, kFlag);
  const CompatEstimate c = compat_estimate(j, target("8xa100-80gb"));
  EXPECT_EQ(terms_of(c).at("weights"), 6738415616LL * 4);  // shards over 1 (§10.4)
  const Estimate ours = estimate(j, target("8xa100-80gb"));
  EXPECT_EQ(ours.term_bytes("weights"), 6738415616LL * 4 / 8);
}

// Default mode on the same examples: where it differs, and the report's stated reason.
TEST(Compat, DefaultModeSaysWhereAndWhyItDiffers) {
  const JobSpec gpt2 = training_job("gpt2", 4, 128, Precision::Amp);
  const Estimate ours = estimate(gpt2, target("t4"));
  const CompatEstimate ref = compat_estimate(gpt2, target("t4"));
  const std::vector<CompatDifference> diffs = compat_differences(ours, ref);
  auto find = [&](const std::string& term) -> const CompatDifference* {
    for (const CompatDifference& d : diffs)
      if (d.term == term) return &d;
    return nullptr;
  };
  // §9.1 peaks in the optimizer step: activations are freed, the foreach temporary is not.
  EXPECT_EQ(ours.peak()->name, "optimizer step");
  ASSERT_NE(find("activations"), nullptr);
  EXPECT_EQ(find("activations")->reference_bytes, 586734592);
  ASSERT_NE(find("optimizer_step_temporaries"), nullptr);
  EXPECT_EQ(find("optimizer_step_temporaries")->preflight_bytes, 124439808LL * 4);
  ASSERT_NE(find("usable_bytes"), nullptr);
  EXPECT_EQ(find("usable_bytes")->preflight_bytes, 15633680957);
  for (const CompatDifference& d : diffs) EXPECT_FALSE(d.why.empty()) << d.term;
  // §9.2: the reference charges every term at once; the default mode's peak phase has no
  // gradients (set_to_none) and SDPA attention by default, so it is lower.
  const JobSpec llama = training_job("llama-2-7b", 4, 2048, Precision::Amp);
  const Estimate ours2 = estimate(llama, target("a100-80gb"));
  const CompatEstimate ref2 = compat_estimate(llama, target("a100-80gb"));
  EXPECT_LT(ours2.total, ref2.total);
  EXPECT_EQ(ours2.term_bytes("gradients"), 0);
  // §9.3: preflight's prefill phase (the whole prompt through the model) is what peaks.
  const JobSpec gen = testing::generation_job("llama-3-8b", 16, 8192, Precision::PureBf16);
  const Estimate ours3 = estimate(gen, target("a100-80gb"));
  EXPECT_EQ(ours3.peak()->name, "prefill");
  EXPECT_GT(ours3.total, compat_estimate(gen, target("a100-80gb")).total);
}

}  // namespace
}  // namespace preflight::estimator
