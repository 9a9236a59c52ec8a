// The language server as a client sees it: the real `preflight lsp` binary over pipes, under
// the capability sets of Neovim 0.7 (push, utf-16), eglot (push, no relatedInformation) and
// VS Code (pull, relatedInformation, documentChanges). Each test asserts on the JSON that
// comes back.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include <unistd.h>

#include "analysis/line_index.h"
#include "lsp_client.h"
#include "server/lsp/uri.h"

namespace preflight {
namespace {

namespace fs = std::filesystem;
using testing::LspProcess;
using json = nlohmann::json;

const std::string kUri = "file:///tmp/preflight-lsp-test/train.py";

// One retained graph (TG001) after multi-byte text on the same line.
const std::string kBuggy =
    "import torch\n"
    "import torch.nn.functional as F\n"
    "\n"
    "def train(model, loader, optimizer):\n"
    "    model.train()\n"
    "    losses = []\n"
    "    for xb, yb in loader:\n"
    "        optimizer.zero_grad()\n"
    "        loss = F.cross_entropy(model(xb), yb)\n"
    "        loss.backward()\n"
    "        optimizer.step()\n"
    "        print(\"é 日本 😀\"); losses.append(loss)\n"
    "    return losses\n";

LspProcess start(int debounce_ms = 5) {
  return LspProcess({PF_PREFLIGHT_EXE, "lsp", "--debounce-ms", std::to_string(debounce_ms), "--log-level", "debug"});
}

json open_params(const std::string& uri, const std::string& text, int version = 1) {
  return {{"textDocument", {{"uri", uri}, {"languageId", "python"}, {"version", version}, {"text", text}}}};
}

const json* find_code(const json& diagnostics, const std::string& code) {
  for (const json& d : diagnostics)
    if (d.value("code", "") == code) return &d;
  return nullptr;
}

// Applies LSP TextEdits (utf-16 positions) to `text`, as an editor would.
std::string apply_edits(const std::string& text, json edits) {
  analysis::LineIndex lines(text);
  std::vector<std::tuple<uint32_t, uint32_t, std::string>> spans;
  for (const json& e : edits) {
    auto pos = [&](const json& p) {
      return lines.to_offset({p["line"].get<uint32_t>(), p["character"].get<uint32_t>()}, analysis::ColumnUnit::Utf16Units);
    };
    spans.emplace_back(pos(e["range"]["start"]), pos(e["range"]["end"]), e["newText"].get<std::string>());
  }
  std::sort(spans.begin(), spans.end(), [](const auto& a, const auto& b) { return std::get<0>(a) > std::get<0>(b); });
  std::string out = text;
  for (const auto& [b, e, t] : spans) out.replace(b, e - b, t);
  return out;
}

json edits_of(const json& workspace_edit, const std::string& uri) {
  if (workspace_edit.contains("documentChanges")) return workspace_edit["documentChanges"][0]["edits"];
  return workspace_edit["changes"][uri];
}

// --- lifecycle ----------------------------------------------------------------------------

TEST(LspLifecycle, InitializeAdvertisesWhatIsImplementedAndNegotiatesTheEncoding) {
  auto lsp = start();
  json r = lsp.request("initialize", {{"processId", nullptr}, {"capabilities", testing::neovim07_capabilities()}});
  const json& caps = r["result"]["capabilities"];
  EXPECT_EQ(caps["positionEncoding"], "utf-16");
  EXPECT_EQ(caps["textDocumentSync"]["change"], 2);
  EXPECT_EQ(caps["textDocumentSync"]["openClose"], true);
  EXPECT_EQ(caps["diagnosticProvider"]["identifier"], "preflight");
  EXPECT_EQ(caps["codeActionProvider"]["codeActionKinds"], json({"quickfix", "source.fixAll.preflight"}));
  EXPECT_EQ(caps["hoverProvider"], true);
  EXPECT_EQ(r["result"]["serverInfo"]["name"], "preflight");
  EXPECT_EQ(lsp.request("shutdown", nullptr)["result"], nullptr);
  lsp.notify("exit", nullptr);
  EXPECT_EQ(lsp.wait_exit(), 0);
}

TEST(LspLifecycle, PicksUtf8WhenTheClientOffersIt) {
  auto lsp = start();
  json r = lsp.request("initialize", {{"capabilities", {{"general", {{"positionEncodings", {"utf-16", "utf-8"}}}}}}});
  EXPECT_EQ(r["result"]["capabilities"]["positionEncoding"], "utf-8");
}

TEST(LspLifecycle, ExitWithoutShutdownIsCodeOne) {
  auto lsp = start();
  lsp.initialize(testing::eglot_capabilities());
  lsp.notify("exit", nullptr);
  EXPECT_EQ(lsp.wait_exit(), 1);
}

TEST(LspLifecycle, EndOfInputEndsTheProcess) {
  auto lsp = start();
  lsp.initialize(testing::eglot_capabilities());
  lsp.close_input();
  auto code = lsp.wait_exit();
  ASSERT_TRUE(code.has_value()) << "the server kept running after stdin closed";
  EXPECT_EQ(*code, 1);
}

TEST(LspLifecycle, TheClientsDeathEndsTheProcess) {
  pid_t client = ::fork();
  if (client == 0) {
    ::pause();
    ::_exit(0);
  }
  auto lsp = start();
  lsp.request("initialize", {{"processId", client}, {"capabilities", json::object()}});
  ::kill(client, SIGKILL);
  ::waitpid(client, nullptr, 0);
  EXPECT_TRUE(lsp.wait_exit(5000).has_value()) << "the server outlived its client";
}

// --- error codes --------------------------------------------------------------------------

TEST(LspErrors, RequestsBeforeInitializeAreRefusedAndNotificationsDropped) {
  auto lsp = start();
  lsp.notify("textDocument/didOpen", open_params(kUri, kBuggy));
  json r = lsp.request("textDocument/hover", {{"textDocument", {{"uri", kUri}}}, {"position", {{"line", 0}, {"character", 0}}}});
  EXPECT_EQ(r["error"]["code"], -32002);
  lsp.initialize(testing::neovim07_capabilities());
  // The didOpen before initialize was dropped: hover on it finds no document.
  EXPECT_EQ(lsp.request("textDocument/hover", {{"textDocument", {{"uri", kUri}}}, {"position", {{"line", 11}, {"character", 40}}}})["result"],
            nullptr);
}

TEST(LspErrors, EachBadInputGetsItsCodeAndTheServerKeepsReading) {
  auto lsp = start();
  lsp.initialize(testing::eglot_capabilities());
  EXPECT_EQ(lsp.request("no/such/method", json::object())["error"]["code"], -32601);
  lsp.notify("no/such/notification", json::object());  // ignored, no answer
  lsp.notify("$/setTrace", {{"value", "off"}});
  lsp.send_raw("Content-Length: 9\r\n\r\n{not json");
  json parse_error = lsp.wait_response(nullptr);
  EXPECT_EQ(parse_error["error"]["code"], -32700);
  lsp.send_raw("Content-Length: 5\r\n\r\n[1,2]");
  EXPECT_EQ(lsp.wait_response(nullptr)["error"]["code"], -32600);
  lsp.send_raw("Bogus-Header: 1\r\n\r\n");
  EXPECT_EQ(lsp.wait_response(nullptr)["error"]["code"], -32700);
  std::string bad_params = R"({"jsonrpc":"2.0","id":77,"method":"x","params":1})";
  lsp.send_raw("Content-Length: " + std::to_string(bad_params.size()) + "\r\n\r\n" + bad_params);
  EXPECT_EQ(lsp.wait_response(77)["error"]["code"], -32600);
  EXPECT_EQ(lsp.request("initialize", {{"capabilities", json::object()}})["error"]["code"], -32600);
  EXPECT_EQ(lsp.request("textDocument/hover", json::object())["error"]["code"], -32602);
  // Still alive and answering.
  EXPECT_EQ(lsp.request("shutdown", nullptr)["result"], nullptr);
  EXPECT_EQ(lsp.request("textDocument/hover", json::object())["error"]["code"], -32600);
  lsp.notify("exit", nullptr);
  EXPECT_EQ(lsp.wait_exit(), 0);
}

TEST(LspErrors, InvalidUtf8AndBinaryDocumentsAreReportedNotFatal) {
  auto lsp = start();
  lsp.initialize(testing::neovim07_capabilities());
  // JSON strings are UTF-8: raw invalid bytes in a body are a parse error ...
  std::string body = std::string(R"({"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"x","text":")") +
                     "\xff\xfe" + R"("}}})";
  lsp.send_raw("Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body);
  EXPECT_EQ(lsp.wait_response(nullptr)["error"]["code"], -32700);
  // ... while a NUL byte can travel (as \u0000) and makes the file binary to the checker.
  lsp.notify("textDocument/didOpen", open_params(kUri, std::string("x = 1\n\0garbage\n", 16)));
  json d = lsp.wait_diagnostics(kUri, 1);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_NE(d[0]["message"].get<std::string>().find("did not analyse"), std::string::npos);
  lsp.notify("textDocument/didOpen", open_params(kUri + "2", "def f(:\n  pass\n)))"));
  EXPECT_EQ(lsp.wait_diagnostics(kUri + "2", 1), json::array());
  EXPECT_EQ(lsp.request("shutdown", nullptr)["result"], nullptr);
}

