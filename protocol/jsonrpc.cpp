#include "protocol/jsonrpc.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace preflight::protocol {

namespace {

// A header block longer than this (with its blank line) is not LSP: it is refused.
constexpr std::size_t kMaxHeader = 64 * 1024;
constexpr std::string_view kLengthName = "content-length:";

bool iequals_prefix(std::string_view line, std::string_view prefix) {
  if (line.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(line[i])) != prefix[i]) return false;
  return true;
}

// Where "Content-Length:" (any case) first starts in `s`, or npos.
std::size_t find_length_name(std::string_view s) {
  for (std::size_t i = 0; i + kLengthName.size() <= s.size(); ++i)
    if ((s[i] == 'c' || s[i] == 'C') && iequals_prefix(s.substr(i), kLengthName)) return i;
  return std::string_view::npos;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// A character of an HTTP field name (RFC 9110 token).
bool is_token_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

// The value of a Content-Length header, or nullopt when it is not a decimal number (a sign,
// a fraction, trailing text, more digits than a size holds).
std::optional<std::size_t> parse_length(std::string_view value) {
  value = trim(value);
  std::size_t n = 0;
  auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
  if (value.empty() || ec != std::errc() || ptr != value.data() + value.size()) return std::nullopt;
  return n;
}

bool is_valid_id(const json& id) { return id.is_number_integer() || id.is_string(); }

// Builds the document as json::parse does, counting depth as it reads. Past kMaxNesting
// nothing more is built; the rest of the body is still read, for its syntax and for the
// message's top-level "id", so the refusal can answer the request it belongs to. No
// recursive pass (a copy, a dump, a destructor) ever meets a value deeper than the limit:
// the parser itself is iterative.
class DepthLimitedSax {
 public:
  explicit DepthLimitedSax(json& root) : dom_(root, /*allow_exceptions=*/false) {}

  bool too_deep() const { return too_deep_; }
  const json& id() const { return id_; }

  bool null() { return scalar(nullptr, [&] { return dom_.null(); }); }
  bool boolean(bool v) { return scalar(v, [&] { return dom_.boolean(v); }); }
  bool number_integer(json::number_integer_t v) { return scalar(v, [&] { return dom_.number_integer(v); }); }
  bool number_unsigned(json::number_unsigned_t v) { return scalar(v, [&] { return dom_.number_unsigned(v); }); }
  bool number_float(json::number_float_t v, const json::string_t& s) {
    return scalar(v, [&] { return dom_.number_float(v, s); });
  }
  bool string(json::string_t& v) { return scalar(v, [&] { return dom_.string(v); }); }
  bool binary(json::binary_t& v) { return scalar(nullptr, [&] { return dom_.binary(v); }); }

  bool start_object(std::size_t n) { return open([&] { return dom_.start_object(n); }); }
  bool end_object() { return close([&] { return dom_.end_object(); }); }
  bool start_array(std::size_t n) { return open([&] { return dom_.start_array(n); }); }
  bool end_array() { return close([&] { return dom_.end_array(); }); }
  bool key(json::string_t& k) {
    at_id_ = depth_ == 1 && k == "id";
    if (depth_ == 1) {
      has_method_ = has_method_ || k == "method";
      has_outcome_ = has_outcome_ || k == "result" || k == "error";
    }
    return too_deep_ || dom_.key(k);
  }
  // Top-level members seen, however deep the rest: a response (result or error, no method)
  // is told apart from a request even when it is refused.
  bool looks_like_response() const { return has_outcome_ && !has_method_; }

  bool parse_error(std::size_t position, const std::string& token, const nlohmann::detail::exception& e) {
    return dom_.parse_error(position, token, e);
  }

 private:
  nlohmann::detail::json_sax_dom_parser<json> dom_;
  std::size_t depth_ = 0;
  bool too_deep_ = false;
  bool at_id_ = false;  // the next value is the top-level "id"
  bool has_method_ = false, has_outcome_ = false;
  json id_;

  template <typename Value, typename Build>
  bool scalar(const Value& v, Build build) {
    if (at_id_) id_ = v;
    at_id_ = false;
    return too_deep_ || build();
  }
  template <typename Build>
  bool open(Build build) {
    at_id_ = false;
    if (++depth_ > kMaxNesting) too_deep_ = true;
    return too_deep_ || build();
  }
  template <typename Build>
  bool close(Build build) {
    --depth_;
    return too_deep_ || build();
  }
};

// The value of the four hex digits at s[i], or nullopt.
std::optional<unsigned> hex4(std::string_view s, std::size_t i) {
  if (i + 4 > s.size()) return std::nullopt;
  unsigned v = 0;
  auto [ptr, ec] = std::from_chars(s.data() + i, s.data() + i + 4, v, 16);
  if (ec != std::errc() || ptr != s.data() + i + 4) return std::nullopt;
  return v;
}

// `body` with every unpaired surrogate escape inside a string ("\ud800" not followed by a low
// one, a "\udc00" on its own) replaced by "\ufffd", or nullopt when it has none. JSON allows
// them (RFC 8259 §8.2) and JSON.stringify writes them; nlohmann refuses them.
std::optional<std::string> replace_lone_surrogates(std::string_view body) {
  std::string out;
  std::size_t copied = 0;  // body[0, copied) is in `out`
  bool replaced = false;
  bool in_string = false;
  for (std::size_t i = 0; i < body.size(); ++i) {
    char c = body[i];
    if (!in_string) {
      in_string = c == '"';
      continue;
    }
    if (c == '"') {
      in_string = false;
      continue;
    }
    if (c != '\\' || i + 1 >= body.size()) continue;
    if (body[i + 1] != 'u') {
      ++i;  // a two-character escape: \" does not end the string
      continue;
    }
    std::optional<unsigned> unit = hex4(body, i + 2);
    if (!unit) continue;
    if (*unit >= 0xD800 && *unit <= 0xDBFF && body.substr(i + 6, 2) == "\\u") {  // hex4 saw i + 6 <= size
      std::optional<unsigned> low = hex4(body, i + 8);
      if (low && *low >= 0xDC00 && *low <= 0xDFFF) {
        i += 11;  // a pair
        continue;
      }
    }
    if (*unit >= 0xD800 && *unit <= 0xDFFF) {
      out.append(body.substr(copied, i - copied));
      out.append("\\ufffd");
      copied = i + 6;
      replaced = true;
    }
    i += 5;
  }
  if (!replaced) return std::nullopt;
  out.append(body.substr(copied));
  return out;
}

}  // namespace

