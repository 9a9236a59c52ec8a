// Fuzz target: the LSP message dispatcher. An in-process LanguageServer (the one `preflight
// lsp` runs) gets a session built around the input: initialize (the input's JSON merged
// into the params), initialized, an open document, then the input as the params of every
// method it handles (as given, and aimed at the open document; a JSON-RPC message gives its
// params), then the input as a raw message body, then shutdown and exit. The server must not crash or hang, every message it
// writes must be valid JSON-RPC, and every request must get exactly one response.
//
// Sandbox: any "file://" URI in the input is rewritten into a private temporary directory,
// so the server never reads (workspace scan, diagnostic pull from disk, config lookup)
// outside it: file:///dev/stdin or a scan of / would make the target hang or crawl.
#include <stdlib.h>

#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <spdlog/sinks/null_sink.h>
#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include "fuzz_check.h"
#include "json_mutator.h"
#include "protocol/jsonrpc.h"
#include "server/lsp/server.h"

namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;
namespace fuzz = preflight::fuzz;
namespace protocol = preflight::protocol;

const std::string kTrainPy =
    "import torch\n"
    "import torch.nn.functional as F\n"
    "\n"
    "def train(model, loader, optimizer):\n"
    "    model.train()\n"
    "    losses = []\n"
    "    for xb, yb in loader:\n"
    "        loss = F.cross_entropy(model(xb), yb)\n"
    "        loss.backward()\n"
    "        optimizer.step()\n"
    "        print(\"é 日本 😀\"); losses.append(loss)\n"
    "    return losses\n"
    "\n"
    "model = torch.nn.Linear(512, 512).cuda()\n"
    "train(model, [], torch.optim.AdamW(model.parameters()))\n";

// The private directory every URI points into; holds one Python file for the workspace scan.
const fs::path& sandbox() {
  static const fs::path dir = [] {
    std::string templ = (fs::temp_directory_path() / "preflight-fuzz-XXXXXX").string();
    fuzz::require(::mkdtemp(templ.data()) != nullptr, "mkdtemp failed");
    std::ofstream(fs::path(templ) / "train.py") << kTrainPy;
    return fs::path(templ);
  }();
  static const bool cleanup_registered = [] {  // every replay and fuzz run would leave one behind
    return std::atexit([] {
      std::error_code ignored;
      fs::remove_all(dir, ignored);
    }) == 0;
  }();
  (void)cleanup_registered;
  return dir;
}

std::string sandbox_uri() { return "file://" + sandbox().string(); }
std::string document_uri() { return sandbox_uri() + "/train.py"; }

// A file URI that stays inside the sandbox: the input's name reduced to [A-Za-z0-9._-], so
// neither "/" nor a percent escape nor ".." can climb out.
std::string confine_uri(const std::string& uri) {
  if (!uri.starts_with("file://")) return uri;  // other schemes never reach the disk
  if (uri == document_uri() || uri == sandbox_uri()) return uri;
  std::string name;
  for (unsigned char c : uri.substr(7))
    if (std::isalnum(c) || c == '.' || c == '_' || c == '-') name += static_cast<char>(c);
  while (name.starts_with(".")) name.erase(0, 1);
  return sandbox_uri() + "/" + name;
}

void confine(json& value) {
  if (value.is_object()) {
    for (auto& [key, item] : value.items()) {
      if (item.is_string() && (key == "uri" || key == "rootUri" || key == "scopeUri"))
        item = confine_uri(item.get<std::string>());
      else if (key == "rootPath" && item.is_string())
        item = sandbox().string();
      else
        confine(item);
    }
  } else if (value.is_array()) {
    for (json& item : value) confine(item);
  }
}

const json kInitializeId = "fuzz-session-initialize";

// What a JSON-RPC 2.0 message the server writes must look like.
void check_jsonrpc(const json& m) {
  std::string text = m.dump(-1, ' ', false, json::error_handler_t::replace);
  fuzz::require(m.is_object() && m.value("jsonrpc", "") == "2.0", "message without jsonrpc 2.0", text);
  bool has_method = m.contains("method");
  if (has_method) {
    fuzz::require(m["method"].is_string(), "method is not a string", text);
    if (m.contains("params")) fuzz::require(m["params"].is_object() || m["params"].is_array(), "bad params", text);
    return;
  }
  fuzz::require(m.contains("id"), "response without id", text);
  const json& id = m["id"];
  fuzz::require(id.is_null() || id.is_string() || id.is_number_integer(), "response id of a bad type", text);
  fuzz::require(m.contains("result") != m.contains("error"), "response needs exactly one of result / error", text);
  if (m.contains("error")) {
    const json& e = m["error"];
    fuzz::require(e.is_object() && e.contains("code") && e["code"].is_number_integer() && e.contains("message") &&
                      e["message"].is_string(),
                  "error object malformed", text);
  }
  // Every reply must survive the wire: framing and re-reading it gives the same message.
  protocol::FrameReader reader;
  reader.feed(protocol::frame(m));
  auto frame = reader.next();
  fuzz::require(frame && frame->error.empty(), "a reply does not frame", text);
  fuzz::require(!json::parse(frame->body, nullptr, false).is_discarded(), "a framed reply is not JSON", text);
}

