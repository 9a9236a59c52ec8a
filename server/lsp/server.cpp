#include "server/lsp/server.h"

#include <signal.h>
#include <unistd.h>

#include <asio.hpp>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <optional>
#include <vector>

#include "protocol/jsonrpc.h"
#include "rules/incremental.h"
#include "server/cli/config.h"
#include "server/cli/file_io.h"
#include "server/cli/project_scan.h"
#include "server/cli/time_budget.h"
#include "server/cli/version.h"
#include "server/lsp/client_capabilities.h"
#include "server/lsp/features.h"
#include "server/lsp/settings.h"
#include "server/lsp/snapshot.h"
#include "server/lsp/uri.h"
#include "server/lsp/workspace_scan.h"

namespace preflight::lsp {

namespace fs = std::filesystem;
using json = nlohmann::json;
using protocol::error_code::kInternalError;
using protocol::error_code::kInvalidParams;
using protocol::error_code::kInvalidRequest;
using protocol::error_code::kMethodNotFound;
using protocol::error_code::kRequestCancelled;
using protocol::error_code::kServerNotInitialized;

namespace {

using Executor = asio::thread_pool::executor_type;
using Strand = asio::strand<Executor>;
using CancelFlag = std::shared_ptr<std::atomic<bool>>;

// A request's params that do not have the expected shape.
struct BadParams : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Typed reads of params. A value of the wrong type is BadParams, which the guard every
// handler runs behind answers with InvalidParams; nothing reads params any other way that
// can throw (nlohmann's get / value on a mismatched type would, from a task the guard
// does not see, end the process).
const json& require_object(const json& params, const char* key) {
  if (!params.is_object() || !params.contains(key) || !params[key].is_object())
    throw BadParams(std::string("params.") + key + " must be an object");
  return params[key];
}

// An int held as the JSON holds it; nullopt for anything else (get<int>() of 2^32 + 7 is 7).
std::optional<int> int_value(const json& v) {
  if (v.is_number_unsigned()) return v.get<uint64_t>() <= uint64_t(std::numeric_limits<int>::max())
                                         ? std::optional(static_cast<int>(v.get<uint64_t>())) : std::nullopt;
  if (v.is_number_integer() && v.get<int64_t>() >= std::numeric_limits<int>::min() &&
      v.get<int64_t>() <= std::numeric_limits<int>::max())
    return static_cast<int>(v.get<int64_t>());
  return std::nullopt;
}

// `object[key]` as an int: nullopt when absent; anything but an integer an int holds
// (a string, null, an array, an object, a fraction, a boolean) is BadParams.
std::optional<int> optional_int(const json& object, const char* key, std::string_view where) {
  if (!object.is_object()) return std::nullopt;
  auto it = object.find(key);
  if (it == object.end()) return std::nullopt;
  if (std::optional<int> v = int_value(*it)) return v;
  throw BadParams(std::string(where) + "." + key + " must be an integer");
}

std::string require_uri(const json& params) {
  const json& doc = require_object(params, "textDocument");
  if (!doc.contains("uri") || !doc["uri"].is_string()) throw BadParams("params.textDocument.uri must be a string");
  return doc["uri"].get<std::string>();
}

// The VRAM action is a `refactor.rewrite`: offered when the client filters nothing or asks
// for that kind (or a prefix of it).
bool wants_refactor(const json& params) {
  if (!params.contains("context") || !params["context"].is_object() || !params["context"].contains("only") ||
      !params["context"]["only"].is_array())
    return true;
  for (const json& k : params["context"]["only"]) {
    if (!k.is_string()) continue;
    const std::string prefix = k.get<std::string>();
    if (prefix == "refactor" || prefix == "refactor.rewrite") return true;
  }
  return false;
}

int version_of(const json& text_document) {
  auto it = text_document.find("version");
  return it != text_document.end() ? int_value(*it).value_or(0) : 0;
}

}  // namespace

// Orders the diagnostics published for one uri across its documents: each didOpen starts a
// new generation, and a document publishes only while its generation is the newest, under
// the channel's lock. The close of a document whose strand is still busy analysing must not
// clear the diagnostics a reopened document of the same uri has already published.
struct PublishChannel {
  std::mutex mu;
  int generation = 0;  // the newest open's; written under mu
};

// One open document. The strand owns everything below `strand`; `newest_version` is written
// by the control strand when a change arrives, so a running analysis can see it is stale.
struct Document {
  Document(std::string uri_, const Executor& ex) : uri(std::move(uri_)), strand(asio::make_strand(ex)), debounce(strand) {}

  const std::string uri;
  std::optional<fs::path> path;
  Strand strand;
  asio::steady_timer debounce;
  std::atomic<int> newest_version{0};

  std::shared_ptr<PublishChannel> channel;  // shared by every document of this uri
  int generation = 0;                       // this open's, in `channel`

  // The text is parsed only within the CLI's size cap: `analysis` holds it then; above the
  // cap `analysis` is null and `text_over_cap` keeps the text, so edits that shrink it work.
  std::unique_ptr<rules::DocumentAnalysis> analysis;
  std::string text_over_cap;
  int version = 0;
  std::shared_ptr<const EffectiveSettings> settings;
  std::shared_ptr<const Snapshot> snapshot;
  int published_version = -1;
  std::string published_id;
  bool closed = false;
};

struct LanguageServer::Impl {
  enum class Phase { Uninitialized, Running, ShutDown };

  Impl(ServerOptions o, Writer w)
      : options(std::move(o)), writer(std::move(w)), pool(std::max(1u, options.workers)),
        control(asio::make_strand(pool.get_executor())), parent_watch(control) {}

  ServerOptions options;
  Writer writer;
  std::mutex write_mu;
  asio::thread_pool pool;
  Strand control;
  std::atomic<bool> stopping{false};

