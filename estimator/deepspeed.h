// A DeepSpeed config (the ZeRO JSON) as the cost model reads it: the stage, optimizer and
// parameter offload, bf16 / fp16, the micro-batch and accumulation (estimator.md §10.1, §8.7).
// Pure: a parsed JSON document (or its text) in, a struct out; the caller reads the file
// (the CLI's `--deepspeed PATH`, a literal path in a script) or the script reader converts a
// dict literal. `"auto"` (filled in by the Hugging Face integration at run time) and values the
// script reader could not fold stay Unknown, with the expression that blocked them.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "estimator/job.h"

namespace preflight::estimator {

/// One setting of the config: absent, a value, or present but unknown (`"auto"`, an
/// expression the script reader could not fold).
template <class T>
struct DeepSpeedSetting {
  std::optional<T> value;
  std::string key;       // the JSON path as written: `zero_optimization.stage`
  std::string blocking;  // set when present but unknown: `"auto"`, `args.stage`

  bool present() const { return value.has_value() || !blocking.empty(); }
};

struct DeepSpeedConfig {
  DeepSpeedSetting<int> stage;                // zero_optimization.stage
  DeepSpeedSetting<bool> offload_optimizer;   // zero_optimization.offload_optimizer.device cpu|nvme
  DeepSpeedSetting<bool> offload_params;      // zero_optimization.offload_param.device cpu|nvme
  DeepSpeedSetting<std::string> half;         // "bf16" | "fp16" | "none" (bf16.enabled / fp16.enabled)
  DeepSpeedSetting<int> micro_batch;          // train_micro_batch_size_per_gpu
  DeepSpeedSetting<int> accumulation;         // gradient_accumulation_steps
  DeepSpeedSetting<int> train_batch;          // train_batch_size (micro x accumulation x world)
};

/// An unfolded script expression inside a converted dict literal is stored as
/// `{"$unfolded": "<expression>"}`; the parser reports it as the blocking expression.
inline constexpr std::string_view kUnfoldedKey = "$unfolded";

/// The settings of a config document. A document that is not a JSON object gives nullopt
/// and `error` says why.
std::optional<DeepSpeedConfig> parse_deepspeed_config(const nlohmann::json& document, std::string& error);
std::optional<DeepSpeedConfig> parse_deepspeed_json(std::string_view text, std::string& error);

/// Writes the config's values into `job`, each with `where` (the flag or the script range)
/// and its key in the detail. Stated values replace what the script said; `"auto"` leaves a
/// value the script stated (the integration fills it from the same arguments) and marks an
/// unstated field Unknown. DeepSpeed's bf16 / fp16 keep an fp32 master copy and fp32
/// optimizer state: fp16-master's bytes.
void apply_deepspeed_config(const DeepSpeedConfig& config, const Source& where, JobSpec& job);

}  // namespace preflight::estimator
