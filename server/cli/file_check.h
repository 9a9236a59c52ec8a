// Checking one file: read it, run the engine, and (for --fix / --diff) compute the fixed text
// and re-check it. No output and no writes, so files can be checked on worker threads; the
// caller writes fixes afterwards, one file at a time.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rules/engine.h"
#include "server/cli/discovery.h"
#include "server/cli/file_io.h"
#include "server/cli/fix_apply.h"

namespace preflight::server {

// The engine entry point; rules::check_source in production, a fake in tests.
using SourceChecker =
    std::function<rules::CheckResult(std::string_view, const rules::CheckOptions&)>;

// A text and what the engine reported on it.
struct FileState {
  std::string text;
  std::vector<analysis::Finding> findings;  // report order
  std::vector<std::string> failures;        // "syntax error: line 3:5", ...
  std::vector<rules::UnusedSuppression> unused;  // suppressions that silenced nothing
  std::vector<analysis::Silence> silences;       // where rules stayed quiet on purpose
};

struct FileOutcome {
  SourceFile file;
  bool skipped = false;  // skip-file marker: reports nothing at all
  FileState original;
  // With plan_fixes: the text after the applied fixes, re-checked; absent when no fix applies
  // or when the fixed text would parse worse than the original (then `original` carries a
  // failure saying so).
  std::optional<FileState> fixed;
  std::size_t fixed_count = 0;
  FileStamp stamp;  // the file as read: a fix is written only over this version
};

// `keep_silences`: the report lists them (--explain-silence). Without it they are dropped
// here, so that a file whose only results are silences does not keep its text for the report.
// `fix_scope`: which fixes the plan takes (with plan_fixes).
FileOutcome check_file(const SourceFile& file, const rules::CheckOptions& options,
                       bool plan_fixes, bool keep_silences, const SourceChecker& checker,
                       FixScope fix_scope = FixScope::SafeOnly);

}  // namespace preflight::server
