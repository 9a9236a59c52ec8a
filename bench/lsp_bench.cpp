// preflight_lsp_bench: the language server's figures, measured through the real binary over
// pipes (a report, not a test):
//   1. didChange -> publishDiagnostics latency on a generated 5,000-line training file
//      (one-character edits inside one function body; debounce 0, so it is not counted),
//      p50 / p90 / p99 over N edits;
//   2. time from the workspace/diagnostic request to its answer over a directory;
//   3. the server's resident memory (VmRSS) with 100 open files.
// Usage: preflight_lsp_bench PREFLIGHT_EXE [--edits N] [--workspace DIR] [--files-dir DIR] [--file PY]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "lsp_client.h"

namespace fs = std::filesystem;
using json = nlohmann::json;
using preflight::testing::LspProcess;

namespace {

double ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

// ~5,000 lines: 250 helper functions and one training loop with a retained graph.
std::string generated_file() {
  std::ostringstream out;
  out << "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n";
  for (int i = 0; i < 250; ++i) {
    out << "def helper_" << i << "(model, batch, scale=1.0):\n"
        << "    x, y = batch\n"
        << "    logits = model(x)\n"
        << "    loss = F.cross_entropy(logits, y)\n"
        << "    total = 0.0\n"
        << "    for k in range(4):\n"
        << "        total += float(k) * scale\n"
        << "    if total > 10:\n"
        << "        total = total / 2\n"
        << "    stats = {'loss': loss.item(), 'total': total}\n"
        << "    values = [v for v in stats.values()]\n"
        << "    names = sorted(stats)\n"
        << "    message = ' '.join(names)\n"
        << "    assert message\n"
        << "    result = sum(values)\n"
        << "    result = result + 0\n"
        << "    return loss, result\n"
        << "\n\n\n";
  }
  out << "def train(model, loader, optimizer):\n"
      << "    losses = []\n"
      << "    for xb, yb in loader:\n"
      << "        optimizer.zero_grad()\n"
      << "        loss = F.cross_entropy(model(xb), yb)\n"
      << "        loss.backward()\n"
      << "        optimizer.step()\n"
      << "        losses.append(loss)\n"
      << "    return losses\n";
  return out.str();
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  std::size_t i = std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size())));
  return v[i];
}