// The client side of one session: sends bodies, answers the server's requests, and tracks
// which of its own requests are still unanswered.
class Session {
 public:
  explicit Session(json client_config) : client_config_(std::move(client_config)) {
    preflight::lsp::ServerOptions options;
    options.debounce_ms = 0;
    options.workers = 1;
    options.log = std::make_shared<spdlog::logger>("fuzz", std::make_shared<spdlog::sinks::null_sink_mt>());
    server_ = std::make_unique<preflight::lsp::LanguageServer>(options, [this](const json& m) { on_write(m); });
  }

  void request(const std::string& method, json params) { request(method, std::move(params), next_id_++); }
  void request(const std::string& method, json params, json id) {
    raw(protocol::dump(protocol::make_request(id, method, std::move(params))));
  }
  void notify(const std::string& method, json params) {
    raw(protocol::dump(protocol::make_notification(method, std::move(params))));
  }
  // A body as it came off the wire. A request, or an invalid message with a usable id, is
  // answered under that id; the classification is protocol::parse_message's (it also reads
  // what json::parse refuses: lone surrogate escapes, bodies nested past the limit).
  void raw(const std::string& body) {
    protocol::Message message = protocol::parse_message(body);
    if (auto* request = std::get_if<protocol::Request>(&message)) outstanding_.insert(request->id.dump());
    if (auto* invalid = std::get_if<protocol::Invalid>(&message); invalid && !invalid->id.is_null())
      outstanding_.insert(invalid->id.dump());
    server_->receive(body);
    pump();
  }

  // Waits (answering the server's requests) until every request has its response.
  void settle() {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(8);
    while (!outstanding_.empty()) {
      if (!pump_until(deadline)) fuzz::fail("the server left requests unanswered for 8 s", pending_ids());
    }
  }

  // Whether the session's initialize succeeded: the input may cancel it ($/cancelRequest
  // with its id arrives while it is still queued), and a server never initialized exits with 1.
  // Its id is one no seed or mutation uses, so an input's answer cannot pass for it.
  bool initialized() const { return initialized_; }

  int finish() {
    notify("exit", nullptr);
    return server_->wait_for_exit();
  }

 private:
  json client_config_;
  int next_id_ = 1;
  bool initialized_ = false;
  std::multiset<std::string> outstanding_;  // ids (as JSON text) of requests sent, unanswered
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<json> inbox_;
  // Last, so it is destroyed first: its threads write into the members above.
  std::unique_ptr<preflight::lsp::LanguageServer> server_;

  void on_write(const json& m) {
    check_jsonrpc(m);
    std::lock_guard lock(mu_);
    inbox_.push_back(m);
    cv_.notify_all();
  }

  std::string pending_ids() const {
    std::string out;
    for (const auto& id : outstanding_) out += id + " ";
    return out;
  }

  // Handles what arrived so far; returns false when the deadline passed with nothing new.
  bool pump_until(std::chrono::steady_clock::time_point deadline) {
    {
      std::unique_lock lock(mu_);
      if (!cv_.wait_until(lock, deadline, [this] { return !inbox_.empty(); })) return false;
    }
    pump();
    return true;
  }

  void pump() {
    for (;;) {
      json m;
      {
        std::lock_guard lock(mu_);
        if (inbox_.empty()) return;
        m = std::move(inbox_.front());
        inbox_.pop_front();
      }
      handle(m);
    }
  }

  void handle(const json& m) {
    if (m.contains("method")) {
      if (m.contains("id")) answer_server_request(m);
      return;
    }
    if (m["id"].is_null()) return;  // a parse error: no request of ours to match
    auto it = outstanding_.find(m["id"].dump());
    fuzz::require(it != outstanding_.end(), "a response to no outstanding request", m.dump());
    outstanding_.erase(it);
    if (m["id"] == kInitializeId) initialized_ = initialized_ || m.contains("result");
  }

  // workspace/configuration gets the input's JSON as the settings; everything else null.
  void answer_server_request(const json& m) {
    json result = m["method"] == "workspace/configuration" ? json::array({client_config_}) : json(nullptr);
    server_->receive(protocol::dump(protocol::make_response(m["id"], std::move(result))));
  }
};

