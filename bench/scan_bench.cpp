// preflight_scan_bench: time to full workspace diagnostics over a 10,000-file tree (issue 9,
// program 4). A report, not a test.
//
// Builds the tree under a fresh temporary directory by copying real Python files under new
// names (pkgNNN/mod_NNNNN.py, 100 files per package; the sources sorted, then spread evenly
// when there are more of them than files, or cycled when fewer), then:
//   a. `preflight check -j1` and `-jN` over it: wall time, files/s, the child's peak RSS
//      (wait4's ru_maxrss), its exit status;
//   b. `preflight lsp` answering workspace/diagnostic with a partialResultToken: time to the
//      first streamed batch and to the answer, reports and diagnostics counted, the server's
//      peak RSS (VmHWM in /proc/PID/status).
// The tree is removed afterwards unless --keep. With several sizes (--files 10000,20000,40000)
// each size gets its own tree; -j1 runs on the first only, and a last table sets the peak RSS
// of `check -jN` and of the server against the tree size: bounded memory is a flat line.
// Usage: preflight_scan_bench PREFLIGHT_EXE [--files N[,N...]] [--jobs N] [--keep] [SOURCE_DIR...]
//        (defaults: 10000, hardware threads, /work/corpus /usr/lib/python3.11)
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_support.h"
#include "lsp_client.h"

