// preflight_bench: how fast the linter is, layer by layer, on a real corpus.
//
// Every file is read into memory first so that the timings are of computation, not of the
// disk or the page cache. Three layers are timed, each the best of R runs: tree-sitter alone
// (the floor), the module model with provenance (the analysis core), and check_source (what a
// user waits for). The full check is also run on a thread pool, and its finding count must
// match the single-threaded one: check_source is pure, so any difference is a bug.
#include <tree_sitter/api.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "analysis/module_model.h"
#include "analysis/provenance.h"
#include "analysis/syntax.h"
#include "rules/engine.h"

namespace {

namespace fs = std::filesystem;
namespace an = preflight::analysis;

// The reference tool's own published figure (single process, PyTorch's source tree). It was
// not measured here, so the output labels every comparison with it as against a claim.
constexpr double kReferenceClaimedFilesPerSecond = 9.5;

// Mirrors kMaxDepth in rules/engine.cpp: check_source refuses deeper trees because the
// analysis recurses, so the model-building mode skips the same files rather than timing work
// (or a stack overflow) the full check never does.
constexpr uint32_t kMaxDepth = 400;

struct Options {
  unsigned jobs = 1;
  unsigned repeat = 3;
  std::vector<std::string> roots;
};

struct Corpus {
  std::vector<std::string> paths;
  std::vector<std::string> texts;
  std::vector<char> modelable;  // depth within kMaxDepth (char: read from many threads)
  uint64_t bytes = 0;
  uint64_t nodes = 0;
  size_t too_deep = 0;
};

// --- command line ---------------------------------------------------------------------------

constexpr const char* kUsage = "usage: preflight_bench [--jobs N] [--repeat R] DIR...\n";

unsigned default_jobs() { return std::max(1u, std::thread::hardware_concurrency()); }

unsigned parse_positive(std::string_view flag, const char* value) {
  if (value == nullptr) throw std::invalid_argument(std::string(flag) + " needs a value");
  char* end = nullptr;
  unsigned long n = std::strtoul(value, &end, 10);
  if (*value == '\0' || *end != '\0' || n == 0 || n > 4096)
    throw std::invalid_argument(std::string(flag) + " wants a whole number from 1 to 4096");
  return static_cast<unsigned>(n);
}

std::optional<Options> parse_args(int argc, char** argv) {
  Options o;
  o.jobs = default_jobs();
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "-h" || arg == "--help") return std::nullopt;
    if (arg == "--jobs" || arg == "-j")
      o.jobs = parse_positive(arg, i + 1 < argc ? argv[++i] : nullptr);
    else if (arg == "--repeat")
      o.repeat = parse_positive(arg, i + 1 < argc ? argv[++i] : nullptr);
    else if (arg.starts_with("-"))
      throw std::invalid_argument("unknown option " + std::string(arg));
    else
      o.roots.emplace_back(arg);
  }
  if (o.roots.empty()) throw std::invalid_argument("no directory given");
  return o;
}

std::string shell_quote(std::string_view s) {
  bool plain = !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("_./=:,+-@%").find(c) !=
                                                              std::string_view::npos;
  });
  if (plain) return std::string(s);
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Defaults are written out, so the line reproduces the run even where the core count differs.
std::string reproduce_command(const char* argv0, const Options& o) {
  std::string cmd = "cd " + shell_quote(fs::current_path().string()) + " && " +
                    shell_quote(argv0) + " --jobs " + std::to_string(o.jobs) + " --repeat " +
                    std::to_string(o.repeat);
  for (const std::string& root : o.roots) cmd += " " + shell_quote(root);
  return cmd;
}

// --- loading --------------------------------------------------------------------------------

// Virtual environments are recognised by the pyvenv.cfg every one of them has, not by name:
// the standard library has a `venv` package of its own, which is real source to check.
bool skipped_directory(const fs::path& dir) {
  std::string name = dir.filename().string();
  if (name == ".git" || name == "__pycache__") return true;
  std::error_code ec;
  return fs::exists(dir / "pyvenv.cfg", ec);
}

