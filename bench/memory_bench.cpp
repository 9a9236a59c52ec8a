// preflight_memory_bench: the language server's memory per open document (issue 9, program
// 3). A report, not a test.
//
// Opens real Python files in `preflight lsp` (debounce 0) in two steps, 100 then 1,000 in all,
// and reads the server's VmRSS from /proc/PID/status before the first didOpen and once every
// open document has had its diagnostics published. Bytes per open document = ΔRSS / Δdocs,
// bytes per byte of open text = ΔRSS / Δtext bytes: if memory is linear in open text, the
// second figure stays put between the steps. The files are picked deterministically: every
// *.py under the given directories, sorted, spread evenly; the first step is every tenth of
// them, so it samples the same repositories as the second.
// RSS includes what the allocator keeps but is not using, so the same documents are also held
// in process (rules::DocumentAnalysis after one check(), as the server's document keeps it)
// and the live heap is read from mallinfo2: the bytes a document really holds, JSON and
// snapshot excluded.
// Usage: preflight_memory_bench PREFLIGHT_EXE [--docs N] [--first M] [DIR...]
//        (defaults: 1000, 100, /work/corpus)
#include <malloc.h>

#include <chrono>
#include <memory>
#include <cstdio>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_support.h"
#include "lsp_client.h"
#include "rules/incremental.h"

namespace {

using json = nlohmann::json;
using preflight::testing::LspProcess;
namespace pb = preflight::bench;
namespace fs = std::filesystem;

struct Options {
  std::string exe;
  size_t docs = 1000, first = 100;
  std::vector<fs::path> roots;
};

struct Document {
  std::string uri, text;
};

struct Step {
  size_t docs = 0, text_bytes = 0;
  long rss_kib = 0;
  double seconds = 0;  // from the first didOpen of the step to the last publish
};

// The documents in opening order: every tenth pick first (the first step), then the rest.
std::vector<Document> load_documents(const Options& o) {
  std::vector<fs::path> picked = pb::spread_pick(pb::python_files(o.roots), o.docs);
  if (picked.size() < o.docs) throw std::runtime_error("no .py files under the given directories");
  std::vector<size_t> order;
  size_t every = o.docs / o.first;
  for (size_t i = 0; i < picked.size(); ++i)
    if (i % every == 0 && order.size() < o.first) order.push_back(i);
  std::set<size_t> in_first(order.begin(), order.end());
  for (size_t i = 0; i < picked.size(); ++i)
    if (!in_first.count(i)) order.push_back(i);
  std::vector<Document> docs;
  for (size_t k = 0; k < order.size(); ++k)
    docs.push_back({"file:///bench/doc_" + std::to_string(k) + ".py", pb::read_file(picked[order[k]])});
  return docs;
}

// Opens docs[from, to) and waits until each has had diagnostics (they arrive in any order).
void open_and_wait(LspProcess& lsp, const std::vector<Document>& docs, size_t from, size_t to) {
  for (size_t i = from; i < to; ++i)
    lsp.notify("textDocument/didOpen",
               {{"textDocument", {{"uri", docs[i].uri}, {"languageId", "python"}, {"version", 1}, {"text", docs[i].text}}}});
  std::set<std::string> waiting;
  for (size_t i = from; i < to; ++i) waiting.insert(docs[i].uri);
  auto got = lsp.wait_notification("textDocument/publishDiagnostics", [&](const json& p) {
    waiting.erase(p["uri"].get<std::string>());
    return waiting.empty();
  }, 600000);
  if (!got) throw std::runtime_error(std::to_string(waiting.size()) + " documents got no diagnostics");
}

// RSS once the pool's threads have gone idle (their last analysis's temporaries freed).
long settled_rss_kib(pid_t pid) {
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  return pb::proc_status_kib(pid, "VmRSS");
}

void print_delta(const char* label, const Step& from, const Step& to) {
  double bytes = static_cast<double>(to.rss_kib - from.rss_kib) * 1024.0;
  double docs = static_cast<double>(to.docs - from.docs), text = static_cast<double>(to.text_bytes - from.text_bytes);
  std::printf("  %-18s Δdocs %5.0f  Δtext %9s  ΔRSS %9s  -> %7.1f kB per document, %.2f bytes per byte of text\n",
              label, docs, pb::format_bytes(text).c_str(), pb::format_bytes(bytes).c_str(), bytes / docs / 1e3,
              bytes / text);
}

// Live heap bytes: in use in the arenas plus mmap'd blocks.
double live_heap_bytes() {
  struct mallinfo2 m = ::mallinfo2();
  return static_cast<double>(m.uordblks + m.hblkhd);
}

// Live heap held per document by DocumentAnalysis objects that have each been checked once.
void in_process(const std::vector<Document>& docs) {
  std::vector<std::unique_ptr<preflight::rules::DocumentAnalysis>> held;
  size_t text = 0;
  double before = live_heap_bytes();
  for (const Document& d : docs) {
    held.push_back(std::make_unique<preflight::rules::DocumentAnalysis>(d.text));
    held.back()->check({});
    text += d.text.size();
  }
  double bytes = live_heap_bytes() - before;
  std::printf("in process: %zu DocumentAnalysis objects, each checked once: live heap %s (mallinfo2) -> %.1f kB per "
              "document, %.2f bytes per byte of text\n",
              held.size(), pb::format_bytes(bytes).c_str(), bytes / static_cast<double>(held.size()) / 1e3,
              bytes / static_cast<double>(text));
}

Options parse_args(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]).starts_with("-"))
    throw std::invalid_argument("usage: preflight_memory_bench PREFLIGHT_EXE [--docs N] [--first M] [DIR...]");
  Options o;
  o.exe = argv[1];
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i];
    if ((arg == "--docs" || arg == "--first") && i + 1 < argc)
      (arg == "--docs" ? o.docs : o.first) = std::stoul(argv[++i]);
    else if (arg.starts_with("-"))
      throw std::invalid_argument("unknown option " + arg);
    else
      o.roots.emplace_back(arg);
  }
  if (o.roots.empty()) o.roots.emplace_back("/work/corpus");
  if (o.first == 0 || o.first > o.docs) throw std::invalid_argument("want 0 < --first <= --docs");
  return o;
}

