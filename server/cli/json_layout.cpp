#include "server/cli/json_layout.h"

namespace preflight::server::json_layout {

namespace {

constexpr int kIndent = 2;  // dump(2)

std::string indent(int depth) { return std::string(static_cast<std::size_t>(depth * kIndent), ' '); }

// Joins pre-rendered entries the way the serializer does: one per line, at depth + 1.
std::string block(char open, char close, const std::vector<std::string>& entries, int depth) {
  if (entries.empty()) return std::string{open, close};
  std::string out(1, open);
  out += '\n';
  for (std::size_t i = 0; i < entries.size(); ++i) {
    out += indent(depth + 1);
    out += entries[i];
    out += i + 1 < entries.size() ? ",\n" : "\n";
  }
  return out + indent(depth) + close;
}

}  // namespace

std::string nested(const Json& value, int depth) {
  std::string flat = value.dump(kIndent, ' ', false, Json::error_handler_t::replace);
  std::string pad = indent(depth);
  std::string out;
  out.reserve(flat.size());
  for (char c : flat) {
    out += c;
    if (c == '\n') out += pad;  // strings never hold a raw newline: it is escaped
  }
  return out;
}

std::string array(const std::vector<std::string>& items, int depth) {
  return block('[', ']', items, depth);
}

std::string object(const std::vector<Member>& members, int depth) {
  std::vector<std::string> entries;
  entries.reserve(members.size());
  for (const auto& [key, value] : members) entries.push_back(Json(key).dump() + ": " + value);
  return block('{', '}', entries, depth);
}

}  // namespace preflight::server::json_layout
