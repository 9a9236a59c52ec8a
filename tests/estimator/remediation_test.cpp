#include <gtest/gtest.h>

#include <algorithm>

#include "estimator/remediation.h"
#include "test_support.h"

namespace preflight::estimator {
namespace {

using testing::kFlag;
using testing::target;
using testing::training_job;

bool mentions(const RemediationPlan& plan, const std::string& text) {
  return std::any_of(plan.ranked.begin(), plan.ranked.end(), [&](const Remediation& r) { return r.label.find(text) != std::string::npos; }) ||
         std::any_of(plan.singles.begin(), plan.singles.end(), [&](const Remediation& r) { return r.label.find(text) != std::string::npos; });
}

TEST(Remediation, SavingsAreDifferencesOfFullEstimates) {
  const JobSpec job = training_job("llama-2-7b", 4, 2048, Precision::Amp);
  const Target a100 = target("a100-80gb");
  const Estimate base = estimate(job, a100);
  ASSERT_TRUE(band_is_failure(base.band));
  const RemediationPlan plan = plan_remediations(job, base, a100);
  ASSERT_FALSE(plan.singles.empty());
  for (const Remediation& r : plan.singles) {
    EXPECT_EQ(r.saved, base.total - r.new_total) << r.label;
    EXPECT_GT(r.saved, 0) << r.label;
    EXPECT_EQ(r.fits, r.new_high < a100.usable_bytes) << r.label;
  }
  // Re-estimate the cheapest fitting combination from scratch: same numbers.
  ASSERT_TRUE(plan.cheapest_fitting);
  EXPECT_TRUE(plan.cheapest_fitting->fits);
  EXPECT_TRUE(plan.ranked.front().fits);
  EXPECT_TRUE(plan.ranked.front().cheapest_fitting);
  ASSERT_TRUE(plan.largest_single);
  for (const Remediation& r : plan.singles) EXPECT_LE(r.saved, plan.largest_single->saved);
  EXPECT_TRUE(std::any_of(plan.ranked.begin(), plan.ranked.end(), [](const Remediation& r) { return r.largest_single; }));
  EXPECT_GT(plan.evaluations, 100);  // the combinations were searched, not guessed
}

TEST(Remediation, RankedFitsFirstThenDisruption) {
  const JobSpec job = training_job("llama-2-7b", 4, 2048, Precision::Amp);
  const Target a100 = target("a100-80gb");
  const RemediationPlan plan = plan_remediations(job, estimate(job, a100), a100);
  for (std::size_t i = 1; i < plan.ranked.size(); ++i) {
    const Remediation& a = plan.ranked[i - 1];
    const Remediation& b = plan.ranked[i];
    if (a.cheapest_fitting || b.cheapest_fitting || a.largest_single || b.largest_single) continue;
    EXPECT_TRUE(a.fits >= b.fits) << a.label << " before " << b.label;
    if (a.fits == b.fits) {
      EXPECT_LE(a.disruption, b.disruption) << a.label << " before " << b.label;
    }
  }
  // No fitting combination contains a smaller fitting one.
  for (const Remediation& r : plan.ranked) {
    if (!r.fits || r.changes.size() < 2) continue;
    for (const Remediation& s : plan.singles) {
      EXPECT_FALSE(s.fits && std::find(r.changes.begin(), r.changes.end(), s.label) != r.changes.end()) << r.label;
    }
  }
}

TEST(Remediation, RespectsTheHardware) {
  const JobSpec job = training_job("llama-3-8b", 1, 2048, Precision::AmpBf16);
  const Target card = target("rtx4090");
  const RemediationPlan one = plan_remediations(job, estimate(job, card), card);
  EXPECT_FALSE(mentions(one, "FSDP"));  // a single consumer card: no multi-GPU advice
  const Target node = target("p4de.24xlarge");
  const Estimate on_node = estimate(job, node);
  ASSERT_TRUE(band_is_failure(on_node.band));
  const RemediationPlan eight = plan_remediations(job, on_node, node);
  EXPECT_TRUE(mentions(eight, "FSDP full shard across 8 devices"));
  RemediationOptions more;
  more.allow_more_devices = true;
  EXPECT_TRUE(mentions(plan_remediations(job, estimate(job, card), card, more), "FSDP"));
}

TEST(Remediation, InverseQuestionsAreExactBoundaries) {
  const JobSpec job = training_job("gpt2", 8, 512, Precision::AmpFp16);
  const Target t4 = target("t4");
  const Estimate base = estimate(job, t4);
  const RemediationPlan plan = plan_remediations(job, base, t4);
  ASSERT_TRUE(plan.inverse.largest_batch);
  const int b = *plan.inverse.largest_batch;
  JobSpec at = job, above = job;
  at.batch_size.set(b, kFlag);
  above.batch_size.set(b + 1, kFlag);
  EXPECT_LT(estimate(at, t4).high, t4.usable_bytes);
  EXPECT_GE(estimate(above, t4).high, t4.usable_bytes);
  ASSERT_TRUE(plan.inverse.longest_context);
  EXPECT_EQ(plan.inverse.context_field, "seq_len");
  JobSpec ctx = job;
  ctx.seq_len.set(static_cast<int>(*plan.inverse.longest_context + 1), kFlag);
  EXPECT_GE(estimate(ctx, t4).high, t4.usable_bytes);
}

TEST(Remediation, TightRunsGetTheCheapestChangeThatRestoresTheMargin) {
  // Find a batch size that is TIGHT on the T4, then ask for the margin back.
  const Target t4 = target("t4");
  for (int b = 1; b < 64; ++b) {
    const JobSpec job = training_job("gpt2", b, 512, Precision::AmpFp16);
    const Estimate e = estimate(job, t4);
    if (e.band != Band::Tight) continue;
    const RemediationPlan plan = plan_remediations(job, e, t4);
    ASSERT_TRUE(plan.restore_margin) << "batch " << b;
    EXPECT_TRUE(plan.restore_margin->fits);
    EXPECT_EQ(plan.restore_margin->new_band, Band::Fits);
    return;
  }
  FAIL() << "no tight batch size found";
}

TEST(Remediation, ServingLevers) {
  JobSpec job = testing::generation_job("llama-2-70b", 8, 4096, Precision::PureBf16);
  job.full_prompt_logits.set(false, kFlag);
  const Target node = target("p4de.24xlarge");
  const Estimate e = estimate(job, node);
  ASSERT_TRUE(band_is_failure(e.band));
  const RemediationPlan plan = plan_remediations(job, e, node);
  EXPECT_TRUE(mentions(plan, "tensor parallel across 8 devices"));
  EXPECT_TRUE(mentions(plan, "fp8 KV cache"));
  EXPECT_EQ(plan.inverse.context_field, "max_context");
}

}  // namespace
}  // namespace preflight::estimator