// --- diagnostics --------------------------------------------------------------------------

TEST(LspDiagnostics, PushCarriesVersionCodeSourceHrefAndTheEvidenceChain) {
  auto lsp = start();
  lsp.initialize(testing::neovim07_capabilities());
  lsp.notify("textDocument/didOpen", open_params(kUri, kBuggy, 3));
  json d = lsp.wait_diagnostics(kUri, 3);
  const json* tg001 = find_code(d, "TG001");
  ASSERT_NE(tg001, nullptr) << d.dump(2);
  EXPECT_EQ((*tg001)["source"], "preflight");
  EXPECT_EQ((*tg001)["severity"], 2);
  EXPECT_FALSE(tg001->contains("codeDescription"));  // no public documentation URL is configured
  // `losses.append(loss)` on line 11, after "é 日本 😀": utf-16 columns (the emoji counts 2).
  EXPECT_EQ((*tg001)["range"]["start"], (json{{"line", 11}, {"character", 40}}));
  EXPECT_EQ((*tg001)["range"]["end"], (json{{"line", 11}, {"character", 44}}));
  ASSERT_TRUE(tg001->contains("relatedInformation"));
  EXPECT_GE((*tg001)["relatedInformation"].size(), 3u);
  EXPECT_EQ((*tg001)["relatedInformation"][0]["location"]["uri"], kUri);
  EXPECT_EQ((*tg001)["message"].get<std::string>().find('\n'), std::string::npos);
}

TEST(LspDiagnostics, WithoutRelatedInformationTheChainIsFoldedIntoTheMessage) {
  auto lsp = start();
  lsp.initialize(testing::eglot_capabilities());
  lsp.notify("textDocument/didOpen", open_params(kUri, kBuggy));
  json d = lsp.wait_diagnostics(kUri, 1);
  const json* tg001 = find_code(d, "TG001");
  ASSERT_NE(tg001, nullptr);
  EXPECT_FALSE(tg001->contains("relatedInformation"));
  std::string message = (*tg001)["message"];
  EXPECT_NE(message.find("\n  train.py:9: "), std::string::npos) << message;
}

TEST(LspDiagnostics, UnicodeIncrementalEditsMatchAFreshOpenOfTheSameText) {
  auto lsp = start();
  lsp.initialize(testing::neovim07_capabilities());
  lsp.notify("textDocument/didOpen", open_params(kUri, kBuggy));
  lsp.wait_diagnostics(kUri, 1);
  // Two changes in one notification: insert text before the emoji, then fix the store with
  // an edit addressed in utf-16 units after the surrogate pair.
  std::string text = kBuggy;
  json changes = json::array(
      {{{"range", {{"start", {{"line", 11}, {"character", 15}}}, {"end", {{"line", 11}, {"character", 15}}}}},
        {"text", "中文 "}},
       {{"range", {{"start", {{"line", 11}, {"character", 47}}}, {"end", {{"line", 11}, {"character", 47}}}}},
        {"text", ".detach()"}}});
  for (const json& change : changes)
    text = apply_edits(text, json::array({{{"range", change["range"]}, {"newText", change["text"]}}}));
  ASSERT_NE(text.find("print(\"中文 é 日本 😀\"); losses.append(loss.detach())"), std::string::npos) << text;
  lsp.notify("textDocument/didChange", {{"textDocument", {{"uri", kUri}, {"version", 2}}}, {"contentChanges", changes}});
  json incremental = lsp.wait_diagnostics(kUri, 2);
  lsp.notify("textDocument/didOpen", open_params(kUri + ".fresh", text));
  json fresh = lsp.wait_diagnostics(kUri + ".fresh", 1);
  EXPECT_EQ(incremental, fresh);
  EXPECT_EQ(find_code(incremental, "TG001"), nullptr);
}