void collect_under(const fs::path& root, std::vector<fs::path>& out) {
  auto it = fs::recursive_directory_iterator(root, fs::directory_options::skip_permission_denied);
  for (; it != fs::recursive_directory_iterator(); ++it) {
    if (it->is_directory() && skipped_directory(it->path())) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file() && it->path().extension() == ".py") out.push_back(it->path());
  }
}

std::vector<fs::path> collect_python_files(const std::vector<std::string>& roots) {
  std::vector<fs::path> files;
  for (const std::string& root : roots) {
    if (fs::is_directory(root))
      collect_under(root, files);
    else if (fs::is_regular_file(root))
      files.emplace_back(root);
    else
      throw std::runtime_error("no such directory: " + root);
  }
  // Sorted so that every run (and every machine) sees the files in the same order.
  std::sort(files.begin(), files.end());
  files.erase(std::unique(files.begin(), files.end()), files.end());
  return files;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

struct WalkStats {
  uint64_t nodes = 0;
  uint32_t max_depth = 0;
};

// Visits every node, named or not, in document order: the cheapest full traversal there is.
WalkStats walk(TSNode root) {
  WalkStats stats;
  TSTreeCursor cursor = ts_tree_cursor_new(root);
  uint32_t depth = 0;
  for (;;) {
    ++stats.nodes;
    stats.max_depth = std::max(stats.max_depth, depth);
    if (ts_tree_cursor_goto_first_child(&cursor)) {
      ++depth;
      continue;
    }
    while (!ts_tree_cursor_goto_next_sibling(&cursor)) {
      if (!ts_tree_cursor_goto_parent(&cursor)) {
        ts_tree_cursor_delete(&cursor);
        return stats;
      }
      --depth;
    }
  }
}

Corpus load_corpus(const std::vector<std::string>& roots) {
  Corpus c;
  for (const fs::path& path : collect_python_files(roots)) {
    c.paths.push_back(path.string());
    c.texts.push_back(read_file(path));
    c.bytes += c.texts.back().size();
    // One untimed parse decides which files the model mode may build, as check_source would.
    WalkStats stats = walk(an::SyntaxTree::parse(c.texts.back()).root());
    c.nodes += stats.nodes;
    c.modelable.push_back(stats.max_depth <= kMaxDepth);
    if (stats.max_depth > kMaxDepth) ++c.too_deep;
  }
  return c;
}

// --- the work per file ----------------------------------------------------------------------

// Each returns a count that depends on the work, so none of it can be optimised away and the
// counts can be compared between runs.
using FileWork = uint64_t (*)(const Corpus&, size_t);

uint64_t parse_only(const Corpus& c, size_t i) {
  an::SyntaxTree tree = an::SyntaxTree::parse(c.texts[i]);
  return walk(tree.root()).nodes;
}

uint64_t build_model(const Corpus& c, size_t i) {
  an::SyntaxTree tree = an::SyntaxTree::parse(c.texts[i]);
  if (!c.modelable[i]) return 0;
  an::ModuleModel model(tree.root(), c.texts[i]);
  an::Provenance provenance(model);
  return model.scopes().size();
}

uint64_t full_check(const Corpus& c, size_t i) {
  return preflight::rules::check_source(c.texts[i], {}).findings.size();
}

// --- running --------------------------------------------------------------------------------

struct Tally {
  uint64_t count = 0;
  uint64_t failures = 0;
  std::string first_failure;
};

// An exception is counted rather than fatal: a benchmark that dies on one file of thousands
// reports nothing, and the failure is printed afterwards.
void run_one(const Corpus& c, size_t i, FileWork work, Tally& tally) {
  try {
    tally.count += work(c, i);
  } catch (const std::exception& e) {
    if (tally.failures++ == 0) tally.first_failure = c.paths[i] + ": " + e.what();
  }
}

Tally run_serial(const Corpus& c, FileWork work) {
  Tally tally;
  for (size_t i = 0; i < c.texts.size(); ++i) run_one(c, i, work, tally);
  return tally;
}

// Workers take the next file from a shared index, so one huge file does not leave the others
// idle behind a static partition.
Tally run_pool(const Corpus& c, FileWork work, unsigned threads) {
  std::atomic<size_t> next{0};
  std::vector<Tally> tallies(threads);
  std::vector<std::thread> pool;
  for (unsigned k = 0; k < threads; ++k)
    pool.emplace_back([&c, work, &next, &tally = tallies[k]] {
      for (size_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < c.texts.size();)
        run_one(c, i, work, tally);
    });
  for (std::thread& t : pool) t.join();
  Tally total;
  for (const Tally& t : tallies) {
    total.count += t.count;
    total.failures += t.failures;
    if (total.first_failure.empty()) total.first_failure = t.first_failure;
  }
  return total;
}

struct Measurement {
  std::string mode;
  unsigned threads = 1;
  bool pooled = false;
  double seconds = std::numeric_limits<double>::infinity();
  Tally tally;
  bool stable = true;  // every repeat gave the same count
};

Measurement measure(std::string mode, unsigned threads, bool pooled, unsigned repeat,
                    const Corpus& c, FileWork work) {
  Measurement m;
  m.mode = std::move(mode);
  m.threads = threads;
  m.pooled = pooled;
  for (unsigned r = 0; r < repeat; ++r) {
    auto start = std::chrono::steady_clock::now();
    Tally tally = pooled ? run_pool(c, work, threads) : run_serial(c, work);
    std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    m.seconds = std::min(m.seconds, took.count());
    if (r == 0)
      m.tally = tally;
    else if (tally.count != m.tally.count || tally.failures != m.tally.failures)
      m.stable = false;
  }
  return m;
}

// --- reporting ------------------------------------------------------------------------------

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.starts_with("model name"))
      if (size_t colon = line.find(':'); colon != std::string::npos)
        return line.substr(line.find_first_not_of(" \t", colon + 1));
  return "unknown CPU";
}

