// Soak: 100,000 random incremental edits spread over 50 open documents, sent to the real
// `preflight lsp` binary as fast as it reads them (the suite also runs it under ASan+UBSan).
// At the end every document's published diagnostics must equal a fresh check of the text the
// client holds, the server must still answer and exit cleanly, and its resident memory must
// have stopped growing: the second half of the edits may not add more than a small margin
// to what the first half left (a leak grows with the number of edits; allocator caches and
// the sanitizer's quarantine do not).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "analysis/line_index.h"
#include "analysis/syntax.h"
#include "lsp_client.h"
#include "rules/engine.h"
#include "server/cli/rule_catalogue.h"

namespace preflight {
namespace {

namespace fs = std::filesystem;
using testing::LspProcess;
using json = nlohmann::json;

constexpr int kDocuments = 50;
constexpr int kEdits = 100'000;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The first kDocuments fixtures that are valid text, in sorted order.
std::vector<std::string> fixture_texts() {
  std::vector<fs::path> paths;
  for (const auto& e : fs::recursive_directory_iterator(PF_TEST_FIXTURES))
    if (e.is_regular_file() && e.path().extension() == ".py") paths.push_back(e.path());
  std::sort(paths.begin(), paths.end());
  std::vector<std::string> texts;
  for (const auto& p : paths) {
    std::string text = read_file(p);
    if (!rules::not_text_reason(text) && text.size() < 20'000) texts.push_back(std::move(text));
    if (texts.size() == kDocuments) break;
  }
  return texts;
}

long vm_kib(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind(field + ":", 0) == 0) return std::stol(line.substr(field.size() + 1));
  return -1;
}

const std::vector<std::string> kSnippets = {"x", "é", "😀", "\n", "    ", "(", ")", ":", "#", "'",
                                            "loss.backward()\n", ".item()", "model.eval()\n",
                                            "optimizer.zero_grad()\n", "def f(a):\n    return a\n"};

size_t char_start(const std::string& s, size_t i) {
  while (i > 0 && i < s.size() && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) --i;
  return i;
}

json position(const analysis::LineIndex& lines, size_t offset) {
  auto lc = lines.to_line_column(static_cast<uint32_t>(offset), analysis::ColumnUnit::Utf16Units);
  return {{"line", lc.line}, {"character", lc.column}};
}

// One random edit of `text` as an LSP content change (utf-16 positions); applies it to `text`.
json random_change(std::string& text, std::mt19937& rng) {
  auto pick = [&](size_t n) { return n == 0 ? size_t{0} : std::uniform_int_distribution<size_t>(0, n - 1)(rng); };
  size_t begin = char_start(text, pick(text.size() + 1));
  size_t end = char_start(text, std::min(text.size(), begin + pick(12)));
  if (end < begin) end = begin;
  // Keep documents from drifting to nothing or to megabytes: delete more when large.
  bool shrink = text.size() > 6000;
  std::string replacement = shrink || pick(3) == 0 ? "" : kSnippets[pick(kSnippets.size())];
  // A \r\n pair is one line break: never split it.
  if (begin > 0 && text[begin - 1] == '\r' && begin < text.size() && text[begin] == '\n') --begin;
  if (end > 0 && end < text.size() && text[end - 1] == '\r' && text[end] == '\n') ++end;
  analysis::LineIndex lines(text);
  json change = {{"range", {{"start", position(lines, begin)}, {"end", position(lines, end)}}}, {"text", replacement}};
  text.replace(begin, end - begin, replacement);
  return change;
}

std::string uri_of(int i) { return "file:///tmp/preflight-soak/doc" + std::to_string(i) + ".py"; }

// Codes and start lines, as published and as a fresh check reports them.
std::vector<std::string> summary_of(const json& diagnostics) {
  std::vector<std::string> out;
  for (const json& d : diagnostics)
    out.push_back(d.value("code", "") + "@" + std::to_string(d["range"]["start"]["line"].get<int>()));
  return out;
}

// What the server publishes for a text: its findings, then a hint per unused suppression
// (server/lsp/convert.cpp), in that order.
std::vector<std::string> fresh_summary(const std::string& text) {
  std::vector<std::string> out;
  analysis::LineIndex lines(text);
  auto line_of = [&](uint32_t byte) {
    return std::to_string(lines.to_line_column(byte, analysis::ColumnUnit::Utf16Units).line);
  };
  rules::CheckResult result = rules::check_source(text, {});
  for (const auto& f : result.findings) out.push_back(f.code + "@" + line_of(f.range.begin));
  for (const auto& u : result.unused_suppressions)
    out.push_back(std::string(server::kUnusedSuppressionCode) + "@" + line_of(u.comment.begin));
  return out;
}

TEST(LspSoak, HundredThousandEditsOverFiftyDocumentsKeepResultsExactAndMemoryFlat) {
  std::vector<std::string> texts = fixture_texts();
  ASSERT_EQ(texts.size(), static_cast<size_t>(kDocuments));
  LspProcess lsp({PF_PREFLIGHT_EXE, "lsp", "--debounce-ms", "2", "--log-level", "warn"});
  lsp.initialize(testing::neovim07_capabilities());
  auto started = std::chrono::steady_clock::now();
  auto seconds = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(); };
  std::vector<int> versions(kDocuments, 1);
  for (int i = 0; i < kDocuments; ++i)
    lsp.notify("textDocument/didOpen",
               {{"textDocument", {{"uri", uri_of(i)}, {"languageId", "python"}, {"version", 1}, {"text", texts[i]}}}});
  std::mt19937 rng(20261203);
  // The last publishDiagnostics seen for each document, while sending too: a document's last
  // version may be published before the other documents' edits are all sent.
  std::map<std::string, json> published;
  auto note_published = [&](const json& message) {
    if (message.value("method", "") == "textDocument/publishDiagnostics") published[message["params"]["uri"]] = message["params"];
  };
  // Waits until every document's last version is published; checks each against a fresh check.
  auto settle = [&](const char* when) {
    std::map<std::string, json> latest;
    for (int i = 0; i < kDocuments; ++i)
      if (auto it = published.find(uri_of(i)); it != published.end() && it->second.value("version", -1) == versions[i])
        latest[uri_of(i)] = it->second["diagnostics"];
    if (latest.size() < static_cast<size_t>(kDocuments)) lsp.wait_notification("textDocument/publishDiagnostics", [&](const json& p) {
      for (int i = 0; i < kDocuments; ++i)
        if (p["uri"] == uri_of(i) && p.value("version", -1) == versions[i]) latest[uri_of(i)] = p["diagnostics"];
      return latest.size() == static_cast<size_t>(kDocuments);
    }, 300'000);
    for (int i = 0; i < kDocuments; ++i) {
      ASSERT_TRUE(latest.count(uri_of(i))) << when << ": no diagnostics for the last version of document " << i;
      EXPECT_EQ(summary_of(latest[uri_of(i)]), fresh_summary(texts[i])) << when << ", document " << i << ":\n" << texts[i];
    }
    std::cout << "soak: " << when << ": every last version published after " << seconds() << " s, VmRSS "
              << vm_kib(lsp.pid(), "VmRSS") << " KiB\n";
  };
  // While a text does not parse, the server keeps the findings of the last text it analysed
  // that parsed (rules/incremental.h), and which version that was depends on timing. So
  // before each comparison a document that does not parse is set back to its last text that
  // parsed (one full-text change), and every document's result must be a fresh check's.
  std::vector<std::string> parsed_texts = texts;
  auto parses = [](const std::string& text) {
    // The server's own test (tree-sitter's errors and the misindentation it recovers from).
    return !analysis::has_syntax_error(analysis::SyntaxTree::parse(analysis::parse_view(text)).root());
  };
  auto restore_broken = [&] {
    int restored = 0;
    for (int i = 0; i < kDocuments; ++i) {
      if (parses(texts[i])) continue;
      texts[i] = parsed_texts[i];
      lsp.notify("textDocument/didChange", {{"textDocument", {{"uri", uri_of(i)}, {"version", ++versions[i]}}},
                                            {"contentChanges", json::array({{{"text", texts[i]}}})}});
      ++restored;
    }
    std::cout << "soak: " << restored << " documents that did not parse set back to their last text that did\n";
  };
  auto send_edits = [&](int count) {
    for (int edit = 0; edit < count; ++edit) {
      int doc = std::uniform_int_distribution<int>(0, kDocuments - 1)(rng);
      json change = random_change(texts[doc], rng);
      if (parses(texts[doc])) parsed_texts[doc] = texts[doc];
      lsp.notify("textDocument/didChange", {{"textDocument", {{"uri", uri_of(doc)}, {"version", ++versions[doc]}}},
                                            {"contentChanges", json::array({std::move(change)})}});
      if (edit % 256 == 0)  // keep the server's output pipe from filling up
        for (const json& message : lsp.drain(1)) note_published(message);
    }
  };
  send_edits(kEdits / 2);
  restore_broken();
  settle("after half the edits");
  if (::testing::Test::HasFatalFailure()) return;
  long rss_half = vm_kib(lsp.pid(), "VmRSS");
  send_edits(kEdits - kEdits / 2);
  restore_broken();
  settle("after every edit");
  if (::testing::Test::HasFatalFailure()) return;
  long rss_end = vm_kib(lsp.pid(), "VmRSS");
  long peak = vm_kib(lsp.pid(), "VmHWM");
  std::cout << "soak: " << kEdits << " edits over " << kDocuments << " documents; RSS after half " << rss_half
            << " KiB, at the end " << rss_end << " KiB, peak " << peak << " KiB\n";
  EXPECT_GT(rss_half, 0);
  EXPECT_LT(rss_end - rss_half, std::max<long>(32 * 1024, rss_half / 5)) << "resident memory kept growing";
  EXPECT_EQ(lsp.request("shutdown", nullptr)["result"], nullptr);
  lsp.notify("exit", nullptr);
  EXPECT_EQ(lsp.wait_exit(10'000), 0);
}

}  // namespace
}  // namespace preflight