json initialize_params(const json& input) {
  json params = {{"processId", nullptr},
                 {"rootUri", sandbox_uri()},
                 {"capabilities",
                  {{"textDocument",
                    {{"publishDiagnostics", {{"relatedInformation", true}}},
                     {"codeAction", {{"codeActionLiteralSupport", {{"codeActionKind", {{"valueSet", {"quickfix", "source"}}}}}}}},
                     {"hover", {{"contentFormat", {"markdown"}}}}}},
                   {"workspace", {{"configuration", true}}},
                   {"window", {{"workDoneProgress", true}}}}}};
  if (input.is_object())
    for (const auto& [key, value] : input.items()) params[key] = value;
  confine(params);
  if (params.contains("processId")) params["processId"] = nullptr;  // no parent watch: no timer
  if (params.contains("initializationOptions") && params["initializationOptions"].is_object())
    params["initializationOptions"]["debounceMs"] = 0;
  return params;
}

// The input aimed at the open document: its textDocument replaced by the document's.
json aimed(const json& input) {
  json params = input.is_object() ? input : json::object();
  json doc = params.contains("textDocument") && params["textDocument"].is_object() ? params["textDocument"] : json::object();
  doc["uri"] = document_uri();
  params["textDocument"] = doc;
  return params;
}

const std::vector<std::string> kRequests = {
    "textDocument/diagnostic", "textDocument/codeAction", "textDocument/hover", "textDocument/codeLens",
    "workspace/executeCommand", "codeAction/resolve", "workspace/diagnostic", "textDocument/unknown"};
const std::vector<std::string> kNotifications = {
    "textDocument/didChange", "textDocument/didSave", "workspace/didChangeConfiguration",
    "workspace/didChangeWatchedFiles", "workspace/didChangeWorkspaceFolders", "$/cancelRequest",
    "textDocument/didOpen", "$/unknown", "textDocument/didClose"};

// The server refuses bodies deeper than protocol::kMaxNesting while parsing; the harness
// copies, dumps and walks (confine) the input recursively, so it keeps deeper ones as text.
constexpr int kMaxHarnessDepth = 1000;
constexpr std::size_t kMaxTextParams = 64 * 1024;

// A JSON-RPC message's params (what the typed mutator and the message seeds give); any other
// input is itself the params.
json params_of(const json& input) {
  if (input.is_object() && input.contains("method") && input.contains("params")) return input["params"];
  return input;
}

}  // namespace

// Typed mutations of the input as a JSON-RPC message (json_mutator.h); bytes that are no
// JSON, and one mutation in four, get libFuzzer's byte mutations.
#ifdef PREFLIGHT_LIBFUZZER
extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  std::optional<std::string> mutated;
  if (fuzz::typed_mutations_on() && seed % 4 != 0)
    mutated = fuzz::mutate_json_body(std::string_view(reinterpret_cast<const char*>(data), size), seed, max_size);
  return fuzz::emit_or_byte_mutate(data, size, max_size, mutated);
}
#endif

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string body(reinterpret_cast<const char*>(data), size);
  // Nested deeper than the harness's own recursive copies and dumps may go, or not JSON:
  // the text itself is the params value (a string) of each method, and the raw message.
  std::optional<json> parsed = fuzz::parse_shallow(body, kMaxHarnessDepth);
  bool is_json = parsed.has_value();
  json input = is_json ? std::move(*parsed) : json(body);
  confine(input);
  json params = params_of(input);
  // Text as params is refused before any handler (params must be an object or an array):
  // a large one is sent once, as the raw message, not to every method.
  bool skip_methods = !is_json && body.size() > kMaxTextParams;

  Session session(params);
  session.request("initialize", initialize_params(params), kInitializeId);
  session.notify("initialized", json::object());
  session.notify("textDocument/didOpen",
                 {{"textDocument", {{"uri", document_uri()}, {"languageId", "python"}, {"version", 1}, {"text", kTrainPy}}}});
  for (const std::string& method : kRequests) {
    if (!skip_methods) session.request(method, params);
    session.request(method, aimed(params));
  }
  for (const std::string& method : kNotifications) {
    if (!skip_methods) session.notify(method, params);
    if (method != "textDocument/didClose") session.notify(method, aimed(params));
  }
  session.request("textDocument/diagnostic", aimed(json::object()));  // after the edits
  session.raw(is_json ? protocol::dump(input) : body);
  // An `exit` before shutdown legitimately ends with 1 (LSP 3.17 §exit), and so does a
  // session whose initialize was cancelled (shutdown is then refused).
  protocol::Message raw_message = protocol::parse_message(is_json ? protocol::dump(input) : body);
  auto* note = std::get_if<protocol::Notification>(&raw_message);
  bool raw_exit = note && note->method == "exit";
  session.request("shutdown", nullptr);
  session.settle();
  session.request("textDocument/hover", aimed(params));  // refused after shutdown, still answered
  session.settle();
  int code = session.finish();
  fuzz::require(code == (raw_exit || !session.initialized() ? 1 : 0), "wrong exit status", std::to_string(code));
  return 0;
}