// The 1-minute load average: timings taken while other work runs are not comparable.
std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string one;
  return in >> one ? one : "unknown";
}

bool optimised_build(std::string_view type) {
  return type == "Release" || type == "RelWithDebInfo" || type == "MinSizeRel";
}

void print_header(const std::string& command, const Corpus& c, const Options& o) {
  std::printf("preflight_bench\n");
  std::printf("command:  %s\n", command.c_str());
  std::printf("compiler: %s (__VERSION__ \"%s\")\n", PF_BENCH_COMPILER, __VERSION__);
  std::printf("build:    CMAKE_BUILD_TYPE=%s, library flags \"%s\"; preflight_bench adds -O2\n",
              PF_BENCH_BUILD_TYPE, PF_BENCH_CXX_FLAGS);
  if (!optimised_build(PF_BENCH_BUILD_TYPE))
    std::printf("warning:  the analysis libraries are not optimised in this tree; configure "
                "with -DCMAKE_BUILD_TYPE=Release for meaningful numbers\n");
  std::printf("machine:  %u hardware threads (std::thread::hardware_concurrency), %s, "
              "load average %s at start\n",
              std::thread::hardware_concurrency(), cpu_model().c_str(), load_average().c_str());
  std::printf("corpus:   %zu .py files, %.3f MB (10^6 bytes), %llu syntax nodes, read into "
              "memory before timing\n",
              c.texts.size(), static_cast<double>(c.bytes) / 1e6,
              static_cast<unsigned long long>(c.nodes));
  if (c.too_deep > 0)
    std::printf("          %zu files nest deeper than %u: parsed but not modelled (check_source "
                "refuses them too)\n",
                c.too_deep, kMaxDepth);
  std::printf("timing:   best of %u runs per row, wall clock\n\n", o.repeat);
}

