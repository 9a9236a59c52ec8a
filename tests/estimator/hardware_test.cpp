#include <gtest/gtest.h>

#include "estimator/hardware.h"

namespace preflight::estimator {
namespace {

std::optional<Target> resolve(const std::string& name, std::optional<int64_t> capacity = std::nullopt) {
  std::string error;
  return resolve_target(builtin_catalog(), name, capacity, error);
}

TEST(Hardware, UsableMemoryIsTheDriverReportedFigureNotNominal) {
  auto t4 = resolve("t4");
  ASSERT_TRUE(t4);
  EXPECT_EQ(t4->usable_bytes, 15633680957);             // runtime-visible, measured
  EXPECT_EQ(t4->reference_usable_bytes, 16836271800);   // the reference's 16,384 MiB x 0.98
  EXPECT_EQ(t4->measured_context_bytes, 135LL << 20);
  EXPECT_FALSE(t4->bf16);
  auto tesla = resolve(" Tesla_T4 ");  // alias; case, blanks and _ normalised
  ASSERT_TRUE(tesla);
  EXPECT_EQ(tesla->gpu_id, "t4");
}

TEST(Hardware, InstancesGiveTheGpuAndItsDeviceCount) {
  auto p4de = resolve("p4de.24xlarge");
  ASSERT_TRUE(p4de);
  EXPECT_EQ(p4de->gpu_id, "a100-80gb");
  EXPECT_EQ(p4de->device_count, 8);
  EXPECT_EQ(p4de->instance, "p4de.24xlarge");
  auto azure = resolve("Standard_ND96isr_H100_v5");
  ASSERT_TRUE(azure);
  EXPECT_EQ(azure->gpu_id, "h100-80gb");
  EXPECT_EQ(azure->device_count, 8);
}

TEST(Hardware, CountPrefixAndSuffixForms) {
  for (const char* name : {"8xa100-80gb", "a100-80gb x8", "8*a100-80gb", "8x A100-80GB"}) {
    auto t = resolve(name);
    ASSERT_TRUE(t) << name;
    EXPECT_EQ(t->gpu_id, "a100-80gb") << name;
    EXPECT_EQ(t->device_count, 8) << name;
  }
  auto rtx = resolve("rtx4090");  // contains an 'x' but is a GPU name, not a count
  ASSERT_TRUE(rtx);
  EXPECT_EQ(rtx->gpu_id, "rtx4090");
  EXPECT_EQ(rtx->device_count, 1);
  EXPECT_TRUE(rtx->consumer);
}

TEST(Hardware, Mi250BoardsAreTwoDevicesOfSixtyFourGigabytes) {
  auto one = resolve("mi250x");
  ASSERT_TRUE(one);
  EXPECT_EQ(one->device_count, 2);
  EXPECT_LT(one->usable_bytes, 68719476736);  // per device, never the 128 GB board
  EXPECT_GT(one->usable_bytes, 60LL << 30);
  auto four = resolve("4xmi250x");
  ASSERT_TRUE(four);
  EXPECT_EQ(four->device_count, 8);
}

TEST(Hardware, UnknownNamesAreErrorsAndCapacitiesAreParsed) {
  std::string error;
  EXPECT_FALSE(resolve_target(builtin_catalog(), "a100-90gb", std::nullopt, error));
  EXPECT_NE(error.find("unknown GPU"), std::string::npos);
  EXPECT_EQ(parse_memory("48GiB"), 48LL << 30);
  EXPECT_EQ(parse_memory("24gb"), 24LL << 30);  // gb read as GiB, as the reference does
  EXPECT_EQ(parse_memory("40960MiB"), 40960LL << 20);
  EXPECT_EQ(parse_memory("2TiB"), 2LL << 40);
  EXPECT_EQ(parse_memory("1000"), 1000);
  EXPECT_FALSE(parse_memory("lots"));
  EXPECT_FALSE(parse_memory("-5GB"));
  auto custom = resolve("", 48LL << 30);
  ASSERT_TRUE(custom);
  EXPECT_EQ(custom->gpu_id, "custom");
  EXPECT_EQ(custom->usable_bytes, static_cast<int64_t>(double(48LL << 30) * 0.98));
  auto overridden = resolve("a100-80gb", 40LL << 30);  // capacity replaces the card's
  ASSERT_TRUE(overridden);
  EXPECT_EQ(overridden->gpu_id, "a100-80gb");
  EXPECT_EQ(overridden->usable_bytes, static_cast<int64_t>(double(40LL << 30) * 0.98));
}

}  // namespace
}  // namespace preflight::estimator
