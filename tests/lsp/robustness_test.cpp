// Bad input to the real `preflight lsp` binary over pipes (issue: reliability). Each case has
// one clear outcome — an answer, a diagnostic that says why, or a logged and skipped change —
// and after each the server must still answer a request.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <chrono>
#include <functional>
#include <limits>
#include <string>

#include "lsp_client.h"
#include "rules/engine.h"
#include "server/cli/file_io.h"
#include "server/lsp/uri.h"

namespace preflight {
namespace {

namespace fs = std::filesystem;
using testing::LspProcess;
using json = nlohmann::json;

const std::string kUri = "file:///tmp/preflight-robustness/train.py";

// A retained graph (TG001) on the last line.
const std::string kBuggy =
    "import torch\n"
    "import torch.nn.functional as F\n"
    "\n"
    "def train(model, loader, optimizer):\n"
    "    losses = []\n"
    "    for xb, yb in loader:\n"
    "        optimizer.zero_grad()\n"
    "        loss = F.cross_entropy(model(xb), yb)\n"
    "        loss.backward()\n"
    "        optimizer.step()\n"
    "        losses.append(loss)\n"
    "    return losses\n";

LspProcess start(std::vector<std::string> extra = {}) {
  std::vector<std::string> args{PF_PREFLIGHT_EXE, "lsp", "--debounce-ms", "5", "--log-level", "debug"};
  args.insert(args.end(), extra.begin(), extra.end());
  return LspProcess(std::move(args));
}

json open_params(const std::string& uri, const std::string& text, int version = 1) {
  return {{"textDocument", {{"uri", uri}, {"languageId", "python"}, {"version", version}, {"text", text}}}};
}

json change_params(const std::string& uri, int version, json changes) {
  return {{"textDocument", {{"uri", uri}, {"version", version}}}, {"contentChanges", std::move(changes)}};
}

json range_change(int line0, int char0, int line1, int char1, const std::string& text) {
  return {{"range", {{"start", {{"line", line0}, {"character", char0}}}, {"end", {{"line", line1}, {"character", char1}}}}},
          {"text", text}};
}

std::vector<std::string> codes_of(const json& diagnostics) {
  std::vector<std::string> out;
  for (const json& d : diagnostics) out.push_back(d.value("code", ""));
  return out;
}

// The codes a fresh check of `text` reports, in order: what the server must publish.
std::vector<std::string> fresh_codes(const std::string& text) {
  std::vector<std::string> out;
  for (const auto& f : rules::check_source(text, {}).findings) out.push_back(f.code);
  return out;
}

bool any_message_contains(const json& diagnostics, const std::string& needle) {
  for (const json& d : diagnostics)
    if (d.value("message", "").find(needle) != std::string::npos) return true;
  return false;
}

// The server is alive: a request on another document is answered.
void expect_answers(LspProcess& lsp) {
  json r = lsp.request("textDocument/hover",
                       {{"textDocument", {{"uri", "file:///not/open.py"}}}, {"position", {{"line", 0}, {"character", 0}}}});
  EXPECT_TRUE(r.contains("result")) << r.dump();
}

std::string dense_training_file(int functions) {
  std::string text = "import torch\n";
  for (int i = 0; i < functions; ++i)
    text += "def fit_" + std::to_string(i) + "(net, loader, optimizer):\n    for xb, yb in loader:\n"
            "        net(xb).sum().backward()\n        optimizer.step()\n";
  return text;
}

// --- size and shape ------------------------------------------------------------------------

TEST(LspBadInput, ATenMegabyteDocumentIsReportedAndDoesNotBlockOtherDocuments) {
  auto lsp = start({"--analysis-timeout-ms", "1000"});
  lsp.initialize(testing::neovim07_capabilities());
  // As large as the size cap allows: analysed, and over the time budget.
  std::string big = dense_training_file(1);
  const std::string chunk = dense_training_file(200).substr(13);
  while (big.size() + chunk.size() <= server::kMaxSourceBytes) big += chunk;
  lsp.notify("textDocument/didOpen", open_params(kUri, big));
  lsp.notify("textDocument/didOpen", open_params(kUri + ".small.py", kBuggy));
  // The small document's diagnostics do not wait for the big one's analysis.
  EXPECT_EQ(codes_of(lsp.wait_diagnostics(kUri + ".small.py", 1, 60000)), fresh_codes(kBuggy));
  json d = lsp.wait_diagnostics(kUri, 1, 120000);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_TRUE(any_message_contains(d, "too complex to analyze: the analysis ran past its time budget of 1 s")) << d.dump();
  expect_answers(lsp);
}

// The server's cap is the CLI's: a larger document is neither parsed nor analysed (a 20 MB
// didOpen got no answer in 300 s), one diagnostic says why, and an edit that brings it back
// under the cap analyses it again.
TEST(LspBadInput, ADocumentOverTheSizeCapIsTooLargeAndNotAnalysed) {
  auto lsp = start();
  lsp.initialize(testing::neovim07_capabilities());
  const std::string padding = "#" + std::string(server::kMaxSourceBytes - kBuggy.size(), 'x');  // one past the cap
  const std::string big = kBuggy + padding;
  const std::string too_large = "preflight did not analyse this file: file too large to analyze (" +
                                std::to_string(server::kMaxSourceBytes + 1) + " bytes)";
  lsp.notify("textDocument/didOpen", open_params(kUri, big));
  json d = lsp.wait_diagnostics(kUri, 1, 60000);
  ASSERT_EQ(d.size(), 1u) << d.dump().substr(0, 2000);  // no TG001: kBuggy was not analysed
  EXPECT_EQ(d[0]["message"], too_large);
  EXPECT_EQ(d[0]["severity"], 3);
  // Removing the padding line by a range edit: analysed again.
  const int last_line = 12;  // kBuggy has 12 lines; the padding is the 13th
  lsp.notify("textDocument/didChange",
             change_params(kUri, 2, json::array({range_change(last_line, 0, last_line, int(padding.size()), "")})));
  EXPECT_EQ(codes_of(lsp.wait_diagnostics(kUri, 2, 60000)), fresh_codes(kBuggy));
  // Growing past the cap by a range edit, then by a whole-text change: too large each time.
  lsp.notify("textDocument/didChange",
             change_params(kUri, 3, json::array({range_change(last_line, 0, last_line, 0, padding)})));
  EXPECT_EQ(lsp.wait_diagnostics(kUri, 3, 60000), json::array({d[0]}));
  lsp.notify("textDocument/didChange", change_params(kUri, 4, json::array({{{"text", kBuggy}}})));
  EXPECT_EQ(codes_of(lsp.wait_diagnostics(kUri, 4, 60000)), fresh_codes(kBuggy));
  lsp.notify("textDocument/didChange", change_params(kUri, 5, json::array({{{"text", big}}})));
  EXPECT_EQ(lsp.wait_diagnostics(kUri, 5, 60000), json::array({d[0]}));
  expect_answers(lsp);
}

// Pushed diagnostics: a file closed and reopened while its strand is still busy must end
// with the reopened file's diagnostics, not the empty publish of the close (which the busy
// strand of the closed document sends last). The busy work is one didChange of many range
// edits to a large text (each maps positions over the whole text; no cancellation point).
TEST(LspStale, CloseAndReopenDuringAnAnalysisEndsWithTheNewDiagnostics) {
  auto lsp = start({"--analysis-timeout-ms", "100"});
  lsp.initialize(testing::neovim07_capabilities());
  std::string big = dense_training_file(1);
  const std::string chunk = dense_training_file(200).substr(13);
  while (big.size() + chunk.size() <= 8u * 1024 * 1024) big += chunk;
  json edits = json::array();
  for (int i = 0; i < 300; ++i) edits.push_back(range_change(1, 0, 1, 0, "#\n"));
  auto open_and_keep_busy = [&](const std::string& uri) {
    lsp.notify("textDocument/didOpen", open_params(uri, big));
    lsp.notify("textDocument/didChange", change_params(uri, 2, edits));
  };
  open_and_keep_busy(kUri);
  lsp.notify("textDocument/didClose", {{"textDocument", {{"uri", kUri}}}});
  lsp.notify("textDocument/didOpen", open_params(kUri, kBuggy, 7));
  // The same work on a strand started later: when it is done, so is the closed document's.
  const std::string witness = kUri + ".witness.py";
  open_and_keep_busy(witness);
  std::vector<json> published;  // every publish for kUri, in arrival order
  bool witness_done = false;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  for (int settle = 0; settle < 5 && std::chrono::steady_clock::now() < deadline;) {
    for (const json& m : lsp.drain(200)) {
      if (m.value("method", "") != "textDocument/publishDiagnostics") continue;
      if (m["params"]["uri"] == kUri) published.push_back(m["params"]);
      if (m["params"]["uri"] == witness && m["params"].value("version", -1) == 2) witness_done = true;
    }
    if (witness_done) ++settle;  // then another second for the closed document's strand
  }
  ASSERT_TRUE(witness_done);
  // The close's empty publish may come first; before the fix it came last.
  ASSERT_FALSE(published.empty());
  EXPECT_EQ(published.back().value("version", -1), 7) << published.back().dump();
  EXPECT_EQ(codes_of(published.back()["diagnostics"]), fresh_codes(kBuggy)) << published.back().dump();
  // And the reopened document is live: an edit still publishes.
  lsp.notify("textDocument/didChange", change_params(kUri, 8, json::array({{{"text", "import torch\n"}}})));
  EXPECT_EQ(lsp.wait_diagnostics(kUri, 8, 30000), json::array());
  expect_answers(lsp);
}

TEST(LspBadInput, AFourHundredThousandCharacterLineIsAnalysedAndEditable) {
  auto lsp = start();
  lsp.initialize(testing::neovim07_capabilities());
  std::string line = "x = [" + std::string(399'990, '1') + "]\n";
  std::string text = line + kBuggy;
  lsp.notify("textDocument/didOpen", open_params(kUri, text));
  EXPECT_EQ(codes_of(lsp.wait_diagnostics(kUri, 1, 30000)), fresh_codes(text));
  lsp.notify("textDocument/didChange", change_params(kUri, 2, json::array({range_change(0, 399'000, 0, 399'001, "2")})));
  text.replace(399'000, 1, "2");
  EXPECT_EQ(codes_of(lsp.wait_diagnostics(kUri, 2, 30000)), fresh_codes(text));
  expect_answers(lsp);
}

TEST(LspBadInput, FiveThousandLevelsOfNestingAreRefusedWithAMessage) {
  auto lsp = start();
  lsp.initialize(testing::eglot_capabilities());
  std::string text = "x = " + std::string(5000, '(') + "1" + std::string(5000, ')') + "\n";
  lsp.notify("textDocument/didOpen", open_params(kUri, text));
  json d = lsp.wait_diagnostics(kUri, 1);
  EXPECT_TRUE(any_message_contains(d, "too deeply nested to analyze")) << d.dump();
  expect_answers(lsp);
}

TEST(LspBadInput, FilesThatAreNotPythonGiveNoFindings) {
  auto lsp = start();
  lsp.initialize(testing::neovim07_capabilities());
  const std::vector<std::string> not_python = {
      "#include <stdio.h>\nint main(void) { for (;;) { printf(\"%d\\n\", 1); } }\n",
      "<html><body><p>loss.backward()</p></body></html>\n",
      "{\"optimizer\": \"adam\", \"lr\": 0.001, \"nested\": [[[[1]]]]}\n",
      std::string(100'000, ')'),
      "\t\t\t\n\r\r\r\n  \f\v\n"};
  for (std::size_t i = 0; i < not_python.size(); ++i) {
    std::string uri = kUri + std::to_string(i) + ".py";
    lsp.notify("textDocument/didOpen", open_params(uri, not_python[i]));
    EXPECT_EQ(codes_of(lsp.wait_diagnostics(uri, 1)), fresh_codes(not_python[i])) << i;
  }
  expect_answers(lsp);
}

TEST(LspBudget, ADocumentOverTheTimeBudgetIsTooComplexUntilItShrinks) {
  // Seconds of analysis in any build against 200 ms; the shrunk text takes milliseconds.
  auto lsp = start({"--analysis-timeout-ms", "200"});
  lsp.initialize(testing::neovim07_capabilities());
  lsp.notify("textDocument/didOpen", open_params(kUri, dense_training_file(20000)));
  json d = lsp.wait_diagnostics(kUri, 1, 60000);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_TRUE(any_message_contains(d, "ran past its time budget of 200 ms")) << d.dump();
  lsp.notify("textDocument/didChange", change_params(kUri, 2, json::array({{{"text", "import torch\n"}}})));
  EXPECT_EQ(lsp.wait_diagnostics(kUri, 2, 30000), json::array());
}

// The parse of an opened document runs inside the budget: a million nested brackets take
// seconds to parse. Before, the parse ran outside it and the document was reported "too
// deeply nested" only after the whole parse.
TEST(LspBudget, TheParseOfAnOpenedDocumentRunsInsideTheBudget) {
  auto lsp = start({"--analysis-timeout-ms", "200"});
  lsp.initialize(testing::neovim07_capabilities());
  const std::string nested = "x = " + std::string(1'000'000, '(') + "1" + std::string(1'000'000, ')') + "\n";
  lsp.notify("textDocument/didOpen", open_params(kUri, nested));
  json d = lsp.wait_diagnostics(kUri, 1, 60000);
  ASSERT_EQ(d.size(), 1u) << d.dump();
  EXPECT_TRUE(any_message_contains(d, "ran past its time budget of 200 ms")) << d.dump();
  lsp.notify("textDocument/didChange", change_params(kUri, 2, json::array({{{"text", kBuggy}}})));
  EXPECT_EQ(codes_of(lsp.wait_diagnostics(kUri, 2, 30000)), fresh_codes(kBuggy));
  expect_answers(lsp);
}

// --- edits ---------------------------------------------------------------------------------

TEST(LspBadInput, PositionsPastTheEndAreClampedAsTheSpecSays) {
  auto lsp = start();
  lsp.initialize(testing::neovim07_capabilities());
  lsp.notify("textDocument/didOpen", open_params(kUri, "import torch\n"));
  EXPECT_EQ(lsp.wait_diagnostics(kUri, 1), json::array());
  // A character past the line's end means the line's end; a line past the last means the end.
  std::string rest = kBuggy.substr(std::string("import torch\n").size());
  lsp.notify("textDocument/didChange",
             change_params(kUri, 2, json::array({range_change(0, 500, 0, 900, ""), range_change(70, 3, 99, 0, rest)})));
  EXPECT_EQ(codes_of(lsp.wait_diagnostics(kUri, 2)), fresh_codes(kBuggy));
}

TEST(LspBadInput, AnImpossibleRangeIsDroppedAndTheUserIsTold) {
  auto lsp = start();
  lsp.initialize(testing::neovim07_capabilities());
  lsp.notify("textDocument/didOpen", open_params(kUri, kBuggy));
  lsp.wait_diagnostics(kUri, 1);
  lsp.notify("textDocument/didChange",
             change_params(kUri, 2,
                           json::array({range_change(-1, 0, 0, 0, "x"), range_change(3, 0, 1, 0, "y"),
                                        {{"range", "not a range"}, {"text", "z"}}, {{"text", 42}}})));
  auto told = lsp.wait_notification("window/logMessage", [](const json& p) {
    return p.value("message", "").find("invalid range and was dropped") != std::string::npos;
  });
  EXPECT_TRUE(told.has_value());
  // Nothing was applied: the diagnostics are those of the unchanged text.
  EXPECT_EQ(codes_of(lsp.wait_diagnostics(kUri, 2)), fresh_codes(kBuggy));
}

TEST(LspBadInput, ChangesForAnUnopenedDocumentAreIgnored) {
  auto lsp = start();
  lsp.initialize(testing::neovim07_capabilities());
  lsp.notify("textDocument/didChange", change_params(kUri, 2, json::array({range_change(0, 0, 0, 0, "x")})));
  lsp.notify("textDocument/didClose", {{"textDocument", {{"uri", kUri}}}});
  lsp.notify("textDocument/didSave", {{"textDocument", {{"uri", kUri}}}});
  expect_answers(lsp);
  for (const json& m : lsp.drain(100))
    EXPECT_NE(m.value("method", ""), "textDocument/publishDiagnostics") << m.dump();
  lsp.notify("textDocument/didOpen", open_params(kUri, kBuggy));
  EXPECT_EQ(codes_of(lsp.wait_diagnostics(kUri, 1)), fresh_codes(kBuggy));
}

TEST(LspBadInput, OutOfOrderVersionsStillApplyEveryChangeInArrivalOrder) {
  auto lsp = start();
  lsp.initialize(testing::neovim07_capabilities());
  lsp.notify("textDocument/didOpen", open_params(kUri, kBuggy, 10));
  lsp.wait_diagnostics(kUri, 10);
  // Versions going backwards: the changes are still applied in the order they came.
  lsp.notify("textDocument/didChange", change_params(kUri, 4, json::array({range_change(10, 26, 10, 26, ".detach()")})));
  lsp.notify("textDocument/didChange", change_params(kUri, 3, json::array({range_change(10, 26, 10, 35, "")})));
  EXPECT_EQ(codes_of(lsp.wait_diagnostics(kUri, 3)), fresh_codes(kBuggy));
  expect_answers(lsp);
}

// --- nesting -------------------------------------------------------------------------------

std::string framed(const std::string& body) { return "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body; }

// Params nested `depth` levels deep: objects ({"a":{"a":...}}) or arrays ([[...]]).
std::string deep_request(int id, std::size_t depth, bool objects) {
  std::string open = objects ? "{\"a\":" : "[", close = objects ? "}" : "]";
  std::string params;
  params.reserve(depth * (open.size() + close.size()) + 8);
  for (std::size_t i = 0; i < depth; ++i) params += open;
  params += "1";
  for (std::size_t i = 0; i < depth; ++i) params += close;
  return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":"textDocument/hover","params":{"x":)" + params + "}}";
}

TEST(LspBadInput, ParamsNestedHundredsOfThousandsDeepAreRefusedBeforeAndAfterInitialize) {
  auto lsp = start();
  // Before initialize: nothing recursive may run on such a body.
  lsp.send_raw(framed(deep_request(101, 60'000, true)));
  lsp.send_raw(framed(deep_request(102, 300'000, false)));
  for (int id : {101, 102}) {
    json r = lsp.wait_response(id, 30000);
    EXPECT_EQ(r["error"]["code"], -32600) << r.dump().substr(0, 300);
  }
  lsp.initialize(testing::neovim07_capabilities());
  lsp.send_raw(framed(deep_request(103, 100'000, true)));
  EXPECT_EQ(lsp.wait_response(103, 30000)["error"]["code"], -32600);
  // A notification has no id to answer under: the refusal goes out with id null.
  std::string note = deep_request(0, 300'000, false);
  note.replace(note.find(R"("id":0,)"), 7, "");
  lsp.send_raw(framed(note));
  EXPECT_EQ(lsp.wait_response(nullptr, 30000)["error"]["code"], -32600);
  expect_answers(lsp);
}

// --- framing -------------------------------------------------------------------------------

// After each kind of bad header, the stream is back in step: 20 valid requests that follow
// are all answered.
TEST(LspFraming, TwentyRequestsAfterEachBadHeaderAreAllAnswered) {
  auto lsp = start();
  lsp.initialize(testing::eglot_capabilities());
  const json hover = {{"textDocument", {{"uri", "file:///not/open.py"}}}, {"position", {{"line", 0}, {"character", 0}}}};
  // Each bad header carries a request of its own, id "bad-<i>".
  const std::vector<std::pair<std::string, std::function<std::string(const std::string&)>>> bad = {
      {"no Content-Length", [](const std::string& b) { return "X-Nothing: 1\r\n\r\n" + b; }},
      {"a negative length", [](const std::string& b) { return "Content-Length: -5\r\n\r\n" + b; }},
      {"a length that is not a number", [](const std::string& b) { return "Content-Length: abc\r\n\r\n" + b; }},
      {"a length no integer holds",
       [](const std::string& b) { return "Content-Length: 99999999999999999999999\r\n\r\n" + b; }},
      {"a length of 2^63", [](const std::string& b) { return "Content-Length: 9223372036854775808\r\n\r\n" + b; }},
      {"a length just over the cap", [](const std::string& b) { return "Content-Length: 268435457\r\n\r\n" + b; }},
      {"LF-only line ends", [](const std::string& b) { return "Content-Length: " + std::to_string(b.size()) + "\n\n" + b; }},
      {"a line that is no header", [](const std::string&) { return std::string("hello there\r\n"); }},
      {"a body without a header", [](const std::string& b) { return b; }},
      {"a length too short", [](const std::string& b) { return "Content-Length: 10\r\n\r\n" + b; }},
      {"a header with no blank line",
       [](const std::string& b) { return "Content-Length: " + std::to_string(b.size()) + "\r\n" + b; }},
  };
  for (std::size_t k = 0; k < bad.size(); ++k) {
    const auto& [what, bytes] = bad[k];
    lsp.send_raw(bytes(protocol::dump(protocol::make_request("bad-" + std::to_string(k), "textDocument/hover", hover))));
    std::vector<int> ids;
    for (int i = 0; i < 20; ++i) ids.push_back(lsp.send_request("textDocument/hover", hover));
    int answered = 0, timeout_ms = 10000;
    for (int id : ids) {
      try {
        json r = lsp.wait_response(id, timeout_ms);
        if (r.contains("result")) ++answered;
      } catch (const std::exception&) {
        timeout_ms = 100;  // out of step: the rest will not come either
      }
    }
    EXPECT_EQ(answered, 20) << "after " << what;
    if (what == "LF-only line ends") {  // unambiguous: that request was read and answered too
      EXPECT_TRUE(lsp.wait_response("bad-" + std::to_string(k), 1000).contains("result"));
    }
  }
  EXPECT_FALSE(lsp.wait_exit(0).has_value());
}

// --- text ----------------------------------------------------------------------------------

// JSON.stringify writes a lone surrogate of a JavaScript string as an escape ("\ud800"):
// the document opens with U+FFFD in its place and gets its diagnostics.
TEST(LspBadInput, ALoneSurrogateEscapeOpensTheDocumentWithAReplacementCharacter) {
  auto lsp = start();
  lsp.initialize(testing::neovim07_capabilities());
  const std::string marker = "@LONE@";
  std::string body = protocol::dump(protocol::make_notification(
      "textDocument/didOpen", open_params(kUri, kBuggy + "# high " + marker + "1 low " + marker + "2 pair " + marker + "3\n")));
  body.replace(body.find(marker + "1"), marker.size() + 1, "\\ud800");
  body.replace(body.find(marker + "2"), marker.size() + 1, "\\uDC00x");
  body.replace(body.find(marker + "3"), marker.size() + 1, "\\ud83d\\ude00");
  lsp.send_raw("Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body);
  std::string expected = kBuggy + "# high \xEF\xBF\xBD low \xEF\xBF\xBDx pair \xF0\x9F\x98\x80\n";
  json d = lsp.wait_diagnostics(kUri, 1);
  EXPECT_EQ(codes_of(d), fresh_codes(expected));
  EXPECT_FALSE(d.empty());
  expect_answers(lsp);
}

// --- params of the wrong type ---------------------------------------------------------------

// Values of every JSON type, and numbers no int holds.
const std::vector<json> kWrongTypes = {json("1"), json(nullptr), json::array({1}), json::object({{"a", 1}}),
                                       json(1.5), json(true), json(-1), json(std::numeric_limits<int64_t>::min()),
                                       json(std::numeric_limits<uint64_t>::max())};

// `params` with one value (an object member or an array element, at any depth) replaced by
// each of kWrongTypes in turn.
std::vector<json> typed_mutations(const json& params) {
  std::vector<json> out;
  std::function<void(const json::json_pointer&, const json&)> walk = [&](const json::json_pointer& at, const json& v) {
    if (!at.empty())
      for (const json& bad : kWrongTypes) {
        json m = params;
        m[at] = bad;
        out.push_back(std::move(m));
      }
    if (v.is_object())
      for (const auto& [key, item] : v.items()) walk(at / key, item);
    if (v.is_array())
      for (std::size_t i = 0; i < v.size(); ++i) walk(at / i, v[i]);
  };
  walk(json::json_pointer(), params);
  return out;
}

json whole_range() {
  return {{"start", {{"line", 0}, {"character", 0}}}, {"end", {{"line", 11}, {"character", 0}}}};
}

TEST(LspBadParams, ResolveWithAVersionOfAnyOtherTypeIsInvalidParams) {
  auto lsp = start();
  lsp.initialize(testing::neovim07_capabilities());
  lsp.notify("textDocument/didOpen", open_params(kUri, kBuggy));
  lsp.wait_diagnostics(kUri, 1);
  for (const json& version : kWrongTypes) {
    if (version == json(-1)) continue;  // an integer: a version the document never had
    json action = {{"title", "fix all"}, {"kind", "source.fixAll.preflight"}, {"data", {{"uri", kUri}, {"version", version}}}};
    json r = lsp.request("codeAction/resolve", action);
    ASSERT_TRUE(r.contains("error")) << version.dump() << " -> " << r.dump();
    EXPECT_EQ(r["error"]["code"], -32602) << version.dump();
  }
  // A version the client was offered still resolves.
  json ok = lsp.request("codeAction/resolve",
                        {{"title", "fix all"}, {"kind", "source.fixAll.preflight"}, {"data", {{"uri", kUri}, {"version", 1}}}});
  EXPECT_TRUE(ok["result"].contains("edit")) << ok.dump();
}

// Every request the server handles, with each value of valid params replaced by one of each
// JSON type: each is answered (a result or an error) and the server goes on.
TEST(LspBadParams, EveryRequestWithAValueOfTheWrongTypeIsAnswered) {
  auto lsp = start();
  lsp.initialize(testing::neovim07_capabilities(), {{"initializationOptions", {{"targetGpu", "rtx4090"}}}});
  lsp.notify("textDocument/didOpen", open_params(kUri, kBuggy));
  lsp.wait_diagnostics(kUri, 1);
  const json doc = {{"uri", kUri}};
  const std::vector<std::pair<std::string, json>> requests = {
      {"textDocument/hover", {{"textDocument", doc}, {"position", {{"line", 10}, {"character", 20}}}}},
      {"textDocument/codeAction",
       {{"textDocument", doc},
        {"range", whole_range()},
        {"context", {{"diagnostics", json::array({{{"range", whole_range()}, {"code", "TG001"}, {"message", "m"}}})},
                     {"only", json::array({"quickfix", "source.fixAll", "refactor"})}}}}},
      {"textDocument/codeLens", {{"textDocument", doc}}},
      {"textDocument/diagnostic", {{"textDocument", doc}, {"identifier", "preflight"}, {"previousResultId", "x"}}},
      {"workspace/executeCommand", {{"command", "preflight.showVramReport"}, {"arguments", json::array({{{"uri", kUri}, {"job", 0}}})}}},
      {"codeAction/resolve", {{"title", "t"}, {"kind", "source.fixAll.preflight"}, {"data", {{"uri", kUri}, {"version", 1}}}}},
      {"workspace/diagnostic",
       {{"identifier", "preflight"}, {"previousResultIds", json::array({{{"uri", kUri}, {"value", "x"}}})}}},
  };
  int sent = 0;
  for (const auto& [method, params] : requests)
    for (const json& m : typed_mutations(params)) {
      json r;
      try {
        r = lsp.request(method, m);
      } catch (const std::exception& e) {
        FAIL() << method << " " << m.dump() << ": " << e.what();
      }
      EXPECT_TRUE(r.contains("result") != r.contains("error")) << method << " " << m.dump() << " -> " << r.dump();
      ++sent;
    }
  EXPECT_GT(sent, 300);
  EXPECT_FALSE(lsp.wait_exit(0).has_value());
  expect_answers(lsp);
}

// The same for every notification: none is answered, none stops the server.
TEST(LspBadParams, EveryNotificationWithAValueOfTheWrongTypeIsSurvived) {
  auto lsp = start();
  lsp.initialize(testing::neovim07_capabilities());
  const std::string other = kUri + ".other.py";
  const std::vector<std::pair<std::string, json>> notifications = {
      {"textDocument/didOpen", open_params(other, kBuggy)},
      {"textDocument/didChange",
       change_params(other, 2, json::array({range_change(10, 26, 10, 26, ".detach()"), {{"text", kBuggy}}}))},
      {"textDocument/didSave", {{"textDocument", {{"uri", other}}}}},
      {"textDocument/didClose", {{"textDocument", {{"uri", other}}}}},
      {"workspace/didChangeConfiguration",
       {{"settings", {{"preflight", {{"select", {"TG001"}}, {"ignore", json::array()}, {"severity", {{"TG001", "error"}}},
                                     {"targetGpu", "rtx4090"}}}}}}},
      {"workspace/didChangeWorkspaceFolders",
       {{"event", {{"added", json::array({{{"uri", "file:///nonexistent/a"}, {"name", "a"}}})},
                   {"removed", json::array({{{"uri", "file:///nonexistent/b"}, {"name", "b"}}})}}}}},
      {"$/cancelRequest", {{"id", 12345}}},
  };
  for (const auto& [method, params] : notifications) {
    for (const json& m : typed_mutations(params)) {
      lsp.notify("textDocument/didOpen", open_params(other, kBuggy));
      lsp.notify(method, m);
    }
    expect_answers(lsp);
  }
  EXPECT_FALSE(lsp.wait_exit(0).has_value());
}

// --- transport and configuration -----------------------------------------------------------

TEST(LspBadInput, StdinClosedHalfWayThroughAMessageEndsTheProcess) {
  auto lsp = start();
  lsp.initialize(testing::neovim07_capabilities());
  lsp.notify("textDocument/didOpen", open_params(kUri, kBuggy));
  lsp.send_raw("Content-Length: 500\r\n\r\n{\"jsonrpc\":\"2.0\",\"method\":\"textDocument/didChange\",\"par");
  lsp.close_input();
  auto code = lsp.wait_exit(10000);
  ASSERT_TRUE(code.has_value()) << "the server hung on a truncated message";
  EXPECT_EQ(*code, 1);  // no shutdown came first
}

TEST(LspBadInput, AConfigFileWithWrongTypesIsReportedAndTheDefaultsApply) {
  fs::path root = fs::temp_directory_path() / ("pf-lsp-badcfg-" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root);
  std::ofstream(root / "pyproject.toml") << "[tool.preflight]\nselect = 3\nignore = \"TG001\"\nseverity = [1, 2]\n";
  std::string uri = lsp::path_to_uri(root / "train.py");
  auto lsp = start();
  lsp.initialize(testing::neovim07_capabilities(), {{"rootUri", lsp::path_to_uri(root)}});
  lsp.notify("textDocument/didOpen", open_params(uri, kBuggy));
  auto told = lsp.wait_notification("window/logMessage", [](const json& p) {
    return p.value("message", "").find("pyproject.toml") != std::string::npos;
  });
  EXPECT_TRUE(told.has_value()) << "the bad configuration was not reported";
  EXPECT_EQ(codes_of(lsp.wait_diagnostics(uri, 1)), fresh_codes(kBuggy));
  fs::remove_all(root);
}

TEST(LspBadInput, WrongTypesInClientSettingsAreReportedAndTheRestApplies) {
  auto lsp = start();
  lsp.initialize(testing::eglot_capabilities(),
                 {{"initializationOptions", {{"select", 7}, {"ignore", {"TG001"}}, {"debounceMs", "soon"}}}});
  lsp.notify("textDocument/didOpen", open_params(kUri, kBuggy));
  json d = lsp.wait_diagnostics(kUri, 1);
  EXPECT_TRUE(codes_of(d).empty()) << d.dump();  // the valid `ignore` applied
  expect_answers(lsp);
}

// Issue 26: a debounceMs that is no number of milliseconds in 0..2000 (a string, a fraction,
// a negative, one past int that get<int>() would wrap to 100) was dropped or wrapped without
// a word; it is reported in a logMessage naming the key and the range, and the server goes on
// with its --debounce-ms.
TEST(LspBadInput, ADebounceMsOutsideItsRangeIsReportedAndTheDefaultKept) {
  for (const json& bad : {json("soon"), json(-5), json(1.5), json(4294967396ull), json(1e30), json(2001)}) {
    auto lsp = start();
    lsp.initialize(testing::eglot_capabilities(), {{"initializationOptions", {{"debounceMs", bad}}}});
    auto told = lsp.wait_notification("window/logMessage", [](const json& p) {
      return p.value("message", "").find("`debounceMs` must be an integer from 0 to 2000") != std::string::npos;
    });
    EXPECT_TRUE(told.has_value()) << bad.dump();
    lsp.notify("textDocument/didOpen", open_params(kUri, kBuggy));
    EXPECT_FALSE(codes_of(lsp.wait_diagnostics(kUri, 1)).empty()) << bad.dump();
    expect_answers(lsp);
  }
  auto lsp = start();
  lsp.initialize(testing::eglot_capabilities(), {{"initializationOptions", {{"debounceMs", 0}}}});
  auto told = lsp.wait_notification("window/logMessage", [](const json& p) {
    return p.value("message", "").find("debounceMs") != std::string::npos;
  }, 500);
  EXPECT_FALSE(told.has_value()) << told->dump();
}

}  // namespace
}  // namespace preflight