void FrameReader::compact() {
  if (consumed_ > 0 && (consumed_ == buffer_.size() || consumed_ > 1 << 20)) {
    buffer_.erase(0, consumed_);
    consumed_ = 0;
  }
}

std::optional<FrameReader::Frame> FrameReader::refuse(std::size_t resume_at, std::string error) {
  consumed_ += resume_at;
  resync_ = true;
  scan_ = {};
  compact();
  return Frame{"", std::move(error)};
}

// Every decision below rests on the bytes alone, never on how they were split into reads:
// a header block is taken once it is whole, and a bad one is refused as soon as the bytes
// that make it bad have arrived.
std::optional<FrameReader::Frame> FrameReader::next() {
  for (;;) {
    std::string_view rest(buffer_.data() + consumed_, pending());
    if (resync_) {
      // Out of step: what comes before the next "Content-Length:" is dropped unread.
      std::size_t at = find_length_name(rest);
      if (at == std::string_view::npos) {
        consumed_ += rest.size() - std::min(rest.size(), kLengthName.size() - 1);  // keep a split name
        compact();
        return std::nullopt;
      }
      consumed_ += at;
      resync_ = false;
      continue;
    }
    // Line ends between messages are skipped.
    std::size_t start = rest.find_first_not_of("\r\n");
    if (start == std::string_view::npos) {
      consumed_ += rest.size();
      compact();
      return std::nullopt;
    }
    consumed_ += start;
    rest.remove_prefix(start);

    // The header block: `Name: value` lines, each ending in LF (CRLF or LF alone: the block
    // ends at the first empty line either way, so LF-only ends are unambiguous).
    // How far it was read is kept (scan_), so a block that arrives a byte at a time is read
    // once, not once a byte.
    std::string_view head = rest.substr(0, kMaxHeader);
    auto incomplete = [&]() -> std::optional<Frame> {
      if (rest.size() >= kMaxHeader) return refuse(1, "header block longer than 64 KiB; skipped to the next Content-Length");
      return std::nullopt;
    };
    std::size_t block_end = 0;
    for (;;) {
      const std::size_t line = scan_.line;
      if (!scan_.in_value) {
        if (scan_.pos == line) {  // an empty line ends the block
          if (line >= head.size()) return incomplete();
          if (head[line] == '\n') {
            block_end = line + 1;
            break;
          }
          if (head[line] == '\r') {
            if (line + 1 >= head.size()) return incomplete();
            if (head[line + 1] == '\n') {
              block_end = line + 2;
              break;
            }
          }
        }
        while (scan_.pos < head.size() && is_token_char(head[scan_.pos])) ++scan_.pos;
        if (scan_.pos >= head.size()) return incomplete();
        if (head[scan_.pos] != ':' || scan_.pos == line)
          return refuse(line + 1, "not a header line; skipped to the next Content-Length");
        scan_.in_value = true;
      }
      std::size_t eol = head.find('\n', scan_.pos);
      if (eol == std::string_view::npos) {
        scan_.pos = head.size();
        return incomplete();
      }
      if (!scan_.has_length && iequals_prefix(head.substr(line), kLengthName)) {
        scan_.has_length = true;
        scan_.length_begin = line + kLengthName.size();
        scan_.length_end = eol;
      }
      scan_.line = scan_.pos = eol + 1;
      scan_.in_value = false;
    }
    std::optional<std::string_view> length_value;
    if (scan_.has_length) length_value = head.substr(scan_.length_begin, scan_.length_end - scan_.length_begin);
    if (!length_value) return refuse(block_end, "header block without a Content-Length; skipped to the next Content-Length");
    std::optional<std::size_t> length = parse_length(*length_value);
    if (!length)
      return refuse(block_end, "Content-Length `" + std::string(trim(length_value->substr(0, 40))) +
                                   "` is not a length; skipped to the next Content-Length");
    if (*length > kMaxBody)
      return refuse(block_end, "message of " + std::to_string(*length) +
                                   " bytes exceeds the 256 MiB limit; skipped to the next Content-Length");
    if (rest.size() - block_end < *length) return std::nullopt;
    Frame frame{std::string(rest.substr(block_end, *length)), ""};
    consumed_ += block_end + *length;
    scan_ = {};
    compact();
    return frame;
  }
}

