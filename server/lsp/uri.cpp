#include "server/lsp/uri.h"

#include <cctype>

namespace preflight::lsp {

namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Unreserved characters and the path separators stay as they are; everything else is
// percent-encoded byte by byte, as VS Code writes URIs.
bool keep_unencoded(unsigned char c) {
  return std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '/';
}

}  // namespace

std::optional<std::filesystem::path> uri_to_path(std::string_view uri) {
  constexpr std::string_view kScheme = "file://";
  if (!uri.starts_with(kScheme)) return std::nullopt;
  std::string_view rest = uri.substr(kScheme.size());
  std::size_t slash = rest.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  std::string_view authority = rest.substr(0, slash);
  if (!authority.empty() && authority != "localhost") return std::nullopt;  // a remote share
  std::string_view encoded = rest.substr(slash);
  std::string decoded;
  for (std::size_t i = 0; i < encoded.size(); ++i) {
    if (encoded[i] == '%' && i + 2 < encoded.size()) {
      int hi = hex_value(encoded[i + 1]);
      int lo = hex_value(encoded[i + 2]);
      if (hi >= 0 && lo >= 0) {
        decoded += static_cast<char>(hi * 16 + lo);
        i += 2;
        continue;
      }
    }
    if (encoded[i] == '?' || encoded[i] == '#') break;  // query / fragment are not the path
    decoded += encoded[i];
  }
  return std::filesystem::path(decoded);
}

std::string path_to_uri(const std::filesystem::path& path) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out = "file://";
  for (unsigned char c : path.generic_string()) {
    if (keep_unencoded(c)) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

}  // namespace preflight::lsp