  // Control strand.
  Phase phase = Phase::Uninitialized;
  std::shared_ptr<const ClientCapabilities> caps = std::make_shared<ClientCapabilities>();
  ClientSettings init_settings, workspace_settings;
  std::map<fs::path, server::ConfigResult> configs;  // by directory searched from
  std::map<fs::path, server::ConfigStamp> config_stamps;  // what each search saw
  std::map<std::string, std::shared_ptr<Document>> documents;
  // Kept after a close: a reopen's generation must exceed the closed document's. One small
  // entry per uri ever opened.
  std::map<std::string, std::shared_ptr<PublishChannel>> channels;
  std::vector<fs::path> folders;
  // The workspace project (analysis/project_index.h): every Python file of the folders as
  // saved on disk, summarised on the pool; an open document's own entry is never read for it,
  // so its live text decides for itself. Re-read whole when the folders change, one file's
  // entry when that file is saved (files created or deleted meanwhile wait for the next
  // re-read); each new index re-checks the open documents.
  std::shared_ptr<const analysis::ProjectIndex> project;
  std::map<std::string, std::shared_ptr<const analysis::FileCalls>> project_files;  // by absolute normal path
  int project_generation = 0;  // a full re-index under way drops older summaries
  int index_version = 0;       // only the newest index built on the pool is taken
  asio::steady_timer parent_watch;
  int parent_pid = 0;
  int settings_generation = 0;

  // Requests the server sent, waiting for the client's answer (any thread).
  std::mutex client_mu;
  int next_client_id = 1;
  std::map<std::string, std::function<void(const protocol::Response&)>> client_requests;

  // Cancellation flags of the client's requests in flight (any thread).
  std::mutex cancel_mu;
  std::map<std::string, CancelFlag> cancels;

  // Exit.
  std::mutex exit_mu;
  std::condition_variable exit_cv;
  std::optional<int> exit_code;

  // --- output ---------------------------------------------------------------------------

  void send(const json& message) {
    std::lock_guard lock(write_mu);
    try {
      writer(message);
    } catch (const std::exception& e) {  // the client is gone: nobody is left to answer
      options.log->error("cannot write to the client: {}", e.what());
      finish(1);
    }
  }

  void reply(const json& id, json result) {
    forget_cancel(id);
    send(protocol::make_response(id, std::move(result)));
  }

  void reply_error(const json& id, int code, std::string_view message) {
    forget_cancel(id);
    send(protocol::make_error(id, code, message));
  }

  void notify(std::string_view method, json params) { send(protocol::make_notification(method, std::move(params))); }

  // window/logMessage: what the user must see (configuration errors, a lost edit).
  void tell_user(int type, const std::string& message) {
    options.log->info("logMessage: {}", message);
    notify("window/logMessage", {{"type", type}, {"message", message}});
  }

  void request_client(std::string_view method, json params, std::function<void(const protocol::Response&)> done) {
    std::string id;
    {
      std::lock_guard lock(client_mu);
      id = "preflight-" + std::to_string(next_client_id++);
      client_requests[json(id).dump()] = std::move(done);
    }
    send(protocol::make_request(id, method, std::move(params)));
  }

  // --- cancellation ---------------------------------------------------------------------

  CancelFlag track_cancel(const json& id) {
    auto flag = std::make_shared<std::atomic<bool>>(false);
    std::lock_guard lock(cancel_mu);
    cancels[id.dump()] = flag;
    return flag;
  }

  void forget_cancel(const json& id) {
    std::lock_guard lock(cancel_mu);
    cancels.erase(id.dump());
  }

  void cancel(const json& params) {
    if (!params.is_object() || !params.contains("id")) return;
    std::lock_guard lock(cancel_mu);
    if (auto it = cancels.find(params["id"].dump()); it != cancels.end()) it->second->store(true);
  }

  // --- exit -----------------------------------------------------------------------------

  void finish(int code) {
    std::lock_guard lock(exit_mu);
    if (!exit_code) exit_code = code;
    exit_cv.notify_all();
  }

  int exit_status_now() const { return phase == Phase::ShutDown ? 0 : 1; }

  // --- bounded intake ------------------------------------------------------------------

  // Work made from client messages and not yet done (control-strand handlers, document-strand
  // edits and requests). While it is at the limit the reader stops reading, so a client that
  // sends faster than the server works is held back by its own pipe instead of growing the
  // server's queues without bound. Nothing the server runs waits for the reader, so the work
  // always drains.
  static constexpr int kMaxPendingWork = 1024;
  std::mutex intake_mu;
  std::condition_variable intake_cv;
  int pending_work = 0;

  // `work` made from a client message, counted against the intake limit and run behind the
  // guard (`id`: the request it answers, null for a notification).
  template <typename Executor, typename Work>
  void post_work(Executor& executor, std::string what, json id, Work work) {
    {
      std::lock_guard lock(intake_mu);
      ++pending_work;
    }
    asio::post(executor, [this, what = std::move(what), id = std::move(id), work = std::move(work)]() mutable {
      struct Done {
        Impl* impl;
        ~Done() { impl->work_done(); }
      } done{this};
      run_guarded(what, id, work);
    });
  }

  // Server-side work (timers, answers to the server's own requests, refreshes), behind the
  // same guard.
  template <typename Executor, typename Work>
  void post_guarded(Executor& executor, std::string what, json id, Work work) {
    asio::post(executor, [this, what = std::move(what), id = std::move(id), work = std::move(work)]() mutable {
      run_guarded(what, id, work);
    });
  }

  // The guard every handler and every task runs behind. A handler that throws would end the
  // server (asio's pool calls std::terminate): params of the wrong shape (BadParams) answer
  // the request with InvalidParams; any other exception is logged and answers it with
  // InternalError; a notification's is logged. The server goes on.
  template <typename Work>
  void run_guarded(std::string_view what, const json& id, Work&& work) noexcept {
    try {
      try {
        work();
      } catch (const BadParams& e) {
        options.log->warn("{}: invalid params: {}", what, e.what());
        if (!id.is_null()) reply_error(id, kInvalidParams, e.what());
      } catch (const std::exception& e) {
        options.log->error("{}: internal error: {}", what, e.what());
        if (!id.is_null()) reply_error(id, kInternalError, std::string(what) + " failed: " + e.what());
      } catch (...) {
        options.log->error("{}: internal error", what);
        if (!id.is_null()) reply_error(id, kInternalError, std::string(what) + " failed");
      }
    } catch (...) {  // the error reply or the log itself failed: nothing is left to tell
    }
  }