void print_table(const std::vector<Measurement>& rows, const Corpus& c) {
  double mb = static_cast<double>(c.bytes) / 1e6;
  auto files = static_cast<double>(c.texts.size());
  std::printf("%-20s %7s %7s %9s %9s %10s %8s\n", "mode", "threads", "files", "MB", "seconds",
              "files/s", "MB/s");
  for (const Measurement& m : rows)
    std::printf("%-20s %7u %7zu %9.3f %9.3f %10.1f %8.2f\n", m.mode.c_str(), m.threads,
                c.texts.size(), mb, m.seconds, files / m.seconds, mb / m.seconds);
  std::printf("\n");
}

// Returns false when any sanity check fails.
bool print_checks(const std::vector<Measurement>& rows) {
  bool ok = true;
  for (const Measurement& m : rows) {
    if (m.tally.failures > 0)
      std::printf("failures: %s (%u thread(s)): %llu files threw; first: %s\n", m.mode.c_str(),
                  m.threads, static_cast<unsigned long long>(m.tally.failures),
                  m.tally.first_failure.c_str());
    if (!m.stable) {
      std::fprintf(stderr, "error: %s (%u thread(s)) gave different counts across repeats\n",
                   m.mode.c_str(), m.threads);
      ok = false;
    }
  }
  return ok;
}

void print_summary(const Measurement& parse, const Measurement& model, const Measurement& full,
                   const Measurement& pooled, size_t files) {
  std::printf("full / parse-only (1 thread):     %.2f\n", full.seconds / parse.seconds);
  std::printf("model / parse-only (1 thread):    %.2f\n", model.seconds / parse.seconds);
  std::printf("pool speed-up (%u over 1 thread):  %.2f\n", pooled.threads,
              full.seconds / pooled.seconds);
  std::printf("findings:                         %llu (1 thread), %llu (pool of %u)\n",
              static_cast<unsigned long long>(full.tally.count),
              static_cast<unsigned long long>(pooled.tally.count), pooled.threads);
  auto rate = [files](const Measurement& m) { return static_cast<double>(files) / m.seconds; };
  std::printf("against a claim, not a measurement (the reference's own figure of ~%.1f files/s, "
              "single process on PyTorch's tree; the reference was not run here, and corpus and "
              "machine differ):\n",
              kReferenceClaimedFilesPerSecond);
  std::printf("  full check, 1 thread:  %.0f× the reference's claimed files/s\n",
              rate(full) / kReferenceClaimedFilesPerSecond);
  std::printf("  full check, pool of %u: %.0f× the reference's claimed files/s\n", pooled.threads,
              rate(pooled) / kReferenceClaimedFilesPerSecond);
}

int run(int argc, char** argv) {
  std::optional<Options> options = parse_args(argc, argv);
  if (!options) {
    std::printf("%s", kUsage);
    return 0;
  }
  const Options& o = *options;
  Corpus c = load_corpus(o.roots);
  if (c.texts.empty()) throw std::runtime_error("no .py files under the given directories");
  print_header(reproduce_command(argv[0], o), c, o);

  std::vector<Measurement> rows;
  rows.push_back(measure("parse-only", 1, false, o.repeat, c, parse_only));
  rows.push_back(measure("model-building", 1, false, o.repeat, c, build_model));
  rows.push_back(measure("full check", 1, false, o.repeat, c, full_check));
  rows.push_back(measure("full check (pool)", o.jobs, true, o.repeat, c, full_check));
  print_table(rows, c);
  bool ok = print_checks(rows);
  if (rows[0].tally.count != c.nodes) {
    std::fprintf(stderr, "error: parse-only walked %llu nodes, the untimed load walked %llu\n",
                 static_cast<unsigned long long>(rows[0].tally.count),
                 static_cast<unsigned long long>(c.nodes));
    ok = false;
  }
  print_summary(rows[0], rows[1], rows[2], rows[3], c.texts.size());

  if (rows[2].tally.count != rows[3].tally.count) {
    std::fprintf(stderr, "error: %llu findings single-threaded but %llu on a pool of %u\n",
                 static_cast<unsigned long long>(rows[2].tally.count),
                 static_cast<unsigned long long>(rows[3].tally.count), o.jobs);
    ok = false;
  }
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "preflight_bench: %s\n%s", e.what(), kUsage);
    return 2;
  }
}
