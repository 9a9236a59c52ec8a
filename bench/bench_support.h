// What every preflight benchmark prints and measures the same way: the command line that
// reproduces it, the build, the machine and its load, percentiles, a process's memory from
// /proc, and a deterministic choice of real Python files. Header-only; benchmarks only.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace preflight::bench {

namespace fs = std::filesystem;

using Clock = std::chrono::steady_clock;

inline double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

inline std::string shell_quote(std::string_view s) {
  bool plain = !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("_./=:,+-@%").find(c) != std::string_view::npos;
  });
  if (plain) return std::string(s);
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// The command as run, from the directory it was run in: relative paths keep their meaning.
inline std::string reproduce_command(int argc, char** argv) {
  std::string cmd = "cd " + shell_quote(fs::current_path().string()) + " &&";
  for (int i = 0; i < argc; ++i) cmd += " " + shell_quote(argv[i]);
  return cmd;
}

// /proc/loadavg's three figures: timings taken while other work runs are not comparable.
inline std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string one, five, fifteen;
  return in >> one >> five >> fifteen ? one + " " + five + " " + fifteen : "unknown";
}

// `name` of the program, then the lines every benchmark's report starts with.
inline void print_header(const char* name, int argc, char** argv) {
  std::printf("%s\n", name);
  std::printf("command:  %s\n", reproduce_command(argc, argv).c_str());
  std::printf("build:    CMAKE_BUILD_TYPE=%s (the preflight binary and libraries measured)\n", PF_BENCH_BUILD_TYPE);
  std::string type = PF_BENCH_BUILD_TYPE;
  if (type != "Release" && type != "RelWithDebInfo" && type != "MinSizeRel")
    std::printf("warning:  not an optimised build; configure with -DCMAKE_BUILD_TYPE=Release\n");
  std::printf("machine:  %u hardware threads, load average %s at start\n\n", std::thread::hardware_concurrency(),
              load_average().c_str());
}

// Nearest-rank percentile (p in [0, 1]) of a non-empty sample.
inline double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  auto rank = static_cast<std::size_t>(p * static_cast<double>(v.size()) + 0.999999);
  return v[std::min(v.size() - 1, rank == 0 ? 0 : rank - 1)];
}

inline double median(std::vector<double> v) { return percentile(std::move(v), 0.5); }

// A field of /proc/PID/status in KiB (VmRSS: resident now, VmHWM: the peak), -1 when absent.
inline long proc_status_kib(pid_t pid, std::string_view field) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);)
    if (line.starts_with(field) && line.size() > field.size() && line[field.size()] == ':')
      return std::stol(line.substr(field.size() + 1));
  return -1;
}

inline std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Every *.py under `roots` except .git / __pycache__ / virtual environments, sorted, so every
// run picks the same files.
inline std::vector<fs::path> python_files(const std::vector<fs::path>& roots) {
  std::vector<fs::path> files;
  for (const fs::path& root : roots) {
    auto it = fs::recursive_directory_iterator(root, fs::directory_options::skip_permission_denied);
    for (; it != fs::recursive_directory_iterator(); ++it) {
      std::string name = it->path().filename().string();
      std::error_code ec;
      if (it->is_directory() && (name == ".git" || name == "__pycache__" || fs::exists(it->path() / "pyvenv.cfg", ec))) {
        it.disable_recursion_pending();
        continue;
      }
      if (it->is_regular_file() && it->path().extension() == ".py") files.push_back(it->path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

// `count` of `files` spread evenly over the sorted list, so every repository contributes,
// not just the first in alphabetical order. Cycles through the list when it is shorter.
inline std::vector<fs::path> spread_pick(const std::vector<fs::path>& files, std::size_t count) {
  std::vector<fs::path> picked;
  for (std::size_t i = 0; i < count && !files.empty(); ++i)
    picked.push_back(count <= files.size() ? files[i * files.size() / count] : files[i % files.size()]);
  return picked;
}

inline std::string format_bytes(double bytes) {
  char buf[64];
  if (bytes >= 1e6)
    std::snprintf(buf, sizeof buf, "%.1f MB", bytes / 1e6);
  else
    std::snprintf(buf, sizeof buf, "%.1f kB", bytes / 1e3);
  return buf;
}

}  // namespace preflight::bench