  void work_done() {
    {
      std::lock_guard lock(intake_mu);
      --pending_work;
    }
    intake_cv.notify_all();
  }

  void wait_for_room() {
    std::unique_lock lock(intake_mu);
    intake_cv.wait(lock, [this] { return pending_work < kMaxPendingWork || stopping.load(); });
  }

  // --- message intake (reader thread) ---------------------------------------------------

  void receive(std::string_view body) {
    wait_for_room();
    protocol::Message message = protocol::parse_message(body);
    if (auto* invalid = std::get_if<protocol::Invalid>(&message)) {
      options.log->warn("rejected message ({}): {}", invalid->code, invalid->message);
      send(protocol::make_error(invalid->id, invalid->code, invalid->message));
      return;
    }
    if (auto* response = std::get_if<protocol::Response>(&message)) {
      on_client_response(std::move(*response));
      return;
    }
    if (auto* note = std::get_if<protocol::Notification>(&message)) {
      if (note->method == "$/cancelRequest") {
        cancel(note->params);
        return;
      }
      std::string method = note->method;
      post_work(control, std::move(method), nullptr, [this, n = std::move(*note)]() mutable { on_notification(n); });
      return;
    }
    auto& request = std::get<protocol::Request>(message);
    CancelFlag flag = track_cancel(request.id);
    std::string method = request.method;
    json id = request.id;
    post_work(control, std::move(method), std::move(id),
              [this, r = std::move(request), flag]() mutable { on_request(r, flag); });
  }

  void on_client_response(protocol::Response response) {
    std::function<void(const protocol::Response&)> done;
    {
      std::lock_guard lock(client_mu);
      auto it = client_requests.find(response.id.dump());
      if (it == client_requests.end()) return;
      done = std::move(it->second);
      client_requests.erase(it);
    }
    post_guarded(control, "the answer to a server request", nullptr, [done = std::move(done), r = std::move(response)] { done(r); });
  }

  // --- requests (control strand) --------------------------------------------------------

  void on_request(protocol::Request& r, const CancelFlag& cancelled) {
    if (phase == Phase::Uninitialized && r.method != "initialize")
      return reply_error(r.id, kServerNotInitialized, "the server has not been initialized");
    if (phase == Phase::ShutDown) return reply_error(r.id, kInvalidRequest, "the server is shutting down");
    if (cancelled->load()) return reply_error(r.id, kRequestCancelled, "cancelled");
    const std::string& m = r.method;
    if (m == "initialize") return initialize(r);
    if (m == "shutdown") return shutdown(r);
    if (m == "textDocument/diagnostic") return document_request(r, cancelled, &Impl::pull_diagnostics);
    if (m == "textDocument/codeAction") return document_request(r, cancelled, &Impl::code_action);
    if (m == "textDocument/hover") return document_request(r, cancelled, &Impl::hover_request);
    if (m == "textDocument/codeLens") return document_request(r, cancelled, &Impl::code_lens_request);
    if (m == "workspace/executeCommand") return execute_command(r, cancelled);
    if (m == "codeAction/resolve") return resolve_code_action(r, cancelled);
    if (m == "workspace/diagnostic") return workspace_diagnostics(r, cancelled);
    reply_error(r.id, kMethodNotFound, "method not supported: " + m);
  }

  void initialize(const protocol::Request& r) {
    if (phase != Phase::Uninitialized) return reply_error(r.id, kInvalidRequest, "initialize was already received");
    const json& p = r.params.is_object() ? r.params : json::object();
    caps = std::make_shared<ClientCapabilities>(parse_client_capabilities(p));
    std::vector<std::string> problems;
    if (p.contains("initializationOptions")) {
      const json& init = p["initializationOptions"];
      init_settings = parse_client_settings(init, problems);
      if (std::optional<int> debounce = parse_debounce_ms(init, problems)) options.debounce_ms = *debounce;
    }
    read_workspace_folders(p);
    watch_parent(p);
    phase = Phase::Running;
    reply(r.id, {{"capabilities", server_capabilities()},
                 {"serverInfo", {{"name", "preflight"}, {"version", std::string(server::preflight_version())}}}});
    for (const auto& problem : problems) tell_user(2, problem);
    options.log->info("initialized: encoding {}, {} diagnostics, relatedInformation {}", encoding_name(caps->encoding),
                      caps->pull_diagnostics ? "pull" : "push", caps->related_information);
  }

  json server_capabilities() const {
    return {
        {"positionEncoding", encoding_name(caps->encoding)},
        {"textDocumentSync", {{"openClose", true}, {"change", 2}, {"save", {{"includeText", false}}}}},
        {"diagnosticProvider", {{"identifier", "preflight"}, {"interFileDependencies", false}, {"workspaceDiagnostics", true}}},
        {"codeActionProvider", {{"codeActionKinds", json::array({"quickfix", kFixAllKind})}, {"resolveProvider", true}}},
        {"hoverProvider", true},
        {"codeLensProvider", {{"resolveProvider", false}}},
        {"executeCommandProvider", {{"commands", json::array({kShowVramReport})}}},
        {"workspace", {{"workspaceFolders", {{"supported", true}, {"changeNotifications", true}}}}},
    };
  }

  void read_workspace_folders(const json& p) {
    if (p.contains("workspaceFolders") && p["workspaceFolders"].is_array()) {
      for (const json& f : p["workspaceFolders"])
        if (f.is_object() && f.contains("uri") && f["uri"].is_string())
          if (auto path = uri_to_path(f["uri"].get<std::string>())) folders.push_back(*path);
    } else if (p.contains("rootUri") && p["rootUri"].is_string()) {
      if (auto path = uri_to_path(p["rootUri"].get<std::string>())) folders.push_back(*path);
    }
  }

  // The client's death ends the server (LSP: processId), checked once a second.
  void watch_parent(const json& p) {
    if (!p.contains("processId") || p["processId"].is_null()) return;
    std::optional<int> pid = int_value(p["processId"]);
    if (!pid || *pid <= 0) {
      // A wrapped value would watch some other process and exit when it ends.
      options.log->warn("initialize: processId {} is no process id; the client's exit is not watched",
                        p["processId"].dump());
      return;
    }
    parent_pid = *pid;
    schedule_parent_check();
  }