namespace {

using json = nlohmann::json;
using preflight::testing::LspProcess;
namespace pb = preflight::bench;
namespace fs = std::filesystem;

struct Options {
  std::string exe;
  std::vector<size_t> sizes{10000};
  unsigned jobs = std::max(1u, std::thread::hardware_concurrency());
  bool keep = false;
  std::vector<fs::path> sources;
};

struct Tree {
  fs::path root;
  size_t files = 0, bytes = 0, sources = 0;
};

fs::path copy_name(size_t i) {
  char name[64];
  std::snprintf(name, sizeof name, "pkg%03zu/mod_%05zu.py", i / 100, i);
  return name;
}

Tree make_tree(const Options& o, size_t files) {
  std::vector<fs::path> sources = pb::python_files(o.sources);
  if (sources.empty()) throw std::runtime_error("no .py files under the source directories");
  std::string pattern = (fs::temp_directory_path() / "preflight-scan-XXXXXX").string();
  if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
  Tree tree{pattern, files, 0, sources.size()};
  std::vector<fs::path> picked = pb::spread_pick(sources, files);
  for (size_t i = 0; i < files; ++i) {
    const fs::path& source = picked[i];
    fs::path target = tree.root / copy_name(i);
    fs::create_directories(target.parent_path());
    fs::copy_file(source, target);
    tree.bytes += fs::file_size(target);
  }
  return tree;
}

struct ChildRun {
  double seconds = 0;
  long max_rss_kib = 0;
  int exit_status = -1;
};

// Runs `args` with stdout and stderr on /dev/null (the report is produced, then discarded).
ChildRun run_child(std::vector<std::string> args) {
  auto t = pb::Clock::now();
  pid_t pid = ::fork();
  if (pid == 0) {
    int devnull = ::open("/dev/null", O_WRONLY);
    ::dup2(devnull, 1);
    ::dup2(devnull, 2);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  int status = 0;
  rusage usage{};
  if (pid < 0 || ::wait4(pid, &status, 0, &usage) != pid) throw std::runtime_error("could not run " + args[0]);
  ChildRun r;
  r.seconds = pb::ms_since(t) / 1e3;
  r.max_rss_kib = usage.ru_maxrss;
  r.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

// Peak RSS in MB of each run at one tree size.
struct SizeRow {
  size_t files = 0;
  double cli_mb = 0, server_mb = 0;
};

double cli_scan(const Options& o, const Tree& tree, unsigned jobs) {
  std::vector<std::string> args{o.exe, "check", "-j", std::to_string(jobs), "-q", "--no-color", tree.root.string()};
  ChildRun r = run_child(args);
  std::printf("  preflight check -j%-2u %8.2f s  %8.1f files/s  peak RSS %7.1f MB  exit %d%s\n", jobs, r.seconds,
              static_cast<double>(tree.files) / r.seconds, static_cast<double>(r.max_rss_kib) * 1024 / 1e6,
              r.exit_status, r.exit_status > 1 ? " (an error, not findings: the figures are void)" : "");
  return static_cast<double>(r.max_rss_kib) * 1024 / 1e6;
}

size_t count_diagnostics(const json& items) {
  size_t n = 0;
  for (const json& report : items) n += report.value("items", json::array()).size();
  return n;
}

double server_scan(const Options& o, const Tree& tree) {
  LspProcess lsp({o.exe, "lsp", "--log-level", "off", "--workers", std::to_string(o.jobs)});
  lsp.initialize(preflight::testing::vscode_capabilities(),
                 {{"workspaceFolders", {{{"uri", "file://" + tree.root.string()}, {"name", "bench"}}}}});
  long rss_before = pb::proc_status_kib(lsp.pid(), "VmRSS");
  auto t = pb::Clock::now();
  int id = lsp.send_request("workspace/diagnostic",
                            {{"previousResultIds", json::array()}, {"partialResultToken", "bench-partial"}});
  // The first streamed batch, then the answer: wait_response keeps every message before it, in
  // order, so the later batches are counted from there. (wait_notification drops what it skips,
  // which is only $/progress of other tokens before the first batch.)
  auto is_batch = [](const json& p) { return p["token"] == "bench-partial"; };
  size_t reports = 0, diagnostics = 0, batches = 0;
  auto count_batch = [&](const json& batch) {
    ++batches;
    reports += batch["value"]["items"].size();
    diagnostics += count_diagnostics(batch["value"]["items"]);
  };
  auto first = lsp.wait_notification("$/progress", is_batch, 1800000);
  double first_ms = pb::ms_since(t);
  if (!first) throw std::runtime_error("workspace/diagnostic streamed no partial result");
  count_batch(*first);
  json answer = lsp.wait_response(id, 1800000);
  double done_ms = pb::ms_since(t);
  if (!answer.contains("result")) throw std::runtime_error("workspace/diagnostic failed: " + answer.dump());
  while (auto batch = lsp.wait_notification("$/progress", is_batch, 0)) count_batch(*batch);
  reports += answer["result"]["items"].size();
  diagnostics += count_diagnostics(answer["result"]["items"]);
  long peak = pb::proc_status_kib(lsp.pid(), "VmHWM"), rss_after = pb::proc_status_kib(lsp.pid(), "VmRSS");
  std::printf("  workspace/diagnostic (%u workers, streamed): first batch after %.1f ms, answer after %.2f s "
              "(%.1f files/s)\n",
              o.jobs, first_ms, done_ms / 1e3, static_cast<double>(tree.files) / (done_ms / 1e3));
  std::printf("    %zu reports (%zu in %zu partial batches), %zu diagnostics\n", reports,
              reports - answer["result"]["items"].size(), batches, diagnostics);
  std::printf("    server RSS %.1f MB after initialize, %.1f MB after the answer, peak (VmHWM) %.1f MB\n",
              static_cast<double>(rss_before) * 1024 / 1e6, static_cast<double>(rss_after) * 1024 / 1e6,
              static_cast<double>(peak) * 1024 / 1e6);
  return static_cast<double>(peak) * 1024 / 1e6;
}

Options parse_args(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]).starts_with("-"))
    throw std::invalid_argument("usage: preflight_scan_bench PREFLIGHT_EXE [--files N] [--jobs N] [--keep] [SOURCE_DIR...]");
  Options o;
  o.exe = fs::absolute(argv[1]).string();
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--files" && i + 1 < argc) {
      o.sizes.clear();
      std::string list = argv[++i];
      for (size_t at = 0; at <= list.size();) {
        size_t comma = std::min(list.find(',', at), list.size());
        o.sizes.push_back(std::stoul(list.substr(at, comma - at)));
        at = comma + 1;
      }
    }
    else if (arg == "--jobs" && i + 1 < argc) o.jobs = static_cast<unsigned>(std::stoul(argv[++i]));
    else if (arg == "--keep") o.keep = true;
    else if (arg.starts_with("-")) throw std::invalid_argument("unknown option " + arg);
    else o.sources.emplace_back(arg);
  }
  if (o.sources.empty()) o.sources = {"/work/corpus", "/usr/lib/python3.11"};
  for (size_t n : o.sizes)
    if (n == 0) throw std::invalid_argument("--files wants positive counts");
  if (o.jobs == 0) throw std::invalid_argument("--jobs wants a positive count");
  return o;
}

