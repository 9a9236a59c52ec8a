// `preflight lsp`: the language server. Threads and ownership:
//
//   reader thread   reads stdin, splits frames, hands each body to receive() in order;
//                   answers $/cancelRequest at once (sets the request's cancellation flag)
//   control strand  lifecycle, configuration, the table of open documents; cheap work only
//   document strand one per open document: applies its edits in order, debounces, analyses,
//                   answers its requests (so a request sees every edit sent before it)
//   pool            the strands run on a small thread pool: a slow file never blocks
//                   requests on other files
//
// Results are published only for the document's newest version (an analysis whose version
// has been superseded is cancelled between units and dropped).
#pragma once

#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace preflight::lsp {

struct ServerOptions {
  int debounce_ms = 50;        // coalesces keystrokes; overridable by initializationOptions
  unsigned workers = 2;        // threads of the analysis pool
  // One document's analysis may take this long before it is reported as too complex (0: no
  // limit); a pathological file then costs its strand this much once per version, not forever.
  std::chrono::milliseconds analysis_budget{10'000};
  std::shared_ptr<spdlog::logger> log;  // required
};

class LanguageServer {
 public:
  // `write` sends one message to the client; it is called from several threads, never
  // concurrently (the server serialises calls).
  using Writer = std::function<void(const nlohmann::json&)>;

  LanguageServer(ServerOptions options, Writer write);
  ~LanguageServer();
  LanguageServer(const LanguageServer&) = delete;
  LanguageServer& operator=(const LanguageServer&) = delete;

  // One message body, in arrival order (the reader thread).
  void receive(std::string_view body);
  // A framing error (bad header): answered as a parse error, reading goes on.
  void framing_error(std::string_view what);
  // stdin closed.
  void input_closed();
  // Blocks until `exit`, end of input or the client's death; returns the exit code.
  int wait_for_exit();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Runs the server over stdin/stdout until exit; returns the process exit code.
int run_stdio_server(ServerOptions options);

}  // namespace preflight::lsp
