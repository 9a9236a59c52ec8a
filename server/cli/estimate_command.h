// `preflight estimate [SCRIPT] --gpu ... [flags]`: peak-VRAM estimate of a training or
// serving run against a GPU, cloud instance or explicit capacity, with the breakdown, the
// interval and verdict, and what would make it fit. Flag names and values, and the JSON
// keys, are those of torch-preflight's `estimate` (plus preflight's own, listed in the
// README). With a SCRIPT, each of its jobs (estimator/script_reader.h) is estimated with the
// values the script states, each shown with its file:line; a flag overrides the script.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "estimator/report.h"

namespace CLI {
class App;
}

namespace preflight::server {

// The ranges of the integer flags (docs/numbers.md): past them a run is no run any hardware
// holds, and the products of the cost model leave int64 (the estimator saturates its byte
// counts as well, for what a script states).
inline constexpr int kMaxBatchSize = 1 << 20;
inline constexpr int kMaxTokens = 1 << 24;  // --seq-len, --max-context, --prompt-len
inline constexpr int kMaxImageSide = 1 << 16;
inline constexpr int kMaxRanks = 1 << 20;
inline constexpr int kMaxLoraRank = 1 << 16;
inline constexpr int kMaxAccumulation = 1 << 20;
inline constexpr int kMaxParallelDegree = 1 << 16;  // --tp, --pp
inline constexpr int kMaxBeams = 1024;

struct EstimateArgs {
  std::string script;
  std::string gpu, gpu_memory, model, params, trainable_params, deepspeed, cuda_context;
  std::optional<int> batch_size, seq_len, image_size, world_size, max_context, lora_rank, accumulation;
  std::optional<int> tensor_parallel, pipeline_parallel, prompt_len, beams;
  std::string dtype, optimizer, optimizer_impl, sharding, attention, peft, quantization, head, kv_cache_dtype;
  std::vector<std::string> lora_targets;
  std::optional<double> frozen_fraction;
  bool checkpointing = false, flash = false, inference = false, generate = false;
  bool offload_optimizer = false, offload_params = false, sequence_parallel = false;
  bool chunked_loss = false, activation_offload = false, keep_grads = false, full_prompt_logits = false;
  bool no_double_quant = false, ddp_bucket_view = false, allow_more_gpus = false;
  bool compat = false;
  std::string format = "terminal";
};

CLI::App* add_estimate_command(CLI::App& app, EstimateArgs& args);

/// Runs the command. Exit codes: 0 (fits, tight or unknown), 1 (likely / certain OOM),
/// 2 (bad invocation: unknown value, unknown GPU, missing script).
int run_estimate(const EstimateArgs& args, std::ostream& out, std::ostream& err);

/// The terminal report (exposed for tests).
void write_estimate_terminal(const estimator::EstimateReport& report, std::ostream& out);

}  // namespace preflight::server