// One tree size: build, check from the command line (and -j1 when `single`), scan from the
// server, remove.
SizeRow run_size(const Options& o, size_t files, bool single) {
  auto t = pb::Clock::now();
  Tree tree = make_tree(o, files);
  std::printf("tree: %s, %zu files (%zu sources under", tree.root.c_str(), tree.files, tree.sources);
  for (const fs::path& s : o.sources) std::printf(" %s", s.c_str());
  std::printf(", spread or cycled), %s, built in %.1f s\n\n", pb::format_bytes(static_cast<double>(tree.bytes)).c_str(),
              pb::ms_since(t) / 1e3);
  SizeRow row{files};
  try {
    std::printf("command line (report to /dev/null):\n");
    if (single || o.jobs == 1) row.cli_mb = cli_scan(o, tree, 1);
    if (o.jobs != 1) row.cli_mb = cli_scan(o, tree, o.jobs);
    std::printf("language server:\n");
    row.server_mb = server_scan(o, tree);
  } catch (...) {
    if (!o.keep) fs::remove_all(tree.root);
    throw;
  }
  if (o.keep)
    std::printf("\nkept the tree: %s\n", tree.root.c_str());
  else
    fs::remove_all(tree.root);
  return row;
}

// Peak RSS against tree size, and the growth per 1,000 files from the smallest to the largest.
void print_memory_table(std::vector<SizeRow> rows, unsigned jobs) {
  std::sort(rows.begin(), rows.end(), [](const SizeRow& x, const SizeRow& y) { return x.files < y.files; });
  std::string check = "check -j" + std::to_string(jobs);
  std::printf("\npeak RSS against tree size:\n  %8s  %16s  %22s\n", "files", check.c_str(), "server workspace scan");
  for (const SizeRow& r : rows) std::printf("  %8zu  %13.1f MB  %19.1f MB\n", r.files, r.cli_mb, r.server_mb);
  const SizeRow &a = rows.front(), &b = rows.back();
  double per_k = 1000.0 / static_cast<double>(b.files - a.files);
  std::printf("  growth per 1,000 more files: check %.2f MB, server %.2f MB\n", (b.cli_mb - a.cli_mb) * per_k,
              (b.server_mb - a.server_mb) * per_k);
}

int run(int argc, char** argv) {
  Options o = parse_args(argc, argv);
  pb::print_header("preflight_scan_bench (workspace scan)", argc, argv);
  std::vector<SizeRow> rows;
  for (size_t i = 0; i < o.sizes.size(); ++i) {
    if (i) std::printf("\n");
    rows.push_back(run_size(o, o.sizes[i], i == 0));
  }
  bool sizes_differ = std::any_of(rows.begin(), rows.end(), [&](const SizeRow& r) { return r.files != rows[0].files; });
  if (sizes_differ) print_memory_table(rows, o.jobs);
  std::printf("\nload average at the end: %s\n", pb::load_average().c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IONBF, 0);
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "preflight_scan_bench: %s\n", e.what());
    return 2;
  }
}