TEST(LspDiagnostics, FullTextChangesAndCloseClear) {
  auto lsp = start();
  lsp.initialize(testing::neovim07_capabilities());
  lsp.notify("textDocument/didOpen", open_params(kUri, kBuggy));
  EXPECT_NE(find_code(lsp.wait_diagnostics(kUri, 1), "TG001"), nullptr);
  lsp.notify("textDocument/didChange",
             {{"textDocument", {{"uri", kUri}, {"version", 2}}}, {"contentChanges", json::array({{{"text", "x = 1\n"}}})}});
  EXPECT_EQ(lsp.wait_diagnostics(kUri, 2), json::array());
  lsp.notify("textDocument/didClose", {{"textDocument", {{"uri", kUri}}}});
  auto cleared = lsp.wait_notification("textDocument/publishDiagnostics",
                                       [&](const json& p) { return p["uri"] == kUri && !p.contains("version"); });
  ASSERT_TRUE(cleared);
  EXPECT_EQ((*cleared)["diagnostics"], json::array());
}

TEST(LspDiagnostics, RapidEditsPublishOnlyTheNewestVersion) {
  auto lsp = start(50);
  lsp.initialize(testing::neovim07_capabilities());
  lsp.notify("textDocument/didOpen", open_params(kUri, kBuggy));
  lsp.wait_diagnostics(kUri, 1);
  for (int v = 2; v <= 30; ++v)
    lsp.notify("textDocument/didChange",
               {{"textDocument", {{"uri", kUri}, {"version", v}}},
                {"contentChanges", json::array({{{"range", {{"start", {{"line", 12}, {"character", 0}}},
                                                            {"end", {{"line", 12}, {"character", 0}}}}},
                                                 {"text", "#"}}})}});
  lsp.wait_diagnostics(kUri, 30);
  int last = 30;
  for (const json& m : lsp.drain(200))
    if (m.value("method", "") == "textDocument/publishDiagnostics") last = m["params"]["version"];
  EXPECT_EQ(last, 30) << "a stale version was published after the newest";
}

TEST(LspDiagnostics, PullAnswersFullThenUnchangedAndAgreesWithPush) {
  auto vscode = start();
  vscode.initialize(testing::vscode_capabilities());
  vscode.notify("textDocument/didOpen", open_params(kUri, kBuggy));
  json pulled = vscode.request("textDocument/diagnostic", {{"textDocument", {{"uri", kUri}}}})["result"];
  EXPECT_EQ(pulled["kind"], "full");
  ASSERT_TRUE(pulled.contains("resultId"));
  json again = vscode.request("textDocument/diagnostic",
                              {{"textDocument", {{"uri", kUri}}}, {"previousResultId", pulled["resultId"]}})["result"];
  EXPECT_EQ(again["kind"], "unchanged");
  EXPECT_EQ(again["resultId"], pulled["resultId"]);
  // Pull clients get no push.
  for (const json& m : vscode.drain(150)) EXPECT_NE(m.value("method", ""), "textDocument/publishDiagnostics");

  auto nvim = start();
  nvim.initialize(testing::neovim07_capabilities());
  nvim.notify("textDocument/didOpen", open_params(kUri, kBuggy));
  EXPECT_EQ(nvim.wait_diagnostics(kUri, 1), pulled["items"]);
}

TEST(LspDiagnostics, WorkspaceScanListsUnopenedFilesAndSkipsIgnoredOnes) {
  fs::path root = fs::temp_directory_path() / ("pf-lsp-ws-" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root / "src");
  fs::create_directories(root / "generated");
  std::ofstream(root / "src" / "train.py") << kBuggy;
  std::ofstream(root / "src" / "clean.py") << "x = 1\n";
  std::ofstream(root / "generated" / "copy.py") << kBuggy;
  std::ofstream(root / "open.py") << kBuggy;
  std::ofstream(root / ".gitignore") << "# build output\n/generated/\n";
  auto lsp = start();
  lsp.initialize(testing::vscode_capabilities(), {{"workspaceFolders", {{{"uri", lsp::path_to_uri(root)}, {"name", "ws"}}}}});
  lsp.notify("textDocument/didOpen", open_params(lsp::path_to_uri(root / "open.py"), kBuggy));
  json r = lsp.request("workspace/diagnostic", {{"previousResultIds", json::array()}, {"workDoneToken", "scan-1"}})["result"];
  std::map<std::string, json> by_uri;
  for (const json& report : r["items"]) by_uri[report["uri"]] = report;
  EXPECT_EQ(by_uri.size(), 2u) << r.dump(2);
  ASSERT_TRUE(by_uri.count(lsp::path_to_uri(root / "src" / "train.py")));
  EXPECT_NE(find_code(by_uri[lsp::path_to_uri(root / "src" / "train.py")]["items"], "TG001"), nullptr);
  EXPECT_TRUE(by_uri.count(lsp::path_to_uri(root / "src" / "clean.py")));
  // Progress: begin ... end on the client's token.
  auto begin = lsp.wait_notification("$/progress", [](const json& p) { return p["token"] == "scan-1" && p["value"]["kind"] == "begin"; });
  EXPECT_TRUE(begin);
  auto end = lsp.wait_notification("$/progress", [](const json& p) { return p["token"] == "scan-1" && p["value"]["kind"] == "end"; });
  EXPECT_TRUE(end);
  // A second scan with the ids just received: everything unchanged.
  json previous = json::array();
  for (auto& [uri, report] : by_uri) previous.push_back({{"uri", uri}, {"value", report["resultId"]}});
  json r2 = lsp.request("workspace/diagnostic", {{"previousResultIds", previous}})["result"];
  for (const json& report : r2["items"]) EXPECT_EQ(report["kind"], "unchanged");
  fs::remove_all(root);
}