  void schedule_parent_check() {
    parent_watch.expires_after(std::chrono::seconds(1));
    parent_watch.async_wait([this](const std::error_code& ec) {
      if (ec || stopping) return;
      if (::kill(parent_pid, 0) != 0 && errno == ESRCH) {
        options.log->warn("client process {} is gone; exiting", parent_pid);
        return finish(exit_status_now());
      }
      schedule_parent_check();
    });
  }

  void shutdown(const protocol::Request& r) {
    phase = Phase::ShutDown;
    parent_watch.cancel();
    reply(r.id, nullptr);
  }

  // Runs `handler` on the document's strand (after every edit sent before the request), with
  // an analysed snapshot of its current version. A document that is not open is read from
  // disk for a diagnostic pull, and answered with nothing otherwise.
  using DocumentHandler = void (Impl::*)(const protocol::Request&, const std::shared_ptr<const Snapshot>&);

  void document_request(protocol::Request& r, const CancelFlag& cancelled, DocumentHandler handler) {
    std::string uri = require_uri(r.params);
    auto it = documents.find(uri);
    if (it == documents.end()) {
      std::string not_read;
      auto snapshot = r.method == "textDocument/diagnostic" ? snapshot_from_disk(uri, not_read) : nullptr;
      if (!not_read.empty())
        return reply(r.id, {{"kind", "full"}, {"items", json::array({not_analysed_diagnostic(not_read)})}});
      if (!snapshot) return reply(r.id, r.method == "textDocument/codeAction" ? json::array() : json(nullptr));
      return (this->*handler)(r, snapshot);
    }
    std::shared_ptr<Document> doc = it->second;
    std::string method = r.method;
    json id = r.id;
    post_work(doc->strand, std::move(method), std::move(id), [this, doc, r = std::move(r), cancelled, handler] {
      if (cancelled->load()) return reply_error(r.id, kRequestCancelled, "cancelled");
      auto snapshot = current_snapshot(*doc, cancelled);
      if (!snapshot) return reply_error(r.id, kRequestCancelled, "cancelled");
      (this->*handler)(r, snapshot);
    });
  }

  // The snapshot of an unopened file, read from disk. A file that exists but cannot be read
  // (unreadable, over the size cap) gives no snapshot and the reason in `not_read`.
  std::shared_ptr<const Snapshot> snapshot_from_disk(const std::string& uri, std::string& not_read) {
    auto path = uri_to_path(uri);
    if (!path) return nullptr;
    std::error_code ec;
    if (!fs::exists(*path, ec)) return nullptr;
    server::ReadResult read = read_document_file(*path);
    if (!read.text) {
      options.log->warn("{}: not analysed: {}", uri, read.error);
      not_read = read.error;
      return nullptr;
    }
    auto settings = settings_for(*path);
    rules::CheckResult result = server::check_within(*read.text, settings->options, options.analysis_budget);
    return std::make_shared<Snapshot>(uri, 0, std::move(*read.text), caps->encoding, std::move(result), settings, *caps);
  }

  void pull_diagnostics(const protocol::Request& r, const std::shared_ptr<const Snapshot>& snapshot) {
    const json& p = r.params;
    if (p.contains("previousResultId") && p["previousResultId"].is_string() &&
        p["previousResultId"].get<std::string>() == snapshot->result_id)
      return reply(r.id, {{"kind", "unchanged"}, {"resultId", snapshot->result_id}});
    reply(r.id, {{"kind", "full"}, {"resultId", snapshot->result_id}, {"items", snapshot->diagnostics}});
  }

  void code_action(const protocol::Request& r, const std::shared_ptr<const Snapshot>& snapshot) {
    json actions = code_actions(*snapshot, r.params, *caps);
    if (wants_refactor(r.params))
      for (json& a : vram_code_actions(*snapshot, r.params, *caps)) actions.push_back(std::move(a));
    // A client that resolves edits gets fix-all without its edit; it is computed on resolve
    // against the version it was offered for.
    if (caps->code_action_resolve_edit)
      for (json& a : actions)
        if (a["kind"] == kFixAllKind) {
          a.erase("edit");
          a["data"] = {{"uri", snapshot->uri}, {"version", snapshot->version}};
        }
    reply(r.id, std::move(actions));
  }

  void hover_request(const protocol::Request& r, const std::shared_ptr<const Snapshot>& snapshot) {
    json finding_hover = hover(*snapshot, r.params, *caps);
    if (!finding_hover.is_null()) return reply(r.id, std::move(finding_hover));
    reply(r.id, vram_hover(*snapshot, r.params, *caps).value_or(json(nullptr)));
  }

  void code_lens_request(const protocol::Request& r, const std::shared_ptr<const Snapshot>& snapshot) {
    reply(r.id, code_lenses(*snapshot));
  }

  void vram_report_request(const protocol::Request& r, const std::shared_ptr<const Snapshot>& snapshot) {
    const json& arg = r.params["arguments"][0];
    reply(r.id, vram_report(*snapshot, static_cast<std::size_t>(optional_int(arg, "job", "params.arguments[0]").value_or(0))));
  }

  // workspace/executeCommand preflight.showVramReport [{uri, job}]: the full report of that
  // job, from the document's newest version.
  void execute_command(protocol::Request& r, const CancelFlag& cancelled) {
    const json& p = r.params;
    if (!p.is_object() || !p.contains("command") || p["command"] != kShowVramReport)
      throw BadParams("unknown command; this server runs only " + std::string(kShowVramReport));
    if (!p.contains("arguments") || !p["arguments"].is_array() || p["arguments"].empty() || !p["arguments"][0].is_object() ||
        !p["arguments"][0].contains("uri") || !p["arguments"][0]["uri"].is_string())
      throw BadParams(std::string(kShowVramReport) + " takes [{uri, job}]");
    if (optional_int(p["arguments"][0], "job", "params.arguments[0]").value_or(0) < 0)
      throw BadParams("params.arguments[0].job must not be negative");
    protocol::Request inner = r;
    inner.params["textDocument"] = {{"uri", p["arguments"][0]["uri"]}};
    document_request(inner, cancelled, &Impl::vram_report_request);
  }

