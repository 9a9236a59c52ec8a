// `preflight estimate` and `preflight gpus`, run in-process: flags, exit codes, outputs.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "server/cli/estimate_command.h"
#include "server/cli/gpus_command.h"

namespace preflight::server {
namespace {

struct Outcome {
  int code;
  std::string out, err;
};

Outcome estimate(EstimateArgs a) {
  std::ostringstream out, err;
  const int code = run_estimate(a, out, err);
  return {code, out.str(), err.str()};
}

EstimateArgs gpt2_on_t4() {
  EstimateArgs a;
  a.model = "gpt2";
  a.gpu = "t4";
  a.batch_size = 4;
  a.seq_len = 128;
  a.dtype = "amp";
  return a;
}

TEST(EstimateCommand, TerminalReportHasSourcesBarsPeakVerdict) {
  const Outcome r = estimate(gpt2_on_t4());
  EXPECT_EQ(r.code, 0);
  for (const char* text : {"Model      gpt2", "Read from  model=--model", "batch_size=--batch-size", "█",
                           "projected peak (optimizer step)", "NVIDIA T4 (14.56 GiB usable)", "✓ fits with margin",
                           "Reference  torch-preflight 0.4 (--compat): 3.04 GiB"})
    EXPECT_NE(r.out.find(text), std::string::npos) << text << "\n" << r.out;
}

TEST(EstimateCommand, JsonKeysMatchTheReference) {
  EstimateArgs a = gpt2_on_t4();
  a.format = "json";
  const Outcome r = estimate(a);
  ASSERT_EQ(r.code, 0);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["band"], "FITS");
  EXPECT_TRUE(j["breakdown"].contains("KV_cache"));
  EXPECT_EQ(j["config"]["precision"], "amp");
  EXPECT_EQ(j["config"]["sources"]["precision"], "command line (--dtype)");
}

TEST(EstimateCommand, FailureExitsOneAndListsRemediations) {
  EstimateArgs a;
  a.model = "llama-2-7b";
  a.gpu = "a100-80gb";
  a.batch_size = 4;
  a.seq_len = 2048;
  a.dtype = "amp";
  const Outcome r = estimate(a);
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("What would make it fit:"), std::string::npos);
  EXPECT_NE(r.out.find("[cheapest that fits]"), std::string::npos);
  EXPECT_NE(r.out.find("Each change alone:"), std::string::npos);
  a.compat = true;
  const Outcome c = estimate(a);
  EXPECT_EQ(c.code, 1);
  EXPECT_NE(c.out.find("199.45 GiB"), std::string::npos) << c.out;
}

TEST(EstimateCommand, BadInvocationsExitTwo) {
  EstimateArgs a = gpt2_on_t4();
  a.dtype = "fp12";
  EXPECT_EQ(estimate(a).code, 2);
  a = gpt2_on_t4();
  a.gpu = "no-such-gpu";
  const Outcome r = estimate(a);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("unknown GPU"), std::string::npos);
  a = gpt2_on_t4();
  a.params = "lots";
  EXPECT_EQ(estimate(a).code, 2);
  a = gpt2_on_t4();
  a.script = "/no/such/train.py";
  EXPECT_EQ(estimate(a).code, 2);
  EXPECT_EQ(estimate(EstimateArgs{}).code, 2);  // nothing to estimate
  a = gpt2_on_t4();
  a.batch_size = 0;
  EXPECT_EQ(estimate(a).code, 2);
}

std::string job_fixture(const char* name) { return std::string(PF_SOURCE_DIR) + "/tests/estimator/jobs/" + name; }

TEST(EstimateCommand, ReadsTheJobFromTheScriptWithTheLineOfEachValue) {
  EstimateArgs a;
  a.script = job_fixture("hf_trainer.py");
  a.gpu = "t4";
  a.format = "json";
  const Outcome r = estimate(a);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["config"]["batch_size"], 32);
  EXPECT_EQ(j["config"]["seq_len"], 256);
  EXPECT_EQ(j["config"]["inference_only"], false) << "a Trainer fine-tune is training";
  EXPECT_EQ(j["script"]["entry_point"], "`trainer.train()` (Trainer)");
  EXPECT_EQ(j["script"]["line"], 22);
  EXPECT_EQ(j["script"]["fields"]["batch_size"]["line"], 16);
  EXPECT_EQ(j["script"]["fields"]["model"]["line"], 5);
}

TEST(EstimateCommand, AFlagOverridesTheScript) {
  EstimateArgs a;
  a.script = job_fixture("hf_trainer.py");
  a.gpu = "t4";
  a.batch_size = 4;
  const Outcome r = estimate(a);
  EXPECT_NE(r.out.find("batch 4"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("batch_size=--batch-size"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("seq_len=" + job_fixture("hf_trainer.py") + ":11"), std::string::npos) << r.out;
}

TEST(EstimateCommand, EachJobOfTheScriptIsEstimated) {
  EstimateArgs a;
  a.script = job_fixture("two_jobs.py");
  a.gpu = "a100-80gb";
  a.format = "json";
  const nlohmann::json j = nlohmann::json::parse(estimate(a).out);
  ASSERT_EQ(j["jobs"].size(), 2u);
  EXPECT_EQ(j["jobs"][0]["config"]["inference_only"], false);
  EXPECT_EQ(j["jobs"][1]["config"]["generation"], true);
  EXPECT_EQ(j["jobs"][1]["config"]["max_context"], 1024);
}

TEST(EstimateCommand, AScriptWithoutEntryPointSaysSoAndUsesTheFlags) {
  const std::string path = ::testing::TempDir() + "/pf_estimate_lib.py";
  std::ofstream(path) << "import torch\n";
  EstimateArgs a = gpt2_on_t4();
  a.script = path;
  a.format = "json";
  const Outcome r = estimate(a);
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.err.find("no training or generation entry point"), std::string::npos) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["script"]["path"], path);
  EXPECT_TRUE(j["script"]["entry_point"].is_null());
  EXPECT_EQ(j["config"]["batch_size"], 4);
}

TEST(EstimateCommand, AnUnfoldableValueIsShownAsUnknownWithItsExpression) {
  EstimateArgs a;
  a.script = job_fixture("unknown_batch.py");
  a.params = "1B";
  a.gpu = "t4";
  const Outcome r = estimate(a);
  EXPECT_NE(r.out.find("Unknown    batch_size at " + job_fixture("unknown_batch.py") + ":9: `int(os.environ[\"BS\"])`"),
            std::string::npos)
      << r.out;
}

TEST(EstimateCommand, UnknownModelIsReportedUnknown) {
  EstimateArgs a;
  a.model = "my-private-model";
  a.gpu = "h100";
  const Outcome r = estimate(a);
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("UNKNOWN"), std::string::npos);
}

TEST(GpusCommand, ListsGpusAndInstances) {
  std::ostringstream out, err;
  GpusArgs a;
  EXPECT_EQ(run_gpus(a, out, err), 0);
  EXPECT_NE(out.str().find("a100-80gb"), std::string::npos);
  EXPECT_EQ(out.str().find("p4de.24xlarge"), std::string::npos);
  a.instances = true;
  a.format = "json";
  std::ostringstream json_out;
  EXPECT_EQ(run_gpus(a, json_out, err), 0);
  const nlohmann::json j = nlohmann::json::parse(json_out.str());
  EXPECT_EQ(j["gpus"].size(), 69u);
  EXPECT_EQ(j["instances"].size(), 132u);
}

}  // namespace
}  // namespace preflight::server
