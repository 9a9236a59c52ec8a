// A test client for `preflight lsp`: runs the real binary over pipes, sends framed JSON, and
// reads what comes back with a timeout. Notifications that arrive while waiting for a
// response are kept, in order, for later assertions.
#pragma once

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <deque>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "protocol/jsonrpc.h"

namespace preflight::testing {

// How long a test waits for an answer it expects before failing: a limit against hangs, not
// a timing claim. Generous because the ASan + UBSan build on a loaded 2-core CI machine once
// took more than 10 s to answer a VRAM code lens (stop 37's CI of ae345fa; 3 s on its own).
inline constexpr int kAnswerTimeoutMs = 30000;

using json = nlohmann::json;

// Client capability sets as the real clients send them (lsp.md "Facts measured").
inline json neovim07_capabilities() {
  return {{"textDocument",
           {{"publishDiagnostics", {{"relatedInformation", true}, {"tagSupport", {{"valueSet", {1, 2}}}}}},
            {"hover", {{"contentFormat", {"markdown", "plaintext"}}}},
            {"codeAction",
             {{"codeActionLiteralSupport", {{"codeActionKind", {{"valueSet", {"", "quickfix", "source"}}}}}},
              {"resolveSupport", {{"properties", {"edit"}}}}}},
            {"synchronization", {{"didSave", true}}}}},
          {"workspace", {{"configuration", true}, {"workspaceEdit", {{"resourceOperations", {"rename"}}}}}},
          {"window", {{"workDoneProgress", true}}}};
}

inline json eglot_capabilities() {
  return {{"textDocument",
           {{"publishDiagnostics", {{"relatedInformation", false}, {"codeDescriptionSupport", false}}},
            {"hover", {{"contentFormat", {"markdown", "plaintext"}}}},
            {"codeAction", {{"codeActionLiteralSupport", {{"codeActionKind", {{"valueSet", {"quickfix", "source"}}}}}}}}}},
          {"workspace", {{"configuration", true}, {"workspaceEdit", {{"documentChanges", false}}}}}};
}

inline json vscode_capabilities() {
  return {{"general", {{"positionEncodings", {"utf-16"}}}},
          {"textDocument",
           {{"publishDiagnostics", {{"relatedInformation", true}, {"codeDescriptionSupport", true}, {"dataSupport", true}}},
            {"diagnostic", {{"dynamicRegistration", true}, {"relatedDocumentSupport", false}}},
            {"hover", {{"contentFormat", {"markdown", "plaintext"}}}},
            {"codeAction",
             {{"codeActionLiteralSupport", {{"codeActionKind", {{"valueSet", {"", "quickfix", "source", "source.fixAll"}}}}}},
              {"resolveSupport", {{"properties", {"edit"}}}},
              {"dataSupport", true}}}}},
          {"workspace",
           {{"configuration", true},
            {"diagnostics", {{"refreshSupport", true}}},
            {"didChangeWatchedFiles", {{"dynamicRegistration", true}}},
            {"workspaceEdit", {{"documentChanges", true}}}}},
          {"window", {{"workDoneProgress", true}}}};
}

class LspProcess {
 public:
  // The server's stderr goes to /dev/null, or to the file `stderr_path` names (a file, not
  // a terminal: what an editor gives the server).
  explicit LspProcess(std::vector<std::string> args, const std::string& stderr_path = {}) {
    int in[2], out[2];
    if (::pipe(in) != 0 || ::pipe(out) != 0) throw std::runtime_error("pipe");
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(in[0], 0);
      ::dup2(out[1], 1);
      int devnull = ::open("/dev/null", O_WRONLY);
      if (!stderr_path.empty()) ::dup2(::open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644), 2);
      else if (!std::getenv("PF_LSP_TEST_STDERR")) ::dup2(devnull, 2);
      ::close(in[1]);
      ::close(out[0]);
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    ::close(in[0]);
    ::close(out[1]);
    to_server_ = in[1];
    from_server_ = out[0];
    ::signal(SIGPIPE, SIG_IGN);
  }

