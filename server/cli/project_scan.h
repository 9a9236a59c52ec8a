// The project a check reads beside each file (analysis/project_index.h): every file of the
// run summarised from disk and joined into one index. The CLI indexes the files it checks;
// the language server the files of its workspace folder, found by the same discovery, so a
// CLI check of that folder reports what the editor shows for saved files.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "analysis/project_index.h"
#include "rules/engine.h"
#include "server/cli/discovery.h"

namespace preflight::server {

// Whether checking with `options` reads the project (TG001 and TG002 ask it about callers,
// TG008 about seeds).
bool reads_project(const rules::CheckOptions& options);

// One file's summary read from disk (the 10 MiB cap of a check); a file that cannot be read or
// parsed is kept as unsummarised, so no routine is taken for uncalled because of it.
analysis::FileCalls summarize_file(const std::string& location);

// Past this many files a run (or a workspace) is checked without a project: a summary holds
// every call of its file, and a tree that large is rarely one program.
inline constexpr std::size_t kMaxProjectFiles = 10'000;

// The index of `files` (keyed by SourceFile::location), summarised on up to `jobs` threads;
// null when there are fewer than two files or more than kMaxProjectFiles.
std::shared_ptr<const analysis::ProjectIndex> index_project(const std::vector<SourceFile>& files, unsigned jobs);

}  // namespace preflight::server
