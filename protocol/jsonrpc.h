// JSON-RPC 2.0 as LSP frames it: `Content-Length: N\r\n\r\n` + N bytes of UTF-8 JSON. Pure:
// bytes in, messages out, no I/O, so the framing can be fed one byte at a time in tests and
// from a blocking read() in the server.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include <nlohmann/json.hpp>

namespace preflight::protocol {

using json = nlohmann::json;

// The error codes the server answers with (JSON-RPC 2.0 and LSP 3.17).
namespace error_code {
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;
inline constexpr int kServerNotInitialized = -32002;
inline constexpr int kRequestFailed = -32803;
inline constexpr int kServerCancelled = -32802;
inline constexpr int kContentModified = -32801;
inline constexpr int kRequestCancelled = -32800;
}  // namespace error_code

// Splits a byte stream into message bodies. Headers and bodies may arrive in any pieces.
// A header block without a usable Content-Length is a framing error: it is reported once and
// skipped, and reading resumes at the next header block.
class FrameReader {
 public:
  struct Frame {
    std::string body;       // the JSON text (not yet parsed)
    std::string error;      // non-empty: a framing problem, `body` is empty
  };

  void feed(std::string_view bytes) { buffer_.append(bytes); }
  // The next complete frame, or nullopt until more bytes arrive.
  std::optional<Frame> next();
  // Bytes received but not yet part of a complete frame.
  std::size_t pending() const { return buffer_.size() - consumed_; }

  // Bodies larger than this are refused (the server answers and skips them) so a garbage
  // length cannot make it allocate without bound.
  static constexpr std::size_t kMaxBody = 256u * 1024u * 1024u;

 private:
  std::string buffer_;
  std::size_t consumed_ = 0;
  std::size_t skip_ = 0;  // body bytes still to discard after a refused frame
  void compact();
};

// `Content-Length: N\r\n\r\n` + the serialised message. Invalid UTF-8 in strings is replaced
// (U+FFFD) rather than throwing: a file name or a source line must never stop a reply.
std::string frame(const json& message);
std::string dump(const json& message);

// A body classified by what it is. The id of a request is kept as JSON (number or string).
struct Request {
  json id;
  std::string method;
  json params;  // null when absent
};
struct Notification {
  std::string method;
  json params;
};
struct Response {  // a reply from the client to a request the server sent
  json id;
  json result;
  json error;  // null on success
};
struct Invalid {  // answered with `code` (id null when the body had no usable id)
  json id;
  int code = error_code::kInvalidRequest;
  std::string message;
};
using Message = std::variant<Request, Notification, Response, Invalid>;

// Bodies nested deeper than this (objects and arrays) are refused while they are parsed
// (InvalidRequest, under the request's id when it has one), before anything recursive runs.
inline constexpr std::size_t kMaxNesting = 512;

Message parse_message(std::string_view body);

json make_response(const json& id, json result);
json make_error(const json& id, int code, std::string_view message);
json make_notification(std::string_view method, json params);
json make_request(const json& id, std::string_view method, json params);

}  // namespace preflight::protocol