std::string dump(const json& message) {
  return message.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string frame(const json& message) {
  std::string body = dump(message);
  return "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

Message parse_message(std::string_view body) {
  json doc;
  DepthLimitedSax sax(doc);
  if (!json::sax_parse(body, &sax, json::input_format_t::json, /*strict=*/true)) {
    // Lone surrogate escapes are valid JSON that nlohmann refuses: read them as U+FFFD.
    std::optional<std::string> repaired = replace_lone_surrogates(body);
    if (!repaired) return Invalid{nullptr, error_code::kParseError, "malformed JSON"};
    return parse_message(*repaired);
  }
  if (sax.too_deep()) {
    json id = sax.id();
    std::string why = "JSON nested deeper than " + std::to_string(kMaxNesting) + " levels";
    // The client's answer to a server request: that request fails with the refusal (a
    // response is never answered; an error under its id would answer no request of the client's).
    if (sax.looks_like_response() && is_valid_id(id))
      return Response{id, json(), json{{"code", error_code::kInvalidRequest}, {"message", why}}};
    return Invalid{is_valid_id(id) ? id : json(), error_code::kInvalidRequest, why};
  }
  if (!doc.is_object()) return Invalid{nullptr, error_code::kInvalidRequest, "a message must be a JSON object"};
  json id = doc.contains("id") ? doc["id"] : json();
  bool has_id = doc.contains("id") && !id.is_null();
  if (has_id && !is_valid_id(id)) return Invalid{nullptr, error_code::kInvalidRequest, "id must be a number or a string"};
  json params = doc.contains("params") ? doc["params"] : json();
  if (doc.contains("method")) {
    if (!doc["method"].is_string()) return Invalid{has_id ? id : json(), error_code::kInvalidRequest, "method must be a string"};
    if (!params.is_null() && !params.is_object() && !params.is_array())
      return Invalid{has_id ? id : json(), error_code::kInvalidRequest, "params must be an object or an array"};
    std::string method = doc["method"].get<std::string>();
    if (has_id) return Request{id, std::move(method), std::move(params)};
    return Notification{std::move(method), std::move(params)};
  }
  if (has_id && (doc.contains("result") || doc.contains("error")))
    return Response{id, doc.value("result", json()), doc.value("error", json())};
  return Invalid{has_id ? id : json(), error_code::kInvalidRequest, "neither a request, a notification nor a response"};
}

json make_response(const json& id, json result) {
  return json{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

json make_error(const json& id, int code, std::string_view message) {
  return json{{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", std::string(message)}}}};
}

json make_notification(std::string_view method, json params) {
  json m{{"jsonrpc", "2.0"}, {"method", std::string(method)}};
  if (!params.is_null()) m["params"] = std::move(params);
  return m;
}

json make_request(const json& id, std::string_view method, json params) {
  json m{{"jsonrpc", "2.0"}, {"id", id}, {"method", std::string(method)}};
  if (!params.is_null()) m["params"] = std::move(params);
  return m;
}

}  // namespace preflight::protocol