  void resolve_code_action(protocol::Request& r, const CancelFlag& cancelled) {
    json action = r.params;
    if (!action.is_object()) throw BadParams("params must be a code action");
    const json data = action.value("data", json());
    if (action.contains("edit") || !data.is_object() || !data.contains("uri") || !data["uri"].is_string())
      return reply(r.id, action);
    std::optional<int> version = optional_int(data, "version", "params.data");
    auto it = documents.find(data["uri"].get<std::string>());
    if (it == documents.end()) return reply(r.id, action);
    std::shared_ptr<Document> doc = it->second;
    post_work(doc->strand, r.method, r.id, [this, doc, r, action, version, cancelled]() mutable {
      // A fix for a version the client no longer has would be a wrong edit: return none.
      if (!version || doc->version != *version) return reply(r.id, action);
      auto snapshot = current_snapshot(*doc, cancelled);
      if (!snapshot) return reply_error(r.id, kRequestCancelled, "cancelled");
      action["edit"] = workspace_edit(snapshot->uri, snapshot->version, fix_all_edits(*snapshot), *caps);
      reply(r.id, action);
    });
  }

  void workspace_diagnostics(protocol::Request& r, const CancelFlag& cancelled) {
    WorkspaceScan scan;
    scan.threads = options.workers;
    scan.file_budget = options.analysis_budget;
    scan.folders = folders;
    for (const auto& [uri, doc] : documents) scan.open_uris.insert(uri);
    scan.previous = previous_result_ids(r.params);
    scan.init_settings = init_settings;
    scan.workspace_settings = workspace_settings;
    scan.project = project;
    scan.caps = caps;
    scan.cancelled = [cancelled, this] { return cancelled->load() || stopping.load(); };
    scan.not_read = [log = options.log](const std::string& uri, const std::string& why) {
      log->warn("workspace scan: {}: not analysed: {}", uri, why);
    };
    scan.partial_token = r.params.is_object() ? r.params.value("partialResultToken", json()) : json();
    json progress_token = r.params.is_object() ? r.params.value("workDoneToken", json()) : json();
    auto run = [this, scan = std::move(scan), id = r.id](json token) mutable {
      scan.progress_token = std::move(token);
      scan.send = [this](const json& m) { send(m); };
      post_guarded(pool, "workspace/diagnostic", id, [this, scan = std::move(scan), id] {
        std::optional<json> result = run_workspace_scan(scan);
        if (!result) return reply_error(id, kRequestCancelled, "cancelled");
        reply(id, std::move(*result));
      });
    };
    if (!progress_token.is_null() || !caps->work_done_progress) return run(std::move(progress_token));
    // Progress the client did not ask for needs a token it created first.
    std::string token = "preflight-scan-" + std::to_string(++settings_generation);
    request_client("window/workDoneProgress/create", {{"token", token}},
                   [run = std::move(run), token](const protocol::Response& resp) mutable {
                     run(resp.error.is_null() ? json(token) : json());
                   });
  }

  static std::map<std::string, std::string> previous_result_ids(const json& params) {
    std::map<std::string, std::string> out;
    if (!params.is_object() || !params.contains("previousResultIds") || !params["previousResultIds"].is_array()) return out;
    for (const json& p : params["previousResultIds"])
      if (p.is_object() && p.contains("uri") && p.contains("value") && p["uri"].is_string() && p["value"].is_string())
        out[p["uri"].get<std::string>()] = p["value"].get<std::string>();
    return out;
  }

  // --- notifications (control strand) ---------------------------------------------------

  void on_notification(protocol::Notification& n) {
    if (n.method == "exit") return finish(exit_status_now());
    if (phase != Phase::Running) return;  // dropped before initialize and after shutdown
    const std::string& m = n.method;
    if (m == "initialized") return after_initialized();
    if (m == "textDocument/didOpen") return did_open(n.params);
    if (m == "textDocument/didChange") return did_change(n.params);
    if (m == "textDocument/didClose") return did_close(n.params);
    if (m == "workspace/didChangeConfiguration") return did_change_configuration(n.params);
    if (m == "workspace/didChangeWatchedFiles") return did_change_watched_files();
    if (m == "workspace/didChangeWorkspaceFolders") return did_change_folders(n.params);
    if (m == "textDocument/didSave") return did_save(uri_to_path(require_uri(n.params)));
    // Everything else: nothing to do (unknown notifications are ignored).
  }

  void after_initialized() {
    if (caps->watched_files_registration) {
      json watchers = json::array({{{"globPattern", "**/pyproject.toml"}}, {{"globPattern", "**/.preflight.toml"}},
                                   {{"globPattern", "**/.torch-preflight.toml"}}, {{"globPattern", "**/torch-preflight.toml"}}});
      request_client("client/registerCapability",
                     {{"registrations", json::array({{{"id", "preflight-config-watch"},
                                                      {"method", "workspace/didChangeWatchedFiles"},
                                                      {"registerOptions", {{"watchers", watchers}}}}})}},
                     [](const protocol::Response&) {});
    }
    pull_configuration();
    index_project();
  }

  // --- the workspace project --------------------------------------------------------------

  void did_save(const std::optional<fs::path>& path) {
    reread_config_if_changed(path);
    if (!path || path->extension() != ".py") return;
    std::string key = path->lexically_normal().string();
    if (!project_files.count(key)) return;  // not one of the project's files
    int generation = project_generation;
    post_guarded(pool, "project summary", nullptr, [this, key, generation] {
      auto summary = std::make_shared<const analysis::FileCalls>(server::summarize_file(key));
      post_guarded(control, "project summary", nullptr, [this, key, generation, summary] {
        if (generation != project_generation) return;  // a full re-index is on its way
        project_files[key] = summary;
        rebuild_project();
      });
    });
  }

