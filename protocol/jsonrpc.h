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

// Splits a byte stream into message bodies. Headers and bodies may arrive in any pieces;
// the frames never depend on how the stream was split. Header lines may end in CRLF or LF.
// A bad header block (no Content-Length, a length that is not a number or exceeds kMaxBody,
// a line that is no header, 64 KiB without a blank line) is a framing error: it is reported
// once, nothing after it is taken as a body, and reading resumes at the next
// "Content-Length:" in the stream.
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

  // Bodies larger than this are refused (the server answers, then looks for the next
  // header) so a garbage length cannot make it allocate, or wait, without bound.
  static constexpr std::size_t kMaxBody = 256u * 1024u * 1024u;

 private:
  std::string buffer_;
  std::size_t consumed_ = 0;
  bool resync_ = false;  // after a bad header: looking for the next "Content-Length:"
  struct HeaderScan {  // how far the header block at consumed_ was read
    std::size_t line = 0;  // the start of the line being read
    std::size_t pos = 0;   // the next byte to read in it
    bool in_value = false;  // past the line's colon
    bool has_length = false;
    std::size_t length_begin = 0, length_end = 0;  // the first Content-Length's value
  } scan_;
  void compact();
  std::optional<Frame> refuse(std::size_t resume_at, std::string error);
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
