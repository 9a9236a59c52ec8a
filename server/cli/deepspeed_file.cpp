#include "server/cli/deepspeed_file.h"

#include "estimator/deepspeed.h"
#include "server/cli/file_io.h"

namespace preflight::server {

namespace est = preflight::estimator;

// A ZeRO config is a few hundred bytes; a megabyte is no config.
constexpr std::uintmax_t kMaxConfigBytes = 1u << 20;

std::string apply_deepspeed_file(const std::filesystem::path& path, const est::Source& where, est::JobSpec& job) {
  ReadResult file = read_source_file(path, kMaxConfigBytes);
  if (!file.text) return file.error;
  std::string error;
  std::optional<est::DeepSpeedConfig> config = est::parse_deepspeed_json(*file.text, error);
  if (!config) return error;
  est::apply_deepspeed_config(*config, where, job);
  return "";
}

void apply_script_deepspeed(est::ScriptJob& job, const std::filesystem::path& script) {
  if (!job.deepspeed_file) return;
  const est::DeepSpeedReference& ref = *job.deepspeed_file;
  std::filesystem::path path(ref.path);
  if (path.is_relative()) path = script.parent_path() / path;
  const est::Source where{est::SourceKind::Script, "DeepSpeed config " + ref.detail, ref.range, {}};
  const std::string error = apply_deepspeed_file(path, where, job.spec);
  if (!error.empty())
    job.spec.sharding.source = est::Source{est::SourceKind::Unknown, where.detail, ref.range,
                                           ref.detail + " (" + path.string() + ": " + error + ")"};
}

}  // namespace preflight::server