  // Summarises every file of the folders on the pool, then swaps the index in.
  void index_project() {
    int generation = ++project_generation;
    post_guarded(pool, "project index", nullptr,
                 [this, generation, folders = folders, init = init_settings, workspace = workspace_settings] {
      std::map<std::string, std::shared_ptr<const analysis::FileCalls>> files;
      std::vector<server::SourceFile> found = workspace_files(folders, init, workspace);
      if (found.size() > server::kMaxProjectFiles) {
        options.log->info("project: {} files, over {}: checked without a project", found.size(), server::kMaxProjectFiles);
        found.clear();
      }
      for (const server::SourceFile& f : found) {
        if (stopping.load()) return;
        std::string key = fs::absolute(f.location).lexically_normal().string();
        files.emplace(key, std::make_shared<const analysis::FileCalls>(server::summarize_file(key)));
      }
      post_guarded(control, "project index", nullptr, [this, generation, files = std::move(files)]() mutable {
        if (generation != project_generation) return;
        project_files = std::move(files);
        options.log->info("project: {} files indexed", project_files.size());
        rebuild_project();
      });
    });
  }

  // The index is built on the pool (its maps hold every call of the workspace); the newest
  // one built replaces the last, and the open documents are checked again with it.
  void rebuild_project() {
    std::vector<std::shared_ptr<const analysis::FileCalls>> files;
    files.reserve(project_files.size());
    for (const auto& [path, summary] : project_files) files.push_back(summary);
    int version = ++index_version;
    post_guarded(pool, "project index", nullptr, [this, version, files = std::move(files)]() mutable {
      std::shared_ptr<const analysis::ProjectIndex> index =
          files.size() >= 2 ? std::make_shared<const analysis::ProjectIndex>(std::move(files)) : nullptr;
      post_guarded(control, "project index", nullptr, [this, version, index] {
        if (version != index_version) return;
        bool had = project != nullptr;
        project = index;
        if (had || project) refresh_all();  // a folder of one file has no project: nothing changes
      });
    });
  }

  void pull_configuration() {
    if (!caps->configuration) return;
    request_client("workspace/configuration", {{"items", json::array({{{"section", "preflight"}}})}},
                   [this](const protocol::Response& resp) {
                     if (!resp.error.is_null() || !resp.result.is_array() || resp.result.empty()) return;
                     std::vector<std::string> problems;
                     workspace_settings = parse_client_settings(resp.result[0], problems);
                     for (const auto& problem : problems) tell_user(2, problem);
                     refresh_all();
                   });
  }

  void did_open(const json& params) {
    const json& td = require_object(params, "textDocument");
    if (!td.contains("uri") || !td["uri"].is_string() || !td.contains("text") || !td["text"].is_string()) return;
    std::string uri = td["uri"].get<std::string>();
    int version = version_of(td);
    auto doc = std::make_shared<Document>(uri, pool.get_executor());
    doc->path = uri_to_path(uri);
    doc->newest_version = version;
    reread_config_if_changed(doc->path);
    std::shared_ptr<PublishChannel>& channel = channels[uri];
    if (!channel) channel = std::make_shared<PublishChannel>();
    doc->channel = channel;
    {
      std::lock_guard lock(channel->mu);
      doc->generation = ++channel->generation;  // from now on an older document stays silent
    }
    documents[uri] = doc;
    auto settings = doc->path ? settings_for(*doc->path) : default_settings();
    post_work(doc->strand, "textDocument/didOpen", nullptr,
              [this, doc, version, settings, text = td["text"].get<std::string>()]() mutable {
      set_text(*doc, std::move(text));
      doc->version = version;
      doc->settings = settings;
      analyse(*doc);
    });
  }

  void did_change(const json& params) {
    std::string uri = require_uri(params);
    auto it = documents.find(uri);
    if (it == documents.end() || !params.contains("contentChanges") || !params["contentChanges"].is_array()) return;
    std::shared_ptr<Document> doc = it->second;
    int version = version_of(params["textDocument"]);
    if (version <= doc->newest_version.load())
      options.log->warn("{}: version {} after {}: versions must increase; applying the change in arrival order",
                        uri, version, doc->newest_version.load());
    doc->newest_version = version;
    reread_config_if_changed(doc->path);
    post_work(doc->strand, "textDocument/didChange", nullptr, [this, doc, version, changes = params["contentChanges"]] {
      apply_changes(*doc, changes);
      doc->version = version;
      schedule_analysis(doc);
    });
  }

  static const std::string& text_of(const Document& doc) {
    return doc.analysis ? doc.analysis->text() : doc.text_over_cap;
  }

  // The whole text: parsed within the CLI's size cap, kept unparsed above it.
  static void set_text(Document& doc, std::string text) {
    if (text.size() > server::kMaxSourceBytes) {
      doc.analysis.reset();
      doc.text_over_cap = std::move(text);
      return;
    }
    std::string().swap(doc.text_over_cap);
    if (doc.analysis)
      doc.analysis->replace_all(std::move(text));
    else
      doc.analysis = std::make_unique<rules::DocumentAnalysis>(std::move(text));
  }

  // Each change applies to the text the previous one produced (LSP 3.17 §didChange).
  // The last line an LSP range names (UINT32_MAX when it is malformed: index everything and
  // let byte_range reject it).
  static uint32_t last_line_of(const json& range) {
    uint32_t last = 0;
    for (const char* end : {"start", "end"}) {
      if (!range.is_object() || !range.contains(end) || !range[end].is_object()) return UINT32_MAX;
      const json& line = range[end].contains("line") ? range[end]["line"] : json();
      if (!line.is_number_unsigned() || line.get<uint64_t>() >= UINT32_MAX - 1) return UINT32_MAX;
      last = std::max(last, static_cast<uint32_t>(line.get<uint64_t>()));
    }
    return last;
  }