// A file the scan cannot analyse (over the 10 MiB cap, unreadable) is listed with one
// information diagnostic saying why, as the CLI reports it, instead of being left out.
TEST(LspDiagnostics, WorkspaceScanReportsTheFilesItCannotRead) {
  fs::path root = fs::temp_directory_path() / ("pf-lsp-ws-skip-" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root);
  std::ofstream(root / "train.py") << kBuggy;
  std::ofstream(root / "huge.py") << std::string(10u * 1024 * 1024 + 1, '#');
  std::ofstream(root / "locked.py") << kBuggy;
  fs::permissions(root / "locked.py", fs::perms::none);
  const bool can_lock = !std::ifstream(root / "locked.py").is_open();  // root reads it anyway
  const fs::path log = root.string() + ".stderr";
  LspProcess lsp({PF_PREFLIGHT_EXE, "lsp", "--debounce-ms", "0"}, log.string());
  lsp.initialize(testing::vscode_capabilities(), {{"workspaceFolders", {{{"uri", lsp::path_to_uri(root)}, {"name", "ws"}}}}});
  json r = lsp.request("workspace/diagnostic", {{"previousResultIds", json::array()}})["result"];
  std::map<std::string, json> by_uri;
  for (const json& report : r["items"]) by_uri[report["uri"]] = report;
  EXPECT_EQ(by_uri.size(), 3u) << r.dump(2);
  const std::string huge = lsp::path_to_uri(root / "huge.py");
  ASSERT_TRUE(by_uri.count(huge)) << r.dump(2);
  ASSERT_EQ(by_uri[huge]["items"].size(), 1u);
  const json& d = by_uri[huge]["items"][0];
  EXPECT_EQ(d["severity"], 3);
  EXPECT_EQ(d["message"], "preflight did not analyse this file: file too large to analyze (10485761 bytes)");
  if (can_lock) {
    const std::string locked = lsp::path_to_uri(root / "locked.py");
    ASSERT_TRUE(by_uri.count(locked)) << r.dump(2);
    EXPECT_NE(by_uri[locked]["items"][0]["message"].get<std::string>().find("could not read"), std::string::npos);
  }
  // A pull for the unopened big file says the same.
  json pulled = lsp.request("textDocument/diagnostic", {{"textDocument", {{"uri", huge}}}})["result"];
  EXPECT_EQ(pulled["kind"], "full");
  EXPECT_EQ(pulled["items"], by_uri[huge]["items"]) << pulled.dump();
  // And the server's log (stderr, warn level: shown by default) names each skipped file.
  EXPECT_EQ(lsp.request("shutdown", nullptr)["result"], nullptr);
  lsp.notify("exit", nullptr);
  EXPECT_EQ(lsp.wait_exit(), 0);
  std::ifstream in(log);
  std::string logged((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(logged.find("[warn"), std::string::npos) << logged;
  EXPECT_NE(logged.find("workspace scan: " + huge + ": not analysed: file too large to analyze (10485761 bytes)"),
            std::string::npos)
      << logged;
  if (can_lock) {
    EXPECT_NE(logged.find("workspace scan: " + lsp::path_to_uri(root / "locked.py") + ": not analysed: "),
              std::string::npos)
        << logged;
  }
  fs::permissions(root / "locked.py", fs::perms::owner_all);
  fs::remove_all(root);
  fs::remove(log);
}

// A link out of the workspace folder (to a system Python tree, say) is not followed: it is
// listed with one information diagnostic, and none of the files behind it are.
TEST(LspDiagnostics, WorkspaceScanDoesNotLeaveTheFolderThroughLinks) {
  fs::path base = fs::temp_directory_path() / ("pf-lsp-ws-link-" + std::to_string(::getpid()));
  fs::remove_all(base);
  fs::path root = base / "ws", elsewhere = base / "elsewhere";
  fs::create_directories(root / "src");
  fs::create_directories(elsewhere / "pkg");
  std::ofstream(root / "src" / "train.py") << kBuggy;
  std::ofstream(elsewhere / "pkg" / "lib.py") << kBuggy;
  std::ofstream(elsewhere / "single.py") << kBuggy;
  fs::create_directory_symlink(elsewhere, root / "site");
  fs::create_symlink(elsewhere / "single.py", root / "single.py");
  auto lsp = start();
  lsp.initialize(testing::vscode_capabilities(), {{"workspaceFolders", {{{"uri", lsp::path_to_uri(root)}, {"name", "ws"}}}}});
  json r = lsp.request("workspace/diagnostic", {{"previousResultIds", json::array()}})["result"];
  std::map<std::string, json> by_uri;
  for (const json& report : r["items"]) by_uri[report["uri"]] = report;
  EXPECT_EQ(by_uri.size(), 3u) << r.dump(2);  // train.py and the two links
  EXPECT_TRUE(by_uri.count(lsp::path_to_uri(root / "src" / "train.py"))) << r.dump(2);
  for (const char* link : {"site", "single.py"}) {
    const std::string uri = lsp::path_to_uri(root / link);
    ASSERT_TRUE(by_uri.count(uri)) << link << r.dump(2);
    ASSERT_EQ(by_uri[uri]["items"].size(), 1u);
    EXPECT_EQ(by_uri[uri]["items"][0]["severity"], 3);
    EXPECT_NE(by_uri[uri]["items"][0]["message"].get<std::string>().find("outside the workspace folder"),
              std::string::npos) << by_uri[uri].dump();
  }
  for (const auto& [uri, report] : by_uri) EXPECT_EQ(uri.find("lib.py"), std::string::npos) << uri;
  fs::remove_all(base);
}

// --- code actions -------------------------------------------------------------------------

TEST(LspCodeActions, QuickFixEditsApplyAndTheRecheckIsClean) {
  for (json caps : {testing::vscode_capabilities(), testing::eglot_capabilities()}) {
    auto lsp = start();
    lsp.initialize(caps);
    bool pull = caps["textDocument"].contains("diagnostic");
    lsp.notify("textDocument/didOpen", open_params(kUri, kBuggy));
    json diagnostics = pull ? lsp.request("textDocument/diagnostic", {{"textDocument", {{"uri", kUri}}}})["result"]["items"]
                            : lsp.wait_diagnostics(kUri, 1);
    const json* tg001 = find_code(diagnostics, "TG001");
    ASSERT_NE(tg001, nullptr);
    json actions = lsp.request("textDocument/codeAction",
                               {{"textDocument", {{"uri", kUri}}}, {"range", (*tg001)["range"]},
                                {"context", {{"diagnostics", json::array({*tg001})}}}})["result"];
    const json* preferred = nullptr;
    const json* unsafe = nullptr;
    const json* ignore = nullptr;
    for (const json& a : actions) {
      if (a.value("isPreferred", false)) preferred = &a;
      if (a["title"].get<std::string>().find("unsafe") != std::string::npos) unsafe = &a;
      if (a["title"] == "Ignore TG001 on this line") ignore = &a;
    }
    ASSERT_NE(preferred, nullptr) << actions.dump(2);
    ASSERT_NE(unsafe, nullptr);
    ASSERT_NE(ignore, nullptr);
    EXPECT_EQ((*preferred)["kind"], "quickfix");
    EXPECT_EQ((*preferred)["diagnostics"][0]["code"], "TG001");
    if (pull) EXPECT_EQ((*preferred)["edit"]["documentChanges"][0]["textDocument"]["version"], 1);
    else EXPECT_TRUE((*preferred)["edit"].contains("changes"));
    for (const json* chosen : {preferred, ignore}) {
      std::string fixed = apply_edits(kBuggy, edits_of((*chosen)["edit"], kUri));
      std::string uri = kUri + ".fixed" + std::to_string(chosen == ignore);
      lsp.notify("textDocument/didOpen", open_params(uri, fixed));
      json after = pull ? lsp.request("textDocument/diagnostic", {{"textDocument", {{"uri", uri}}}})["result"]["items"]
                        : lsp.wait_diagnostics(uri, 1);
      EXPECT_EQ(find_code(after, "TG001"), nullptr) << fixed;
    }
  }
}

TEST(LspCodeActions, TheDiagnosticsInTheContextSelectTheActionsAsNeovim07Sends) {
  auto lsp = start();
  lsp.initialize(testing::neovim07_capabilities());
  lsp.notify("textDocument/didOpen", open_params(kUri, kBuggy));
  json diagnostics = lsp.wait_diagnostics(kUri, 1);
  const json* tg001 = find_code(diagnostics, "TG001");
  ASSERT_NE(tg001, nullptr);
  // The cursor at the start of the line, outside the finding's span; the line's diagnostics
  // in the context.
  int line = (*tg001)["range"]["start"]["line"];
  json params = {{"textDocument", {{"uri", kUri}}},
                 {"range", {{"start", {{"line", line}, {"character", 0}}}, {"end", {{"line", line}, {"character", 0}}}}},
                 {"context", {{"diagnostics", json::array({*tg001})}, {"only", {"quickfix"}}}}};
  json actions = lsp.request("textDocument/codeAction", params)["result"];
  ASSERT_FALSE(actions.empty()) << actions.dump();
  EXPECT_EQ(actions[0]["title"], "Add .detach()");
  params["context"]["diagnostics"] = json::array();
  EXPECT_TRUE(lsp.request("textDocument/codeAction", params)["result"].empty()) << "nothing at the cursor, nothing named";
}

// Two findings of one rule on one line: "Ignore TG001 on this line" is offered once, naming
// both diagnostics (it was offered twice, with the same edit).
TEST(LspCodeActions, AnActionTwoFindingsShareIsOfferedOnce) {
  std::string text = kBuggy;
  text.replace(text.find("    losses = []\n"), 16, "    losses, seen = [], []\n");
  text.replace(text.find("losses.append(loss)\n"), 20, "losses.append(loss); seen.append(loss)\n");
  auto lsp = start();
  lsp.initialize(testing::neovim07_capabilities());
  lsp.notify("textDocument/didOpen", open_params(kUri, text));
  json diagnostics = lsp.wait_diagnostics(kUri, 1);
  json on_line = json::array();
  for (const json& d : diagnostics)
    if (d["code"] == "TG001" && d["range"]["start"]["line"] == 11) on_line.push_back(d);
  ASSERT_EQ(on_line.size(), 2u) << diagnostics.dump(2);
  json line_range = {{"start", {{"line", 11}, {"character", 0}}}, {"end", {{"line", 11}, {"character", 80}}}};
  json actions = lsp.request("textDocument/codeAction", {{"textDocument", {{"uri", kUri}}}, {"range", line_range},
                                                         {"context", {{"diagnostics", on_line}}}})["result"];
  int ignores = 0, detaches = 0;
  for (const json& a : actions) {
    if (a["title"] == "Ignore TG001 on this line") {
      ++ignores;
      EXPECT_EQ(a["diagnostics"].size(), 2u) << a.dump(2);
    }
    detaches += a["title"] == "Add .detach()";
  }
  EXPECT_EQ(ignores, 1) << actions.dump(2);
  EXPECT_EQ(detaches, 2) << "each finding's own fix stays: their edits differ";
}

TEST(LspCodeActions, FixAllAppliesEverySafeFixAndResolvesLazily) {
  auto lsp = start();
  lsp.initialize(testing::vscode_capabilities());
  lsp.notify("textDocument/didOpen", open_params(kUri, kBuggy));
  json actions = lsp.request("textDocument/codeAction",
                             {{"textDocument", {{"uri", kUri}}},
                              {"range", {{"start", {{"line", 0}, {"character", 0}}}, {"end", {{"line", 0}, {"character", 0}}}}},
                              {"context", {{"diagnostics", json::array()}, {"only", {"source.fixAll"}}}}})["result"];
  ASSERT_EQ(actions.size(), 1u) << actions.dump(2);
  EXPECT_EQ(actions[0]["kind"], "source.fixAll.preflight");
  EXPECT_FALSE(actions[0].contains("edit"));  // the client resolves it
  json resolved = lsp.request("codeAction/resolve", actions[0])["result"];
  std::string fixed = apply_edits(kBuggy, edits_of(resolved["edit"], kUri));
  EXPECT_NE(fixed.find("losses.append(loss.detach())"), std::string::npos);
  // After an edit the offered version is stale: resolving gives no edit rather than a wrong one.
  lsp.notify("textDocument/didChange",
             {{"textDocument", {{"uri", kUri}, {"version", 2}}}, {"contentChanges", json::array({{{"text", kBuggy + "\n"}}})}});
  json stale = lsp.request("codeAction/resolve", actions[0])["result"];
  EXPECT_FALSE(stale.contains("edit"));
}

// --- hover --------------------------------------------------------------------------------

TEST(LspHover, OverAFindingShowsTheRuleTheEvidenceAndTheFix) {
  auto lsp = start();
  lsp.initialize(testing::neovim07_capabilities());
  lsp.notify("textDocument/didOpen", open_params(kUri, kBuggy));
  json h = lsp.request("textDocument/hover", {{"textDocument", {{"uri", kUri}}}, {"position", {{"line", 11}, {"character", 42}}}})["result"];
  ASSERT_TRUE(h.is_object()) << h.dump();
  EXPECT_EQ(h["contents"]["kind"], "markdown");
  std::string value = h["contents"]["value"];
  EXPECT_NE(value.find("**TG001"), std::string::npos);
  EXPECT_NE(value.find("**Evidence**"), std::string::npos);
  EXPECT_NE(value.find("line 9:"), std::string::npos);
  EXPECT_NE(value.find(".detach()"), std::string::npos);
  EXPECT_EQ(lsp.request("textDocument/hover", {{"textDocument", {{"uri", kUri}}}, {"position", {{"line", 0}, {"character", 2}}}})["result"],
            nullptr);
}

// Two TG004 notes on one DataLoader call (no num_workers, unpinned memory): the hover shows
// the rule's explanation once and both findings' messages (it repeated the explanation).
TEST(LspHover, StackedFindingsOfOneRuleShareOneExplanation) {
  const std::string text =
      "import torch\n"
      "from torch.utils.data import DataLoader\n"
      "\n"
      "def main(ds, model, optimizer):\n"
      "    model.cuda()\n"
      "    loader = DataLoader(ds, batch_size=32)\n"
      "    for xb, yb in loader:\n"
      "        optimizer.zero_grad()\n"
      "        loss = model(xb.cuda()).sum()\n"
      "        loss.backward()\n"
      "        optimizer.step()\n";
  auto lsp = start();
  lsp.initialize(testing::neovim07_capabilities());
  lsp.notify("textDocument/didOpen", open_params(kUri, text));
  int tg004 = 0;
  for (const json& d : lsp.wait_diagnostics(kUri, 1)) tg004 += d["code"] == "TG004";
  ASSERT_EQ(tg004, 2);
  json h = lsp.request("textDocument/hover", {{"textDocument", {{"uri", kUri}}}, {"position", {{"line", 5}, {"character", 16}}}})["result"];
  ASSERT_TRUE(h.is_object()) << h.dump();
  std::string value = h["contents"]["value"];
  auto count = [&](const std::string& needle) {
    int n = 0;
    for (std::size_t at = value.find(needle); at != std::string::npos; at = value.find(needle, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("**TG004 dataloader-starvation**"), 1) << value;
  EXPECT_EQ(count("\n---\n"), 0) << value;
  EXPECT_NE(value.find("sets no `num_workers`"), std::string::npos) << value;
  EXPECT_NE(value.find("pageable (unpinned) host memory"), std::string::npos) << value;
  // The explanation's first paragraph, once.
  std::string explain_start = value.substr(value.find("\n\n") + 2, 40);
  EXPECT_EQ(count(explain_start), 1) << value;
}

// --- VRAM: code lens, hover, command, batch-size action -----------------------------------

// A full fine-tune of gpt2-large at batch 64: far past a 24 GB card; batch 1 fits (with the
// SDPA kernel the script names: under eager attention batch 1 would not, so an unstated
// kernel is "may not fit").
const std::string kFinetune =
    "import torch\n"
    "from torch.utils.data import DataLoader\n"
    "from transformers import AutoModelForCausalLM\n"
    "\n"
    "model = AutoModelForCausalLM.from_pretrained(\"gpt2-large\", attn_implementation=\"sdpa\").cuda()\n"
    "opt = torch.optim.AdamW(model.parameters(), lr=1e-4)\n"
    "loader = DataLoader(corpus, batch_size=64, num_workers=4, pin_memory=True)\n"
    "\n"
    "\n"
    "def fit():\n"
    "    for batch in loader:\n"
    "        opt.zero_grad()\n"
    "        model(**batch).loss.backward()\n"
    "        opt.step()\n";

json code_lens(LspProcess& lsp, const std::string& uri) {
  return lsp.request("textDocument/codeLens", {{"textDocument", {{"uri", uri}}}})["result"];
}

TEST(LspVram, CodeLensOverTheEntryPointFollowsTheBatchLiteral) {
  auto lsp = start();
  json init = lsp.initialize(testing::vscode_capabilities(), {{"initializationOptions", {{"targetGpu", "rtx4090"}}}});
  EXPECT_TRUE(init["result"]["capabilities"].contains("codeLensProvider"));
  EXPECT_EQ(init["result"]["capabilities"]["executeCommandProvider"]["commands"][0], "preflight.showVramReport");
  lsp.notify("textDocument/didOpen", open_params(kUri, kFinetune));
  json lenses = code_lens(lsp, kUri);
  ASSERT_EQ(lenses.size(), 1u) << lenses.dump();
  EXPECT_EQ(lenses[0]["range"]["start"]["line"], 10);  // `for batch in loader:`
  std::string before = lenses[0]["command"]["title"];
  EXPECT_NE(before.find("NVIDIA GeForce RTX 4090"), std::string::npos) << before;
  EXPECT_NE(before.find("✗"), std::string::npos) << before;
  EXPECT_EQ(lenses[0]["command"]["command"], "preflight.showVramReport");

  // The command returns the whole report of that job.
  json report = lsp.request("workspace/executeCommand", {{"command", "preflight.showVramReport"},
                                                        {"arguments", lenses[0]["command"]["arguments"]}})["result"];
  ASSERT_TRUE(report.is_object()) << report.dump();
  EXPECT_EQ(report["report"]["config"]["batch_size"], 64);
  EXPECT_GT(report["report"]["total_bytes"].get<int64_t>(), 24LL << 30);
  EXPECT_NE(report["markdown"].get<std::string>().find("| term |"), std::string::npos);

  // Editing the literal changes the projection the lens shows.
  json change = {{"range", {{"start", {{"line", 6}, {"character", 39}}}, {"end", {{"line", 6}, {"character", 41}}}}}, {"text", "1"}};
  lsp.notify("textDocument/didChange", {{"textDocument", {{"uri", kUri}, {"version", 2}}}, {"contentChanges", json::array({change})}});
  json after = code_lens(lsp, kUri);
  ASSERT_EQ(after.size(), 1u);
  EXPECT_NE(after[0]["command"]["title"], before);
  EXPECT_NE(after[0]["command"]["title"].get<std::string>().find("✓"), std::string::npos) << after.dump();
}

TEST(LspVram, ADeepSpeedConfigTheScriptNamesIsReadNextToIt) {
  const fs::path dir = fs::temp_directory_path() / ("preflight-lsp-ds-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "ds.json") << R"({"zero_optimization": {"stage": 3}, "bf16": {"enabled": true}})";
  const std::string script =
      "from transformers import AutoModelForCausalLM, Trainer, TrainingArguments\n"
      "model = AutoModelForCausalLM.from_pretrained(\"gpt2-large\")\n"
      "args = TrainingArguments(\"out\", per_device_train_batch_size=2, deepspeed=\"ds.json\")\n"
      "Trainer(model=model, args=args, train_dataset=ds).train()\n";
  const std::string uri = lsp::path_to_uri(dir / "train.py");
  auto lsp = start();
  lsp.initialize(testing::vscode_capabilities(), {{"initializationOptions", {{"targetGpu", "rtx4090"}}}});
  lsp.notify("textDocument/didOpen", open_params(uri, script));
  json lenses = code_lens(lsp, uri);
  ASSERT_EQ(lenses.size(), 1u) << lenses.dump();
  json report = lsp.request("workspace/executeCommand", {{"command", "preflight.showVramReport"},
                                                        {"arguments", lenses[0]["command"]["arguments"]}})["result"];
  fs::remove_all(dir);
  ASSERT_TRUE(report.is_object()) << report.dump();
  EXPECT_EQ(report["report"]["config"]["sharding"], "zero-3");
  EXPECT_EQ(report["report"]["config"]["precision"], "fp16-master");
}

TEST(LspVram, HoverOnTheLoopOrTheBatchLineShowsTheBreakdown) {
  auto lsp = start();
  lsp.initialize(testing::neovim07_capabilities(), {{"initializationOptions", {{"targetGpu", "rtx4090"}}}});
  lsp.notify("textDocument/didOpen", open_params(kUri, kFinetune));
  for (int line : {10, 6, 4}) {
    json h = lsp.request("textDocument/hover", {{"textDocument", {{"uri", kUri}}}, {"position", {{"line", line}, {"character", 8}}}})["result"];
    ASSERT_TRUE(h.is_object()) << "line " << line << ": " << h.dump();
    std::string value = h["contents"]["value"];
    EXPECT_NE(value.find("**VRAM estimate**"), std::string::npos) << value;
    EXPECT_NE(value.find("| activations |"), std::string::npos) << value;
  }
  EXPECT_EQ(lsp.request("textDocument/hover", {{"textDocument", {{"uri", kUri}}}, {"position", {{"line", 3}, {"character", 0}}}})["result"],
            nullptr);
}

TEST(LspVram, TheBatchSizeActionWritesTheLargestThatFitsAndTG010IsPublished) {
  auto lsp = start();
  lsp.initialize(testing::neovim07_capabilities(), {{"initializationOptions", {{"targetGpu", "rtx4090"}}}});
  lsp.notify("textDocument/didOpen", open_params(kUri, kFinetune));
  EXPECT_NE(find_code(lsp.wait_diagnostics(kUri, 1), "TG010"), nullptr) << "TG010 with a target GPU";
  json actions = lsp.request("textDocument/codeAction",
                             {{"textDocument", {{"uri", kUri}}},
                              {"range", {{"start", {{"line", 6}, {"character", 30}}}, {"end", {{"line", 6}, {"character", 30}}}}},
                              {"context", {{"diagnostics", json::array()}}}})["result"];
  const json* set_batch = nullptr;
  for (const json& a : actions)
    if (a["title"].get<std::string>().find("set the batch size to 1") != std::string::npos) set_batch = &a;
  ASSERT_NE(set_batch, nullptr) << actions.dump();
  std::string fixed = apply_edits(kFinetune, (*set_batch)["edit"]["changes"][kUri]);
  EXPECT_NE(fixed.find("DataLoader(corpus, batch_size=1, num_workers=4"), std::string::npos) << fixed;
}

TEST(LspVram, AnUnknownTargetIsToldToTheUserAndLeavesNoVerdict) {
  auto lsp = start();
  lsp.initialize(testing::neovim07_capabilities(), {{"initializationOptions", {{"targetGpu", "rtx9090"}}}});
  auto told = lsp.wait_notification("window/logMessage", [](const json& p) {
    return p["message"].get<std::string>().find("rtx9090") != std::string::npos;
  });
  EXPECT_TRUE(told);
  lsp.notify("textDocument/didOpen", open_params(kUri, kFinetune));
  EXPECT_EQ(find_code(lsp.wait_diagnostics(kUri, 1), "TG010"), nullptr);
  json lenses = code_lens(lsp, kUri);
  ASSERT_EQ(lenses.size(), 1u);
  EXPECT_EQ(lenses[0]["command"]["title"].get<std::string>().find(" on "), std::string::npos) << "no target, no verdict";
}

// With no target GPU set the lens says how to set one instead of "? unknown".
TEST(LspVram, WithoutATargetTheLensSaysHowToSetOne) {
  auto lsp = start();
  lsp.initialize(testing::neovim07_capabilities());
  lsp.notify("textDocument/didOpen", open_params(kUri, kFinetune));
  json lenses = code_lens(lsp, kUri);
  ASSERT_EQ(lenses.size(), 1u);
  std::string title = lenses[0]["command"]["title"];
  EXPECT_TRUE(title.starts_with("peak ")) << title;
  EXPECT_EQ(title.find("unknown"), std::string::npos) << title;
  EXPECT_NE(title.find("set a target GPU for a verdict: preflight.targetGpu, or target_gpu in [tool.preflight]"),
            std::string::npos) << title;
}

// An editor reads the server's stderr (Neovim logs each line as an error): the default level
// there is warn, so the info lines (initialized, exit) stay out; --log-level info brings them.
TEST(LspLog, WarnByDefaultWhenStderrIsNotATerminal) {
  fs::path log = fs::temp_directory_path() / ("preflight-lsp-stderr-" + std::to_string(::getpid()));
  auto run_session = [&](std::vector<std::string> args) {
    LspProcess lsp(std::move(args), log.string());
    lsp.initialize(testing::neovim07_capabilities());
    EXPECT_EQ(lsp.request("shutdown", nullptr)["result"], nullptr);
    lsp.notify("exit", nullptr);
    EXPECT_EQ(lsp.wait_exit(), 0);
    std::ifstream in(log);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  };
  std::string quiet = run_session({PF_PREFLIGHT_EXE, "lsp"});
  EXPECT_EQ(quiet.find("[info]"), std::string::npos) << quiet;
  std::string chatty = run_session({PF_PREFLIGHT_EXE, "lsp", "--log-level", "info"});
  EXPECT_NE(chatty.find("initialized:"), std::string::npos) << chatty;
  fs::remove(log);
}

// --- cancellation -------------------------------------------------------------------------

TEST(LspCancel, AQueuedRequestIsAnsweredRequestCancelled) {
  auto lsp = start();
  lsp.initialize(testing::neovim07_capabilities());
  // A large document keeps its strand busy, so the hover behind it is still queued when the
  // cancellation arrives.
  std::string big;
  for (int i = 0; i < 3000; ++i) big += "def f" + std::to_string(i) + "(model, x):\n    y = model(x)\n    return y.sum()\n\n";
  lsp.notify("textDocument/didOpen", open_params(kUri, big));
  int id = lsp.send_request("textDocument/hover", {{"textDocument", {{"uri", kUri}}}, {"position", {{"line", 0}, {"character", 0}}}});
  lsp.notify("$/cancelRequest", {{"id", id}});
  json r = lsp.wait_response(id, 30000);
  ASSERT_TRUE(r.contains("error")) << r.dump();
  EXPECT_EQ(r["error"]["code"], -32800);
}

// --- configuration ------------------------------------------------------------------------

TEST(LspConfiguration, ChangedSettingsRepublishAndProjectFilesAreRead) {
  fs::path root = fs::temp_directory_path() / ("pf-lsp-cfg-" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root);
  std::ofstream(root / "train.py") << kBuggy;
  std::string uri = lsp::path_to_uri(root / "train.py");
  auto lsp = start();
  lsp.answer_server_request = [](const json& r) -> json {
    if (r["method"] == "workspace/configuration") return json::array({json::object()});
    return nullptr;
  };
  lsp.initialize(testing::neovim07_capabilities());
  lsp.notify("textDocument/didOpen", open_params(uri, kBuggy));
  EXPECT_NE(find_code(lsp.wait_diagnostics(uri, 1), "TG001"), nullptr);
  // eglot's shape: the settings tree pushed in didChangeConfiguration.
  lsp.notify("workspace/didChangeConfiguration", {{"settings", {{"preflight", {{"severity", {{"TG001", "error"}}}}}}}});
  auto upgraded = lsp.wait_notification("textDocument/publishDiagnostics", [&](const json& p) {
    const json* d = find_code(p["diagnostics"], "TG001");
    return p["uri"] == uri && d && (*d)["severity"] == 1;
  });
  EXPECT_TRUE(upgraded) << "severity override not applied";
  // The project's pyproject.toml ignores TG001; the watched-file event makes it count.
  std::ofstream(root / "pyproject.toml") << "[tool.preflight]\nignore = [\"TG001\"]\n";
  lsp.notify("workspace/didChangeWatchedFiles",
             {{"changes", json::array({{{"uri", lsp::path_to_uri(root / "pyproject.toml")}, {"type", 1}}})}});
  auto ignored = lsp.wait_notification("textDocument/publishDiagnostics", [&](const json& p) {
    return p["uri"] == uri && find_code(p["diagnostics"], "TG001") == nullptr;
  });
  EXPECT_TRUE(ignored) << "pyproject.toml change not applied";
  fs::remove_all(root);
}

// Neovim 0.7 cannot watch files and sends no didChangeWatchedFiles: a pyproject.toml edited
// on disk takes effect on the next didSave, didChange or didOpen (it took a restart).
TEST(LspConfiguration, WithoutFileWatchingAChangedProjectFileIsReadOnSaveChangeAndOpen) {
  fs::path root = fs::temp_directory_path() / ("pf-lsp-nowatch-" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root);
  std::ofstream(root / "pyproject.toml") << "[tool.preflight]\nignore = []\n";
  std::string uri = lsp::path_to_uri(root / "train.py");
  auto lsp = start();
  json caps = testing::neovim07_capabilities();
  ASSERT_FALSE(caps["workspace"].contains("didChangeWatchedFiles"));
  lsp.initialize(caps);
  lsp.notify("textDocument/didOpen", open_params(uri, kBuggy));
  ASSERT_NE(find_code(lsp.wait_diagnostics(uri, 1), "TG001"), nullptr);
  auto published = [&](bool with_tg001, int version = -1) {  // -1: any version
    return lsp.wait_notification("textDocument/publishDiagnostics", [&](const json& p) {
      return p["uri"] == uri && (find_code(p["diagnostics"], "TG001") != nullptr) == with_tg001 &&
             (version < 0 || p.value("version", -1) == version);
    });
  };

  std::ofstream(root / "pyproject.toml") << "[tool.preflight]\nignore = [\"TG001\"]\n";
  lsp.notify("textDocument/didSave", {{"textDocument", {{"uri", uri}}}});
  EXPECT_TRUE(published(false)) << "didSave did not re-read pyproject.toml";

  std::ofstream(root / "pyproject.toml") << "[tool.preflight]\nignore = []  # TG001 back\n";
  lsp.notify("textDocument/didChange", {{"textDocument", {{"uri", uri}, {"version", 2}}},
                                        {"contentChanges", json::array({{{"text", kBuggy + "\n"}}})}});
  EXPECT_TRUE(published(true)) << "didChange did not re-read pyproject.toml";

  lsp.notify("textDocument/didClose", {{"textDocument", {{"uri", uri}}}});
  std::ofstream(root / ".preflight.toml") << "ignore = [\"TG001\"]\n";  // a new, nearer-ranked file
  lsp.notify("textDocument/didOpen", open_params(uri, kBuggy, 3));
  EXPECT_TRUE(published(false, 3)) << "reopening did not read the new .preflight.toml";
  fs::remove_all(root);
}

TEST(LspConfiguration, PullsWorkspaceConfigurationAndRegistersWatchers) {
  auto lsp = start();
  lsp.answer_server_request = [](const json& r) -> json {
    if (r["method"] == "workspace/configuration") return json::array({{{"ignore", {"TG001"}}}});
    return nullptr;
  };
  lsp.initialize(testing::vscode_capabilities());
  lsp.notify("textDocument/didOpen", open_params(kUri, kBuggy));
  lsp.drain(300);  // answers the server's requests
  bool watched = false, configured = false;
  for (const json& r : lsp.server_requests) {
    if (r["method"] == "client/registerCapability") watched = true;
    if (r["method"] == "workspace/configuration") configured = true;
  }
  EXPECT_TRUE(watched);
  EXPECT_TRUE(configured);
  json pulled = lsp.request("textDocument/diagnostic", {{"textDocument", {{"uri", kUri}}}})["result"];
  EXPECT_EQ(find_code(pulled["items"], "TG001"), nullptr) << pulled.dump(2);
}

// Issue 23: the workspace folders are one project, as the files of a CLI run are. A routine
// the open file never calls, which another file of the folder runs only under no_grad, is not
// reported once the folder is indexed; when that file is saved calling it with autograd on,
// the warning comes back.
TEST(LspDiagnostics, TheWorkspaceFolderIsOneProject) {
  fs::path root = fs::temp_directory_path() / ("pf-lsp-project-" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root);
  const std::string evaluation =
      "import torch\n\n\ndef evaluate(model, loader):\n    model.eval()\n    hits = 0\n"
      "    for x, y in loader:\n        out = model(x)\n        hits += (out.argmax(1) == y).sum().item()\n"
      "    return hits\n";
  std::ofstream(root / "evaluation.py") << evaluation;
  std::ofstream(root / "main.py") << "import torch\nfrom evaluation import evaluate\nwith torch.no_grad():\n    evaluate(m, v)\n";
  std::string uri = lsp::path_to_uri(root / "evaluation.py");
  auto lsp = start();
  lsp.initialize(testing::neovim07_capabilities(), {{"workspaceFolders", {{{"uri", lsp::path_to_uri(root)}, {"name", "ws"}}}}});
  lsp.notify("textDocument/didOpen", open_params(uri, evaluation));
  auto quiet = lsp.wait_notification("textDocument/publishDiagnostics", [&](const json& p) {
    return p["uri"] == uri && find_code(p["diagnostics"], "TG002") == nullptr;
  });
  ASSERT_TRUE(quiet);
  std::ofstream(root / "main.py") << "import torch\nfrom evaluation import evaluate\nevaluate(m, v)\n";
  lsp.notify("textDocument/didSave", {{"textDocument", {{"uri", lsp::path_to_uri(root / "main.py")}}}});
  auto back = lsp.wait_notification("textDocument/publishDiagnostics", [&](const json& p) {
    return p["uri"] == uri && find_code(p["diagnostics"], "TG002") != nullptr;
  });
  ASSERT_TRUE(back);
  EXPECT_EQ((*find_code((*back)["diagnostics"], "TG002"))["severity"], 2);  // a warning
  fs::remove_all(root);
}

}  // namespace
}  // namespace preflight