long rss_kib(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

json open_params(const std::string& uri, const std::string& text) {
  return {{"textDocument", {{"uri", uri}, {"languageId", "python"}, {"version", 1}, {"text", text}}}};
}

json nvim_caps() { return preflight::testing::neovim07_capabilities(); }

// One-character edits toggled at `line` (0-based), `character`; latency per edit.
void edit_latency(const std::string& exe, const std::string& label, const std::string& text, int line,
                  int character, int edits) {
  LspProcess lsp({exe, "lsp", "--debounce-ms", "0", "--log-level", "off"});
  lsp.initialize(nvim_caps());
  int lines = static_cast<int>(std::count(text.begin(), text.end(), '\n'));
  std::string uri = "file:///bench/train.py";
  auto t0 = std::chrono::steady_clock::now();
  lsp.notify("textDocument/didOpen", open_params(uri, text));
  lsp.wait_diagnostics(uri, 1, 60000);
  double open_ms = ms_since(t0);
  std::vector<double> samples;
  for (int v = 2; v < edits + 2; ++v) {
    json change = {{"range", {{"start", {{"line", line}, {"character", character}}},
                              {"end", {{"line", line}, {"character", character}}}}},
                   {"text", v % 2 ? " " : ""}};
    if (v % 2 == 0) change["range"]["end"]["character"] = character + 1;  // remove the space again
    auto t = std::chrono::steady_clock::now();
    lsp.notify("textDocument/didChange",
               {{"textDocument", {{"uri", uri}, {"version", v}}}, {"contentChanges", json::array({change})}});
    lsp.wait_diagnostics(uri, v, 60000);
    samples.push_back(ms_since(t));
  }
  std::printf("edit latency, %s (%d lines), %d one-character edits (didChange -> publishDiagnostics, debounce 0):\n",
              label.c_str(), lines, edits);
  std::printf("  open %.2f ms; p50 %.2f ms, p90 %.2f ms, p99 %.2f ms, max %.2f ms\n", open_ms, percentile(samples, 0.5),
              percentile(samples, 0.9), percentile(samples, 0.99), *std::max_element(samples.begin(), samples.end()));
}

void workspace_scan(const std::string& exe, const fs::path& dir) {
  LspProcess lsp({exe, "lsp", "--log-level", "off"});
  lsp.initialize(preflight::testing::vscode_capabilities(),
                 {{"workspaceFolders", {{{"uri", "file://" + fs::absolute(dir).string()}, {"name", "bench"}}}}});
  // Streamed (partialResultToken): the first batch of reports is what the problems panel shows first.
  auto t = std::chrono::steady_clock::now();
  int id = lsp.send_request("workspace/diagnostic", {{"previousResultIds", json::array()}, {"partialResultToken", "bench-partial"}});
  auto first = lsp.wait_notification("$/progress", [](const json& p) { return p["token"] == "bench-partial"; }, 600000);
  double first_ms = ms_since(t);
  lsp.wait_response(id, 600000);
  double streamed_ms = ms_since(t);
  std::printf("workspace scan of %s, streamed: first %zu reports after %.1f ms, done after %.1f ms\n", dir.c_str(),
              first ? (*first)["value"]["items"].size() : 0, first_ms, streamed_ms);
  t = std::chrono::steady_clock::now();
  json r = lsp.request("workspace/diagnostic", {{"previousResultIds", json::array()}}, 600000);
  double ms = ms_since(t);
  std::size_t files = r["result"]["items"].size(), diagnostics = 0;
  for (const json& item : r["result"]["items"]) diagnostics += item.value("items", json::array()).size();
  std::printf("workspace scan of %s, one report: %zu files, %zu diagnostics, %.1f ms to the report\n", dir.c_str(), files,
              diagnostics, ms);
}

void memory_with_open_files(const std::string& exe, const fs::path& files_dir) {
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(files_dir))
    if (e.is_regular_file() && e.path().extension() == ".py") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  std::vector<std::string> texts;
  std::string generated = generated_file();
  for (std::size_t i = 0; texts.size() < 100; ++i) {
    if (i < files.size()) {
      std::ifstream in(files[i]);
      texts.push_back(std::string(std::istreambuf_iterator<char>(in), {}));
    } else {
      texts.push_back(generated);
    }
  }
  std::size_t bytes = 0;
  for (const auto& t : texts) bytes += t.size();
  LspProcess lsp({exe, "lsp", "--log-level", "off"});
  lsp.initialize(nvim_caps());
  long before = rss_kib(lsp.pid());
  for (std::size_t i = 0; i < texts.size(); ++i) lsp.notify("textDocument/didOpen", open_params("file:///bench/f" + std::to_string(i) + ".py", texts[i]));
  // Diagnostics arrive in any order; wait until every file has had its first ones.
  std::set<std::string> published;
  lsp.wait_notification("textDocument/publishDiagnostics", [&](const json& p) {
    published.insert(p["uri"].get<std::string>());
    return published.size() == texts.size();
  }, 120000);
  long after = rss_kib(lsp.pid());
  std::printf("memory: %ld KiB RSS after initialize, %ld KiB with 100 open files (%.1f MB of source)\n", before, after,
              static_cast<double>(bytes) / 1e6);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: preflight_lsp_bench PREFLIGHT_EXE [--edits N] [--workspace DIR] [--files-dir DIR] [--file PY]\n";
    return 2;
  }
  std::setvbuf(stdout, nullptr, _IONBF, 0);  // figures survive a failure further on
  std::string exe = argv[1];
  int edits = 200;
  std::string workspace, files_dir, real_file;
  for (int i = 2; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--edits") edits = std::stoi(argv[i + 1]);
    else if (flag == "--workspace") workspace = argv[i + 1];
    else if (flag == "--files-dir") files_dir = argv[i + 1];
    else if (flag == "--file") real_file = argv[i + 1];
  }
  // Inside helper_120's body of the generated file: before `total = 0.0`.
  edit_latency(exe, "generated file", generated_file(), 4 + 120 * 20 + 4, 4, edits);
  if (!real_file.empty()) {
    std::ifstream in(real_file);
    std::string text(std::istreambuf_iterator<char>(in), {});
    // A trailing space toggled at the end of the middle line (an edit that keeps the file
    // valid Python); an ASCII line, so its byte length is its UTF-16 length.
    std::vector<std::string> rows;
    std::istringstream split(text);
    for (std::string row; std::getline(split, row);) rows.push_back(row);
    std::size_t line = rows.size() / 2;
    while (line + 1 < rows.size() && (rows[line].empty() || std::any_of(rows[line].begin(), rows[line].end(),
                                                                          [](char c) { return c & 0x80; })))
      ++line;
    edit_latency(exe, real_file, text, static_cast<int>(line), static_cast<int>(rows[line].size()), edits);
  }
  if (!workspace.empty()) workspace_scan(exe, workspace);
  memory_with_open_files(exe, files_dir.empty() ? fs::path(PF_SOURCE_DIR) / "tests" / "fixtures" : fs::path(files_dir));
  return 0;
}