  void apply_changes(Document& doc, const json& changes) {
    for (const json& change : changes) {
      if (!change.is_object() || !change.contains("text") || !change["text"].is_string()) continue;
      const std::string& text = change["text"].get_ref<const std::string&>();
      if (!change.contains("range")) {
        set_text(doc, text);
        continue;
      }
      // Only the lines the range names are indexed: a keystroke near the top of a long file
      // does not scan the rest of it.
      PositionMap map(text_of(doc), caps->encoding, last_line_of(change["range"]));
      std::optional<analysis::ByteRange> range = map.byte_range(change["range"]);
      if (!range) {
        tell_user(1, "preflight: an edit to " + display_name_of(doc.uri) +
                         " has an invalid range and was dropped; close and reopen the file to resync");
        continue;
      }
      if (doc.analysis)
        doc.analysis->edit(range->begin, range->end, text);  // no parse until the next check
      else
        doc.text_over_cap.replace(range->begin, range->end - range->begin, text);
    }
    // Crossing the cap either way: over it the text is not parsed, back under it it is.
    bool over_cap = text_of(doc).size() > server::kMaxSourceBytes;
    if (over_cap == (doc.analysis != nullptr)) set_text(doc, std::string(text_of(doc)));
  }

  void schedule_analysis(const std::shared_ptr<Document>& doc) {
    doc->debounce.expires_after(std::chrono::milliseconds(options.debounce_ms));
    doc->debounce.async_wait([this, doc](const std::error_code& ec) {
      if (!ec) run_guarded(doc->uri, nullptr, [&] { analyse(*doc); });
    });
  }

  void did_close(const json& params) {
    std::string uri = require_uri(params);
    auto it = documents.find(uri);
    if (it == documents.end()) return;
    std::shared_ptr<Document> doc = it->second;
    documents.erase(it);
    doc->newest_version = -1;  // cancels a running analysis
    post_guarded(doc->strand, "textDocument/didClose", nullptr, [this, doc] {
      doc->closed = true;
      doc->debounce.cancel();
      if (!caps->pull_diagnostics)
        notify_if_newest(*doc, "textDocument/publishDiagnostics", {{"uri", doc->uri}, {"diagnostics", json::array()}});
    });
  }

  void did_change_configuration(const json& params) {
    // eglot pushes its settings here; VS Code and Neovim send null and expect a pull.
    if (params.is_object() && params.contains("settings") && params["settings"].is_object() &&
        !params["settings"].empty()) {
      std::vector<std::string> problems;
      workspace_settings = parse_client_settings(params["settings"], problems);
      for (const auto& problem : problems) tell_user(2, problem);
      refresh_all();
    }
    pull_configuration();
  }

  void did_change_watched_files() {
    configs.clear();
    config_stamps.clear();
    refresh_all();
  }

  // Clients that cannot watch files (Neovim 0.7) send no didChangeWatchedFiles: on didOpen,
  // didSave and didChange the configuration files a document's directory resolved to are
  // stat'ed again, and every setting is re-read when one was created, changed or removed.
  void reread_config_if_changed(const std::optional<fs::path>& document) {
    if (!document) return;
    auto it = config_stamps.find(document->parent_path());
    if (it != config_stamps.end() && it->second != server::config_stamp(it->first)) did_change_watched_files();
  }

  void did_change_folders(const json& params) {
    if (!params.is_object() || !params.contains("event") || !params["event"].is_object()) return;
    const json& event = params["event"];
    auto paths = [](const json& list) {
      std::vector<fs::path> out;
      if (list.is_array())
        for (const json& f : list)
          if (f.is_object() && f.contains("uri") && f["uri"].is_string())
            if (auto p = uri_to_path(f["uri"].get<std::string>())) out.push_back(*p);
      return out;
    };
    for (const fs::path& gone : paths(event.value("removed", json()))) std::erase(folders, gone);
    for (const fs::path& added : paths(event.value("added", json()))) folders.push_back(added);
    index_project();
  }

  // New settings for every open document; those whose settings changed are re-analysed (and
  // pushed), and pull clients are asked to pull again.
  void refresh_all() {
    ++settings_generation;
    for (const auto& [uri, doc] : documents) {
      auto settings = doc->path ? settings_for(*doc->path) : default_settings();
      post_guarded(doc->strand, "new settings", nullptr, [this, doc = doc, settings] {  // clang 14 cannot capture a structured binding
        if (doc->settings && *doc->settings == *settings) return;
        doc->settings = settings;
        analyse(*doc);
      });
    }
    if (caps->pull_diagnostics && caps->diagnostic_refresh)
      request_client("workspace/diagnostic/refresh", nullptr, [](const protocol::Response&) {});
    // A new target GPU changes every lens's verdict.
    if (caps->code_lens_refresh) request_client("workspace/codeLens/refresh", nullptr, [](const protocol::Response&) {});
  }

  // --- settings -------------------------------------------------------------------------

  std::shared_ptr<const EffectiveSettings> default_settings() const {
    return std::make_shared<EffectiveSettings>(merge(server::Config{}, init_settings, workspace_settings));
  }

  // Control strand: the nearest configuration file (cached per directory until a watched
  // file changes), merged with the client's layers.
  std::shared_ptr<const EffectiveSettings> settings_for(const fs::path& file) {
    EffectiveSettings s = merge(project_config(file.parent_path()), init_settings, workspace_settings);
    if (project) {
      s.options.project = project;
      s.options.project_path = file.lexically_normal().string();
    }
    return std::make_shared<EffectiveSettings>(std::move(s));
  }

  server::Config project_config(const fs::path& dir) {
    auto it = configs.find(dir);
    if (it == configs.end()) {
      config_stamps[dir] = server::config_stamp(dir);  // before reading: a later change differs
      server::ConfigResult loaded;
      if (auto location = server::find_config(dir)) {
        loaded = server::load_config(*location, location->file.string());
        for (const auto& w : loaded.warnings) tell_user(2, w);
        if (!loaded.ok()) {
          tell_user(1, loaded.error + " (preflight uses its defaults until it is fixed)");
          loaded.config = server::Config{};
        }
      }
      it = configs.emplace(dir, std::move(loaded)).first;
    }
    return it->second.config;
  }

  // --- analysis (document strand) -------------------------------------------------------

