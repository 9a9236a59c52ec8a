// Pretty-printed JSON put together from pieces, byte for byte what nlohmann's dump(2) writes
// for the whole document. A report renders each entry when its file is checked and writes the
// document once the totals are known, without holding the files or a tree of every entry.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace preflight::server::json_layout {

using Json = nlohmann::ordered_json;

// `value` as dump(2) writes it `depth` levels deep (its continuation lines indented); bytes
// that are not UTF-8 become U+FFFD.
std::string nested(const Json& value, int depth);

// An array at `depth` whose items were rendered with nested(item, depth + 1).
std::string array(const std::vector<std::string>& items, int depth);

// An object at `depth` whose values were rendered with nested(value, depth + 1).
using Member = std::pair<std::string_view, std::string>;
std::string object(const std::vector<Member>& members, int depth);

}  // namespace preflight::server::json_layout
