// Reading a DeepSpeed config file for the estimator: the file I/O the pure core leaves to the
// process layer. Used by `preflight estimate --deepspeed PATH` and for a literal path a script
// names (read relative to the script's directory), by the CLI and the language server alike.
#pragma once

#include <filesystem>
#include <string>

#include "estimator/job.h"
#include "estimator/script_reader.h"

namespace preflight::server {

/// Reads, parses and applies the config at `path` to `job` with `where` as the source of every
/// value. Returns "" on success, else the reason (unreadable, not JSON, not an object).
std::string apply_deepspeed_file(const std::filesystem::path& path, const estimator::Source& where,
                                 estimator::JobSpec& job);

/// The config a script job names, resolved against the script's directory. A file that
/// cannot be read leaves the job's sharding Unknown with the reason as the blocking expression.
void apply_script_deepspeed(estimator::ScriptJob& job, const std::filesystem::path& script);

}  // namespace preflight::server