  // Analyses the document's current version unless its snapshot is already of it (with the
  // same settings); publishes for push clients.
  void analyse(Document& doc, const CancelFlag& request_cancelled = nullptr) {
    if (doc.closed) return;
    if (doc.snapshot && doc.snapshot->version == doc.version && doc.snapshot->settings == doc.settings) return;
    if (!doc.analysis) return report_too_large(doc);
    int version = doc.version;
    auto cancelled = [&doc, version, this, &request_cancelled] {
      return doc.newest_version.load() != version || stopping.load() ||
             (request_cancelled && request_cancelled->load());
    };
    auto start = std::chrono::steady_clock::now();
    std::optional<rules::CheckResult> result;
    try {
      result = analyse_within_budget(doc, cancelled);
    } catch (const std::exception& e) {  // a bug in the core must not take the document down
      options.log->error("{} v{}: analysis failed: {}", doc.uri, version, e.what());
      return;
    }
    if (!result) {
      options.log->debug("{} v{}: analysis superseded", doc.uri, version);
      return;
    }
    doc.snapshot = std::make_shared<Snapshot>(doc.uri, version, doc.analysis->text(), caps->encoding,
                                              std::move(*result), doc.settings, *caps);
    auto micros = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start).count();
    const auto& stats = doc.analysis->last_stats();
    options.log->debug("{} v{}: {} findings in {} us ({} of {} units re-analysed{}{}{})", doc.uri, version,
                       doc.snapshot->result.findings.size(), micros, stats.reanalysed, stats.units,
                       stats.whole_file_because.empty() ? "" : "; whole file: ", stats.whole_file_because,
                       stats.kept_while_broken ? "; syntax errors: the last good findings kept" : "");
    publish(doc);
  }

  // A text over the CLI's cap is neither parsed nor analysed; its one diagnostic says so, in
  // the CLI's words. The snapshot keeps no copy of the text.
  void report_too_large(Document& doc) {
    rules::CheckResult result;
    result.status = rules::FileStatus::TooComplex;
    result.status_reason = "file too large to analyze (" + std::to_string(doc.text_over_cap.size()) + " bytes)";
    options.log->warn("{}: not analysed: {}", doc.uri, result.status_reason);
    doc.snapshot = std::make_shared<Snapshot>(doc.uri, doc.version, std::string(), caps->encoding,
                                              std::move(result), doc.settings, *caps);
    publish(doc);
  }

  std::optional<rules::CheckResult> analyse_within_budget(Document& doc, const std::function<bool()>& cancelled) {
    std::function<bool()> out_of_time;
    if (options.analysis_budget.count() > 0) {
      auto deadline = std::chrono::steady_clock::now() + options.analysis_budget;
      out_of_time = [deadline] { return std::chrono::steady_clock::now() >= deadline; };
    }
    auto result = doc.analysis->check(doc.settings->options, cancelled, out_of_time,
                                      server::describe_budget(options.analysis_budget));
    if (result && result->status == rules::FileStatus::TooComplex)
      options.log->warn("{}: not analysed: {}", doc.uri, result->status_reason);
    return result;
  }

  std::shared_ptr<const Snapshot> current_snapshot(Document& doc, const CancelFlag& cancelled) {
    analyse(doc, cancelled);
    if (!doc.snapshot || doc.snapshot->version != doc.version) return nullptr;
    return doc.snapshot;
  }

  void publish(Document& doc) {
    if (caps->pull_diagnostics) return;
    const Snapshot& s = *doc.snapshot;
    // Only the document's current version is shown. Versions are compared for identity, not
    // order: a client whose versions go backwards still sees the result of its last edit.
    if (s.version != doc.version) return;
    if (s.version == doc.published_version && s.result_id == doc.published_id) return;
    doc.published_version = s.version;
    doc.published_id = s.result_id;
    notify_if_newest(doc, "textDocument/publishDiagnostics",
                     {{"uri", s.uri}, {"version", s.version}, {"diagnostics", s.diagnostics}});
  }

  // Sends only while `doc` is the newest open of its uri, holding the uri's channel, so a
  // closed document's publish can never follow a reopened one's.
  void notify_if_newest(Document& doc, std::string_view method, json params) {
    std::lock_guard lock(doc.channel->mu);
    if (doc.generation != doc.channel->generation) {
      options.log->debug("{}: {} of a closed document dropped (reopened since)", doc.uri, method);
      return;
    }
    notify(method, std::move(params));
  }
};

LanguageServer::LanguageServer(ServerOptions options, Writer write)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(write))) {}

LanguageServer::~LanguageServer() {
  impl_->stopping = true;
  impl_->intake_cv.notify_all();  // a reader waiting for room gives up
  impl_->pool.stop();
  impl_->pool.join();
}

void LanguageServer::receive(std::string_view body) { impl_->receive(body); }

void LanguageServer::framing_error(std::string_view what) {
  impl_->options.log->warn("framing error: {}", what);
  impl_->send(protocol::make_error(nullptr, protocol::error_code::kParseError, what));
}

void LanguageServer::input_closed() {
  impl_->options.log->info("end of input");
  asio::post(impl_->control, [impl = impl_.get()] { impl->finish(impl->exit_status_now()); });
}

int LanguageServer::wait_for_exit() {
  std::unique_lock lock(impl_->exit_mu);
  impl_->exit_cv.wait(lock, [this] { return impl_->exit_code.has_value(); });
  return *impl_->exit_code;
}

int run_stdio_server(ServerOptions options) {
  ::signal(SIGPIPE, SIG_IGN);
  auto log = options.log;
  LanguageServer server(std::move(options), [](const json& message) {
    std::string bytes = protocol::frame(message);
    if (std::fwrite(bytes.data(), 1, bytes.size(), stdout) != bytes.size() || std::fflush(stdout) != 0)
      throw std::runtime_error("stdout closed");
  });
  std::thread reader([&server, log] {
    protocol::FrameReader frames;
    std::vector<char> buffer(64 * 1024);
    for (;;) {
      ssize_t n = ::read(STDIN_FILENO, buffer.data(), buffer.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      frames.feed(std::string_view(buffer.data(), static_cast<std::size_t>(n)));
      while (auto frame = frames.next()) {
        if (!frame->error.empty()) server.framing_error(frame->error);
        else server.receive(frame->body);
      }
    }
    server.input_closed();
  });
  int code = server.wait_for_exit();
  log->info("exit {}", code);
  log->flush();
  std::fflush(stdout);
  // The reader may be blocked in read(); the process ends without joining it.
  reader.detach();
  std::_Exit(code);
}

}  // namespace preflight::lsp
