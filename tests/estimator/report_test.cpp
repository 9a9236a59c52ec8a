#include <gtest/gtest.h>

#include "estimator/report.h"
#include "test_support.h"

namespace preflight::estimator {
namespace {

using testing::target;
using testing::training_job;

TEST(Report, FormatBytes) {
  EXPECT_EQ(format_bytes(3265007265), "3.04 GiB");
  EXPECT_EQ(format_bytes(141557760), "135 MiB");
  EXPECT_EQ(format_bytes(2048), "2 KiB");
  EXPECT_EQ(format_bytes(12), "12 B");
}

TEST(Report, CodeLensAndHoverShowTheSameNumbersAsTheJson) {
  const EstimateReport r = build_report(training_job("gpt2", 4, 128, Precision::AmpFp16), target("t4"), false);
  const std::string lens = code_lens_title(r);
  EXPECT_EQ(lens.rfind("peak " + format_bytes(r.estimate.total), 0), 0u) << lens;
  EXPECT_NE(lens.find("on NVIDIA T4"), std::string::npos);
  EXPECT_NE(lens.find("✓ fits"), std::string::npos);
  const std::string md = hover_markdown(r);
  EXPECT_NE(md.find("| term | bytes |"), std::string::npos);
  EXPECT_NE(md.find(format_bytes(r.estimate.total)), std::string::npos);
  EXPECT_NE(md.find("Read from: "), std::string::npos);
  const nlohmann::ordered_json j = report_json(r);
  EXPECT_EQ(j["total_bytes"], r.estimate.total);
  EXPECT_EQ(j["interval_bytes"][0], r.estimate.low);
  EXPECT_EQ(j["band"], "FITS");
}

TEST(Report, JsonCarriesTheReferenceKeysAndOurs) {
  const EstimateReport r = build_report(training_job("llama-2-7b", 4, 2048, Precision::Amp), target("a100-80gb"), false);
  const nlohmann::ordered_json j = report_json(r);
  for (const char* key : {"total_bytes", "interval_bytes", "band", "breakdown", "config", "gpu", "remediations",
                          "phase", "phases", "terms", "inverse", "reference", "widenings"})
    EXPECT_TRUE(j.contains(key)) << key;
  for (const char* key : {"weights", "gradients", "optimizer_state", "master_weights", "autocast_cache", "activations",
                          "KV_cache", "CUDA_context", "fragmentation"})
    EXPECT_TRUE(j["breakdown"].contains(key)) << key;
  EXPECT_TRUE(j["config"].contains("sources"));
  EXPECT_EQ(j["config"]["sources"]["batch_size"], "command line (--test)");
  EXPECT_EQ(j["gpu"]["usable_bytes"], r.estimate.target->usable_bytes);
  int64_t sum = 0;
  for (auto& [key, value] : j["breakdown"].items()) sum += value.get<int64_t>();
  EXPECT_EQ(sum, j["total_bytes"].get<int64_t>());  // the breakdown adds up to the total
  EXPECT_EQ(j["band"], "CERTAIN_OOM");
  EXPECT_FALSE(j["remediations"].empty());
  EXPECT_TRUE(j["remediations"][0].contains("saved_bytes"));
}

TEST(Report, CompatModeReportsTheReferenceNumbers) {
  const EstimateReport r = build_report(training_job("gpt2", 4, 128, Precision::Amp), target("t4"), true);
  const nlohmann::ordered_json j = report_json(r);
  EXPECT_EQ(j["mode"], "compat");
  EXPECT_EQ(j["total_bytes"], 3265007265);
  EXPECT_EQ(j["gpu"]["usable_bytes"], 16836271800);
  EXPECT_EQ(j["breakdown"]["fragmentation"], 296798369);
}

}  // namespace
}  // namespace preflight::estimator
