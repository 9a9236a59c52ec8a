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

TEST(EstimateCommand, AParamsOnlyModelMayNotFitAndHasNoLargestBatch) {
  EstimateArgs a;
  a.params = "7B";
  a.gpu = "a100-80gb";
  a.dtype = "pure-bf16";
  const Outcome r = estimate(a);
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out.find("fits with margin"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("may not fit"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("activations unknown"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("largest micro-batch that fits"), std::string::npos) << r.out;
  a.format = "json";
  const nlohmann::json j = nlohmann::json::parse(estimate(a).out);
  EXPECT_EQ(j["band"], "MAY_NOT_FIT");
  EXPECT_TRUE(j["inverse"]["largest_batch"].is_null());
  EXPECT_EQ(j["unknown_terms"][0], "activations");
}

TEST(EstimateCommand, ACapacityInsideTheIntervalIsMayNotFit) {
  // GPT-2 on a card sized between the point estimate and the interval's top.
  EstimateArgs a = gpt2_on_t4();
  a.gpu.clear();
  a.gpu_memory = "100GiB";
  a.format = "json";
  const nlohmann::json j = nlohmann::json::parse(estimate(a).out);
  const int64_t total = j["total_bytes"], high = j["interval_bytes"][1];
  a.format = "terminal";
  a.gpu_memory = std::to_string((total + high) / 2) + "B";
  const Outcome r = estimate(a);
  EXPECT_EQ(r.out.find("fits with margin"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("may not fit"), std::string::npos) << r.out;
}

TEST(EstimateCommand, UnknownModelExitsNonZeroWithTheNearestNames) {
  EstimateArgs a;
  a.model = "my-private-model";
  a.gpu = "h100";
  Outcome r = estimate(a);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("UNKNOWN"), std::string::npos);
  EXPECT_NE(r.err.find("did you mean:"), std::string::npos) << r.err;
  a.model = "meta-llama/Llama-2-7b-hff";  // a typo'd hub id
  r = estimate(a);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("did you mean: llama-2-7b"), std::string::npos) << r.err;
}

TEST(EstimateCommand, TrainableParamsIsAccepted) {
  // torch-preflight's flag: 40M trainable parameters of Llama-2-7B: gradients and AdamW state
  // for 40M, not 6.7B.
  EstimateArgs a;
  a.model = "llama-2-7b";
  a.gpu = "a100-80gb";
  a.dtype = "pure-bf16";
  a.batch_size = 1;
  a.seq_len = 512;
  a.format = "json";
  a.trainable_params = "40M";
  Outcome r = estimate(a);
  ASSERT_NE(r.code, 2) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["model"]["trainable_params"], 40000000);
  EXPECT_EQ(j["config"]["sources"]["trainable_params"], "command line (--trainable-params)");
  a.frozen_fraction = 0.5;
  EXPECT_EQ(estimate(a).code, 2);  // two answers to one question
  a.frozen_fraction.reset();
  a.trainable_params = "some";
  EXPECT_EQ(estimate(a).code, 2);
}

TEST(EstimateCommand, AScriptsDeepSpeedFileIsReadNextToTheScript) {
  // TrainingArguments(deepspeed="ds_zero3.json"): ZeRO-3 with parameters offloaded, bf16
  // "auto" filled from bf16=True, the micro-batch "auto" filled from the script's 1.
  EstimateArgs a;
  a.script = job_fixture("deepspeed_json_config.py");
  a.gpu = "8xa100-80gb";
  a.seq_len = 2048;
  a.format = "json";
  const Outcome r = estimate(a);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["config"]["sharding"], "zero-3");
  EXPECT_EQ(j["config"]["offload_params"], true);
  EXPECT_EQ(j["config"]["offload_optimizer"], false);
  EXPECT_EQ(j["config"]["precision"], "fp16-master");
  EXPECT_EQ(j["config"]["batch_size"], 1);
  EXPECT_EQ(j["config"]["world_size"], 8);
  EXPECT_EQ(j["script"]["fields"]["sharding"]["line"], 11);
  EXPECT_EQ(j["script"]["fields"]["sharding"]["read"],
            "DeepSpeed config deepspeed=\"ds_zero3.json\": zero_optimization.stage=3");
  // The same job without the config: every rank holds the whole model and its states.
  a.sharding = "none";
  const nlohmann::json unsharded = nlohmann::json::parse(estimate(a).out);
  EXPECT_LT(j["total_bytes"].get<int64_t>() * 3, unsharded["total_bytes"].get<int64_t>());
}

TEST(EstimateCommand, DeepSpeedFlagAppliesItsConfigAndFlagsStillWin) {
  EstimateArgs a;
  a.model = "llama-2-7b";
  a.gpu = "8xa100-80gb";
  a.seq_len = 1024;
  a.deepspeed = job_fixture("ds_zero2_flag.json");
  a.format = "json";
  nlohmann::json j = nlohmann::json::parse(estimate(a).out);
  EXPECT_EQ(j["config"]["sharding"], "zero-2");
  EXPECT_EQ(j["config"]["offload_optimizer"], true);
  EXPECT_EQ(j["config"]["precision"], "fp16-master");
  EXPECT_EQ(j["config"]["batch_size"], 4);
  EXPECT_EQ(j["config"]["accumulation_steps"], 8);
  EXPECT_EQ(j["config"]["world_size"], 8);  // 256 / (4 x 8)
  EXPECT_EQ(j["config"]["sources"]["sharding"],
            "command line (--deepspeed " + job_fixture("ds_zero2_flag.json") + ": zero_optimization.stage=2)");
  a.batch_size = 2;
  j = nlohmann::json::parse(estimate(a).out);
  EXPECT_EQ(j["config"]["batch_size"], 2);
  a.deepspeed = job_fixture("no_such_config.json");
  const Outcome missing = estimate(a);
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.err.find("--deepspeed"), std::string::npos) << missing.err;
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
