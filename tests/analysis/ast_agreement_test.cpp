// Opt-in, like the differential corpus tests: PF_AST_CORPUS names a directory of Python files
// (a checkout of real repositories). Each .py file is parsed by CPython's own ast.parse (one
// `python3` process for the whole corpus; PF_PYTHON names another interpreter) and checked
// by the engine, and every disagreement on "does it parse" is listed. Valid Python the
// engine reports as a syntax error fails the test (issue 26: valid code is never a
// failure); the reverse is listed only, since tree-sitter-python reads more than CPython
// (Python 2 `print x`, `x = a, *b or c`) and an interpreter older than the code rejects it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "rules/engine.h"

namespace preflight::rules {
namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<fs::path> python_files(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied))
    if (e.is_regular_file() && e.path().extension() == ".py") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

// The files of `files` that ast.parse rejects, by one interpreter run over a list file.
std::set<fs::path> rejected_by_cpython(const std::vector<fs::path>& files) {
  fs::path list = fs::temp_directory_path() / ("pf_ast_agreement_" + std::to_string(::getpid()));
  {
    std::ofstream out(list);
    for (const fs::path& f : files) out << f.string() << "\n";
  }
  const char* python = std::getenv("PF_PYTHON");
  std::string command = std::string(python ? python : "python3") +
                        " -c 'import ast, sys, warnings\n"
                        "warnings.simplefilter(\"ignore\")\n"
                        "for path in open(sys.argv[1]).read().splitlines():\n"
                        "    try: ast.parse(open(path, \"rb\").read(), path)\n"
                        "    except (SyntaxError, ValueError): print(path)\n"
                        "' " + list.string();
  std::set<fs::path> rejected;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe) {
    std::string out;
    char buf[4096];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) out.append(buf, n);
    int status = ::pclose(pipe);
    EXPECT_EQ(status, 0) << command;
    for (size_t at = 0, nl; (nl = out.find('\n', at)) != std::string::npos; at = nl + 1)
      rejected.insert(out.substr(at, nl - at));
  }
  fs::remove(list);
  return rejected;
}

// "Parses" for the engine: read as text and no syntax error. A file the engine refuses
// before or after parsing (not UTF-8 text, over the depth guard) is listed as such: valid
// Python it does not analyse, but not a grammar disagreement.
TEST(AstAgreement, EveryFileCPythonParsesParsesWithoutASyntaxError) {
  const char* dir = std::getenv("PF_AST_CORPUS");
  if (!dir) GTEST_SKIP() << "set PF_AST_CORPUS to a directory of Python files";
  std::vector<fs::path> files = python_files(dir);
  std::set<fs::path> rejected = rejected_by_cpython(files);
  size_t valid_failing = 0, valid_refused = 0, invalid_accepted = 0, gaps = 0;
  for (const fs::path& f : files) {
    CheckResult r = check_source(read_text(f), {});
    bool cpython_parses = !rejected.count(f);
    gaps += !r.grammar_gaps.empty();
    std::string refusal = r.status == FileStatus::NotText ? r.status_reason
                          : !r.syntax_errors.empty() && r.syntax_errors.front().message != "syntax error"
                              ? r.syntax_errors.front().message
                              : "";
    bool syntax_error = refusal.empty() && !r.syntax_errors.empty();
    if (cpython_parses && !refusal.empty()) {
      ++valid_refused;
      std::printf("  valid Python, not analysed (%s): %s\n", refusal.c_str(), f.string().c_str());
    } else if (cpython_parses && syntax_error) {
      ++valid_failing;
      ADD_FAILURE() << f.string() << ": valid Python (ast.parse), but a syntax error at byte "
                    << r.syntax_errors.front().range.begin;
    } else if (!cpython_parses && refusal.empty() && !syntax_error) {
      ++invalid_accepted;
      std::printf("  ast.parse rejects, the engine reads: %s\n", f.string().c_str());
    }
  }
  std::printf("%zu files: %zu valid but a syntax error, %zu valid but not analysed, %zu rejected "
              "by ast.parse but read, %zu read through a grammar gap\n",
              files.size(), valid_failing, valid_refused, invalid_accepted, gaps);
}

}  // namespace
}  // namespace preflight::rules