int run(int argc, char** argv) {
  Options o = parse_args(argc, argv);
  pb::print_header("preflight_memory_bench (memory per open document)", argc, argv);
  std::vector<Document> docs = load_documents(o);

  LspProcess lsp({o.exe, "lsp", "--debounce-ms", "0", "--log-level", "off"});
  lsp.initialize(preflight::testing::neovim07_capabilities());
  std::vector<Step> steps{{0, 0, settled_rss_kib(lsp.pid()), 0}};
  for (size_t target : {o.first, o.docs}) {
    Step step = steps.back();
    auto t = pb::Clock::now();
    open_and_wait(lsp, docs, step.docs, target);
    step.seconds = pb::ms_since(t) / 1e3;
    for (size_t i = step.docs; i < target; ++i) step.text_bytes += docs[i].text.size();
    step.docs = target;
    step.rss_kib = settled_rss_kib(lsp.pid());
    steps.push_back(step);
  }
  long peak = pb::proc_status_kib(lsp.pid(), "VmHWM");

  std::printf("documents: %zu real files under", o.docs);
  for (const fs::path& r : o.roots) std::printf(" %s", r.c_str());
  std::printf(" (sorted, spread evenly; the first step opens every %zuth of them)\n\n", o.docs / o.first);
  std::printf("server VmRSS (500 ms after the last publishDiagnostics of each step):\n");
  for (const Step& s : steps)
    std::printf("  %5zu open documents, %9s of text: %8.1f MB RSS%s\n", s.docs,
                pb::format_bytes(static_cast<double>(s.text_bytes)).c_str(), static_cast<double>(s.rss_kib) * 1024 / 1e6,
                s.docs == 0 ? " (after initialize)" : "");
  for (size_t i = 1; i < steps.size(); ++i)
    std::printf("  opening %zu -> %zu took %.2f s (didOpen to the last publishDiagnostics)\n", steps[i - 1].docs,
                steps[i].docs, steps[i].seconds);
  std::printf("  peak (VmHWM): %.1f MB\n\n", static_cast<double>(peak) * 1024 / 1e6);
  std::printf("per open document:\n");
  print_delta("0 -> first step", steps[0], steps[1]);
  print_delta("first -> second", steps[1], steps[2]);
  print_delta("0 -> second step", steps[0], steps[2]);
  std::printf("\n");
  in_process(docs);
  std::printf("\nload average at the end: %s\n", pb::load_average().c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IONBF, 0);
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "preflight_memory_bench: %s\n", e.what());
    return 2;
  }
}
