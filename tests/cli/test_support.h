// Helpers shared by the CLI tests: a scratch directory that removes itself, whole-file reads
// and writes, and a builder for hand-made findings.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/findings.h"

namespace preflight::server::testing {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "preflight-cli-XXXXXX").string();
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    path_ = ::mkdtemp(buf.data());
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const fs::path& path() const { return path_; }

  // Writes `content` at `relative`, creating parent directories.
  fs::path write(std::string_view relative, std::string_view content) const {
    fs::path p = path_ / relative;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << content;
    return p;
  }

 private:
  fs::path path_;
};

inline std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline analysis::Fix make_fix(std::string description, analysis::FixSafety safety,
                              std::vector<analysis::TextEdit> edits) {
  return {std::move(description), safety, std::move(edits)};
}

inline analysis::Finding make_finding(std::string code, uint32_t begin, uint32_t end,
                                      std::vector<analysis::Fix> fixes = {},
                                      analysis::Severity severity = analysis::Severity::Error) {
  analysis::Finding f;
  f.code = std::move(code);
  f.severity = severity;
  f.range = {begin, end};
  f.message = "message for " + f.code;
  f.fixes = std::move(fixes);
  return f;
}

}  // namespace preflight::server::testing
