#include "server/cli/project_scan.h"

#include <algorithm>
#include <exception>

#include "server/cli/file_io.h"
#include "server/cli/parallel.h"

namespace preflight::server {

bool reads_project(const rules::CheckOptions& options) {
  auto runs = [&](const std::string& code) {
    return (options.select.empty() || options.select.count(code)) && !options.ignore.count(code);
  };
  return runs("TG001") || runs("TG002") || runs("TG008");
}

analysis::FileCalls summarize_file(const std::string& location) {
  analysis::FileCalls unread;
  unread.path = location;
  unread.parsed = false;
  ReadResult read = read_source_file(location);
  if (!read.text || rules::not_text_reason(*read.text)) return unread;
  try {
    return analysis::summarize_calls(*read.text, location);
  } catch (const std::exception&) {
    return unread;
  }
}

std::shared_ptr<const analysis::ProjectIndex> index_project(const std::vector<SourceFile>& files, unsigned jobs) {
  if (files.size() < 2 || files.size() > kMaxProjectFiles) return nullptr;
  std::vector<analysis::FileCalls> summaries;
  summaries.reserve(files.size());
  ordered_parallel_for<analysis::FileCalls>(
      files.size(), jobs, 64 * std::max(1u, jobs), [&](std::size_t i) { return summarize_file(files[i].location); },
      [&](analysis::FileCalls&& f) { summaries.push_back(std::move(f)); });
  return std::make_shared<const analysis::ProjectIndex>(std::move(summaries));
}

}  // namespace preflight::server
