#include "protocol/jsonrpc.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace preflight::protocol {

namespace {

constexpr std::string_view kHeaderEnd = "\r\n\r\n";
// A header block longer than this without its terminator is not LSP: drop it.
constexpr std::size_t kMaxHeader = 64 * 1024;

bool iequals_prefix(std::string_view line, std::string_view prefix) {
  if (line.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(line[i])) != prefix[i]) return false;
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// The Content-Length of a header block, or nullopt when it has none or it is not a number.
std::optional<std::size_t> content_length(std::string_view headers) {
  constexpr std::string_view kName = "content-length:";
  while (!headers.empty()) {
    std::size_t eol = headers.find("\r\n");
    std::string_view line = headers.substr(0, eol);
    if (iequals_prefix(line, kName)) {
      std::string_view value = trim(line.substr(kName.size()));
      std::size_t n = 0;
      auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
      if (ec != std::errc() || ptr != value.data() + value.size()) return std::nullopt;
      return n;
    }
    if (eol == std::string_view::npos) break;
    headers.remove_prefix(eol + 2);
  }
  return std::nullopt;
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
    return too_deep_ || dom_.key(k);
  }

  bool parse_error(std::size_t position, const std::string& token, const nlohmann::detail::exception& e) {
    return dom_.parse_error(position, token, e);
  }

 private:
  nlohmann::detail::json_sax_dom_parser<json> dom_;
  std::size_t depth_ = 0;
  bool too_deep_ = false;
  bool at_id_ = false;  // the next value is the top-level "id"
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

}  // namespace

void FrameReader::compact() {
  if (consumed_ > 0 && (consumed_ == buffer_.size() || consumed_ > 1 << 20)) {
    buffer_.erase(0, consumed_);
    consumed_ = 0;
  }
}

std::optional<FrameReader::Frame> FrameReader::next() {
  if (skip_ > 0) {
    std::size_t n = std::min(skip_, pending());
    consumed_ += n;
    skip_ -= n;
    compact();
    if (skip_ > 0) return std::nullopt;
  }
  std::string_view rest(buffer_.data() + consumed_, pending());
  std::size_t header_end = rest.find(kHeaderEnd);
  if (header_end == std::string_view::npos) {
    if (rest.size() > kMaxHeader) {
      consumed_ = buffer_.size();
      compact();
      return Frame{"", "header block longer than 64 KiB without a blank line; discarded"};
    }
    return std::nullopt;
  }
  std::optional<std::size_t> length = content_length(rest.substr(0, header_end));
  std::size_t body_start = header_end + kHeaderEnd.size();
  if (!length) {
    consumed_ += body_start;
    compact();
    return Frame{"", "header block without a valid Content-Length"};
  }
  if (*length > kMaxBody) {
    consumed_ += body_start;
    skip_ = *length;
    compact();
    return Frame{"", "message of " + std::to_string(*length) + " bytes exceeds the 256 MiB limit"};
  }
  if (rest.size() - body_start < *length) return std::nullopt;
  Frame frame{std::string(rest.substr(body_start, *length)), ""};
  consumed_ += body_start + *length;
  compact();
  return frame;
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
  if (!json::sax_parse(body, &sax, json::input_format_t::json, /*strict=*/true))
    return Invalid{nullptr, error_code::kParseError, "malformed JSON"};
  if (sax.too_deep()) {
    json id = sax.id();
    return Invalid{is_valid_id(id) ? id : json(), error_code::kInvalidRequest,
                   "JSON nested deeper than " + std::to_string(kMaxNesting) + " levels"};
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
