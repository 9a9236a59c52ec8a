// The DeepSpeed config reader: ZeRO stage, offload, bf16 / fp16, micro-batch and accumulation
// handed to the JobSpec with their keys; "auto" and unfolded values stay Unknown.
#include <gtest/gtest.h>

#include "estimator/deepspeed.h"

namespace preflight::estimator {
namespace {

const Source kConfig = Source::flag("--deepspeed ds.json");

JobSpec applied(std::string_view text) {
  std::string error;
  std::optional<DeepSpeedConfig> c = parse_deepspeed_json(text, error);
  EXPECT_TRUE(c) << error;
  JobSpec job;
  if (c) apply_deepspeed_config(*c, kConfig, job);
  return job;
}

TEST(DeepSpeedConfig, StageOffloadPrecisionAndBatchReachTheJob) {
  const JobSpec j = applied(R"({"zero_optimization": {"stage": 3, "offload_optimizer": {"device": "nvme"},
                                 "offload_param": {"device": "none"}},
                                "bf16": {"enabled": true}, "train_micro_batch_size_per_gpu": 4,
                                "gradient_accumulation_steps": 8, "train_batch_size": 256})");
  EXPECT_EQ(j.sharding.value, Sharding::Zero3);
  EXPECT_EQ(j.sharding.source.detail, "--deepspeed ds.json: zero_optimization.stage=3");
  EXPECT_TRUE(j.offload_optimizer.value);
  EXPECT_TRUE(j.offload_optimizer.stated());
  EXPECT_FALSE(j.offload_params.value);
  EXPECT_TRUE(j.offload_params.stated());
  EXPECT_EQ(j.precision.value, Precision::Fp16Master);  // half weights + fp32 master copy and state
  EXPECT_EQ(j.batch_size.value, 4);
  EXPECT_EQ(j.accumulation_steps.value, 8);
  ASSERT_TRUE(j.world_size.value);
  EXPECT_EQ(*j.world_size.value, 8);  // 256 / (4 x 8)
}

TEST(DeepSpeedConfig, StagesOneAndTwoAndZero) {
  EXPECT_EQ(applied(R"({"zero_optimization": {"stage": 1}})").sharding.value, Sharding::Zero1);
  EXPECT_EQ(applied(R"({"zero_optimization": {"stage": 2}, "fp16": {"enabled": true}})").sharding.value, Sharding::Zero2);
  EXPECT_EQ(applied(R"({"zero_optimization": {"stage": 0}})").sharding.value, Sharding::Ddp);
  EXPECT_EQ(applied(R"({"zero_optimization": {"stage": 2}, "fp16": {"enabled": true}})").precision.value,
            Precision::Fp16Master);
}

// Issue 26: a number outside what DeepSpeed takes is no value. Before, a micro-batch of 0 was
// read as stated ("=0", then quietly 1) and a negative or fractional one hid behind its JSON
// text; now each is Unknown, naming the accepted range, and the default batch stays.
TEST(DeepSpeedConfig, NumbersOutsideTheirRangeAreUnknownWithTheRange) {
  for (const char* v : {"0", "-4", "1.5", "1e30", "1073741825", "18446744073709551615"}) {
    const JobSpec j = applied(std::string(R"({"train_micro_batch_size_per_gpu": )") + v +
                              R"(, "gradient_accumulation_steps": )" + v + "}");
    EXPECT_EQ(j.batch_size.source.kind, SourceKind::Unknown) << v;
    EXPECT_EQ(j.batch_size.value, 1) << v;
    EXPECT_NE(j.batch_size.source.blocking_expression.find("train_micro_batch_size_per_gpu: "), std::string::npos) << v;
    EXPECT_NE(j.batch_size.source.blocking_expression.find("(not an integer from 1 to 1073741824)"), std::string::npos)
        << v << ": " << j.batch_size.source.blocking_expression;
    EXPECT_EQ(j.accumulation_steps.source.kind, SourceKind::Unknown) << v;
    EXPECT_EQ(j.accumulation_steps.value, 1) << v;
  }
  const JobSpec stage = applied(R"({"zero_optimization": {"stage": -1}})");
  EXPECT_EQ(stage.sharding.source.kind, SourceKind::Unknown);
  EXPECT_EQ(stage.sharding.source.blocking_expression, "zero_optimization.stage: -1 (not an integer from 0 to 1073741824)");
  EXPECT_EQ(applied(R"({"train_micro_batch_size_per_gpu": 1073741824})").batch_size.value, 1 << 30);
}

TEST(DeepSpeedConfig, AutoStaysUnknownUnlessTheScriptStatedTheValue) {
  const JobSpec j = applied(R"({"zero_optimization": {"stage": "auto"}, "bf16": {"enabled": "auto"},
                                "train_micro_batch_size_per_gpu": "auto", "gradient_accumulation_steps": "auto"})");
  EXPECT_EQ(j.sharding.source.kind, SourceKind::Unknown);
  EXPECT_EQ(j.sharding.source.blocking_expression, "zero_optimization.stage: \"auto\"");
  EXPECT_EQ(j.batch_size.source.kind, SourceKind::Unknown);
  EXPECT_EQ(j.accumulation_steps.source.kind, SourceKind::Unknown);
  EXPECT_EQ(j.precision.source.kind, SourceKind::Unknown);
  // A batch the script already states is what the integration fills "auto" with.
  std::string error;
  JobSpec stated;
  stated.batch_size.set(16, Source::flag("--batch-size"));
  stated.precision.set(Precision::AmpBf16, Source::flag("--dtype"));
  apply_deepspeed_config(*parse_deepspeed_json(R"({"train_micro_batch_size_per_gpu": "auto", "bf16": {"enabled": "auto"}})",
                                                 error),
                         kConfig, stated);
  EXPECT_EQ(stated.batch_size.value, 16);
  EXPECT_TRUE(stated.batch_size.stated());
  EXPECT_EQ(stated.precision.value, Precision::Fp16Master);
}

TEST(DeepSpeedConfig, UnfoldedScriptValuesAndBadDocuments) {
  const JobSpec j = applied(R"({"zero_optimization": {"stage": {"$unfolded": "args.stage"}}})");
  EXPECT_EQ(j.sharding.source.kind, SourceKind::Unknown);
  EXPECT_EQ(j.sharding.source.blocking_expression, "zero_optimization.stage: args.stage");
  std::string error;
  EXPECT_FALSE(parse_deepspeed_json("[1, 2]", error));
  EXPECT_FALSE(parse_deepspeed_json("{not json", error));
  EXPECT_EQ(error, "not valid JSON");
  // A config without a ZeRO block or precision section changes nothing it does not name.
  const JobSpec empty = applied("{}");
  EXPECT_FALSE(empty.sharding.stated());
  EXPECT_FALSE(empty.precision.stated());
}

}  // namespace
}  // namespace preflight::estimator