  ~LspProcess() {
    if (to_server_ >= 0) ::close(to_server_);
    if (pid_ > 0 && !exited_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    ::close(from_server_);
  }

  pid_t pid() const { return pid_; }

  // Writes `bytes`, reading what the server sends meanwhile: a server that stops reading
  // while its output is not read (bounded intake) would otherwise deadlock with this client.
  void send_raw(std::string_view bytes) {
    while (!bytes.empty()) {
      pollfd fds[2] = {{to_server_, POLLOUT, 0}, {from_server_, POLLIN, 0}};
      if (::poll(fds, 2, 120000) <= 0) throw std::runtime_error("the server neither reads nor writes");
      if (fds[1].revents & POLLIN) {
        char buf[65536];
        ssize_t got = ::read(from_server_, buf, sizeof buf);
        if (got > 0) frames_.feed(std::string_view(buf, static_cast<std::size_t>(got)));
      }
      if (fds[0].revents & (POLLERR | POLLHUP)) throw std::runtime_error("server's stdin closed");
      if (!(fds[0].revents & POLLOUT)) continue;
      ssize_t n = ::write(to_server_, bytes.data(), std::min<std::size_t>(bytes.size(), PIPE_BUF));
      if (n <= 0) throw std::runtime_error("server's stdin closed");
      bytes.remove_prefix(static_cast<std::size_t>(n));
    }
  }
  void send(const json& message) { send_raw(protocol::frame(message)); }
  void close_input() {
    ::close(to_server_);
    to_server_ = -1;
  }

  json request(const std::string& method, json params, int timeout_ms = kAnswerTimeoutMs) {
    int id = next_id_++;
    send(protocol::make_request(id, method, std::move(params)));
    return wait_response(id, timeout_ms);
  }
  int send_request(const std::string& method, json params) {
    int id = next_id_++;
    send(protocol::make_request(id, method, std::move(params)));
    return id;
  }
  void notify(const std::string& method, json params) { send(protocol::make_notification(method, std::move(params))); }

  // The response to `id` (the whole message: result or error).
  json wait_response(const json& id, int timeout_ms = kAnswerTimeoutMs) {
    for (auto it = inbox_.begin(); it != inbox_.end(); ++it)
      if (is_response(*it) && (*it)["id"] == id) {
        json m = *it;
        inbox_.erase(it);
        return m;
      }
    auto deadline = now() + timeout_ms;
    while (auto m = read_message(deadline)) {
      if (is_response(*m) && (*m)["id"] == id) return *m;
      handle_server_request(*m);
      inbox_.push_back(std::move(*m));
    }
    throw std::runtime_error("no response to request " + id.dump());
  }

  // The first notification `method` satisfying `accept` (kept ones first), removing it and
  // everything before it from the inbox.
  std::optional<json> wait_notification(const std::string& method, const std::function<bool(const json&)>& accept,
                                        int timeout_ms = kAnswerTimeoutMs) {
    while (!inbox_.empty()) {
      json m = inbox_.front();
      inbox_.pop_front();
      if (m.value("method", "") == method && !m.contains("id") && accept(m["params"])) return m["params"];
    }
    auto deadline = now() + timeout_ms;
    while (auto m = read_message(deadline)) {
      handle_server_request(*m);
      if (m->value("method", "") == method && !m->contains("id") && accept((*m)["params"])) return (*m)["params"];
    }
    return std::nullopt;
  }

  // Waits for diagnostics of `uri` at `version`.
  json wait_diagnostics(const std::string& uri, int version, int timeout_ms = kAnswerTimeoutMs) {
    auto d = wait_notification("textDocument/publishDiagnostics", [&](const json& p) {
      return p["uri"] == uri && p.value("version", -1) == version;
    }, timeout_ms);
    if (!d) throw std::runtime_error("no diagnostics for " + uri + " v" + std::to_string(version));
    return (*d)["diagnostics"];
  }

  // Every message that arrives within `ms` (for asserting that nothing is sent).
  std::vector<json> drain(int ms) {
    std::vector<json> out(inbox_.begin(), inbox_.end());
    inbox_.clear();
    auto deadline = now() + ms;
    while (auto m = read_message(deadline)) {
      handle_server_request(*m);
      out.push_back(std::move(*m));
    }
    return out;
  }

  // Exit status, or nullopt if the process is still running after `timeout_ms`.
  std::optional<int> wait_exit(int timeout_ms = 5000) {
    auto deadline = now() + timeout_ms;
    while (now() < deadline) {
      int status = 0;
      pid_t r = ::waitpid(pid_, &status, WNOHANG);
      if (r == pid_) {
        exited_ = true;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      ::usleep(5000);
    }
    return std::nullopt;
  }

  // How the test answers the server's own requests (workspace/configuration, ...).
  std::function<json(const json& request)> answer_server_request = [](const json&) { return json(nullptr); };
  std::vector<json> server_requests;  // every request the server sent, in order

  json initialize(json capabilities, json extra = json::object()) {
    json params = {{"processId", nullptr}, {"rootUri", nullptr}, {"capabilities", std::move(capabilities)}};
    for (auto& [k, v] : extra.items()) params[k] = v;
    json r = request("initialize", params);
    notify("initialized", json::object());
    return r;
  }

 private:
  pid_t pid_ = -1;
  bool exited_ = false;
  int to_server_ = -1, from_server_ = -1;
  int next_id_ = 1;
  protocol::FrameReader frames_;
  std::deque<json> inbox_;

  static long long now() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  static bool is_response(const json& m) { return m.contains("id") && !m.contains("method"); }

  void handle_server_request(const json& m) {
    if (!m.contains("id") || !m.contains("method")) return;
    server_requests.push_back(m);
    send(protocol::make_response(m["id"], answer_server_request(m)));
  }

  std::optional<json> read_message(long long deadline) {
    for (;;) {
      if (auto frame = frames_.next()) {
        if (!frame->error.empty()) throw std::runtime_error("server sent a bad frame: " + frame->error);
        return json::parse(frame->body);
      }
      long long left = deadline - now();
      if (left <= 0) return std::nullopt;
      pollfd p{from_server_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left)) <= 0) return std::nullopt;
      char buf[65536];
      ssize_t n = ::read(from_server_, buf, sizeof buf);
      if (n <= 0) return std::nullopt;
      frames_.feed(std::string_view(buf, static_cast<std::size_t>(n)));
    }
  }
};

}  // namespace preflight::testing
