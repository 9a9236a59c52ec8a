#include "server/cli/config.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <stdexcept>
#include <string_view>
#include <system_error>
#include <toml++/toml.h>

#include "rules/engine.h"
#include "server/cli/file_io.h"
#include "server/cli/rule_catalogue.h"

namespace preflight::server {

using analysis::Severity;
namespace fs = std::filesystem;

namespace {

constexpr std::array<std::string_view, 4> kConfigNames = {
    ".preflight.toml", ".torch-preflight.toml", "torch-preflight.toml", "pyproject.toml"};
constexpr std::array<std::string_view, 2> kToolTables = {"preflight", "torch-preflight"};

// A configuration error at a position; caught once, in load_config.
struct ConfigError : std::runtime_error {
  ConfigError(const toml::source_region& where, const std::string& what)
      : std::runtime_error(what), line(where.begin.line), column(where.begin.column) {}
  uint32_t line;
  uint32_t column;
};

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::optional<Severity> parse_level(std::string_view value) {
  std::string v(value);
  for (char& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (v == "error") return Severity::Error;
  if (v == "warning") return Severity::Warning;
  if (v == "note") return Severity::Note;
  return std::nullopt;
}

// The tool table of a pyproject.toml: [tool.preflight] wins over [tool.torch-preflight].
// Returns nullptr when it has neither; a tool entry that is not a table is an error.
const toml::table* pyproject_table(const toml::table& root, std::string& prefix) {
  const toml::table* tool = root["tool"].as_table();
  if (!tool) return nullptr;
  for (std::string_view name : kToolTables) {
    const toml::node* node = tool->get(name);
    if (!node) continue;
    prefix = "tool." + std::string(name) + ".";
    if (const toml::table* t = node->as_table()) return t;
    throw ConfigError(node->source(), "[tool." + std::string(name) + "] must be a table");
  }
  return nullptr;
}

// Reads the keys of one configuration table into a Config.
class TableReader {
 public:
  TableReader(std::string prefix, std::string display, ConfigResult& out)
      : prefix_(std::move(prefix)), display_(std::move(display)), out_(out) {}

  // Warnings come out in file order (a toml::table iterates its keys sorted).
  void read(const toml::table& table) {
    for (auto&& [key, node] : table) read_key(key, node);
    std::stable_sort(warnings_.begin(), warnings_.end(),
                     [](const Warning& a, const Warning& b) { return a.where < b.where; });
    for (Warning& w : warnings_) out_.warnings.push_back(std::move(w.text));
  }

 private:
  void read_key(const toml::key& key, const toml::node& node);
  std::vector<std::string> strings(const toml::node& node, std::string_view key,
                                   std::string_view what);
  std::vector<std::string> codes(const toml::node& node, std::string_view key);
  std::string string_value(const toml::node& node, std::string_view key, std::string_view what);
  void read_severity(const toml::node& node);
  void warn(const toml::source_region& where, const std::string& message) {
    warnings_.push_back({{where.begin.line, where.begin.column},
                         display_ + ":" + std::to_string(where.begin.line) + ":" +
                             std::to_string(where.begin.column) + ": warning: " + message});
  }

  struct Warning {
    std::pair<uint32_t, uint32_t> where;
    std::string text;
  };
  std::vector<Warning> warnings_;
  std::string prefix_;  // "" or "tool.preflight.": how keys are named in messages
  std::string display_;
  ConfigResult& out_;
};

void TableReader::read_key(const toml::key& key, const toml::node& node) {
  Config& c = out_.config;
  std::string_view k = key.str();
  if (k == "select") {
    c.select = codes(node, k);
  } else if (k == "ignore") {
    c.ignore = codes(node, k);
  } else if (k == "exclude") {
    c.exclude = strings(node, k, "a list of path patterns");
  } else if (k == "fail_on") {
    std::string v = string_value(node, k, "\"error\", \"warning\" or \"note\"");
    c.fail_on = parse_level(v);
    if (!c.fail_on)
      throw ConfigError(node.source(), prefix_ + "fail_on must be \"error\", \"warning\" or "
                                                 "\"note\", not \"" + v + "\"");
  } else if (k == "target_gpu") {
    c.target_gpu = string_value(node, k, "a GPU or instance name");
  } else if (k == "respect_gitignore") {
    if (!node.is_boolean())
      throw ConfigError(node.source(), prefix_ + "respect_gitignore must be true or false");
    c.respect_gitignore = node.as_boolean()->get();
  } else if (k == "severity") {
    read_severity(node);
  } else {
    warn(key.source(), "unknown configuration key '" + prefix_ + std::string(k) + "' (ignored)");
  }
}

std::string TableReader::string_value(const toml::node& node, std::string_view key,
                                      std::string_view what) {
  if (std::optional<std::string> v = node.value_exact<std::string>()) return *v;
  throw ConfigError(node.source(), prefix_ + std::string(key) + " must be " + std::string(what));
}

std::vector<std::string> TableReader::strings(const toml::node& node, std::string_view key,
                                              std::string_view what) {
  std::string message = prefix_ + std::string(key) + " must be " + std::string(what);
  const toml::array* array = node.as_array();
  if (!array) throw ConfigError(node.source(), message);
  std::vector<std::string> out;
  for (const toml::node& item : *array) {
    std::optional<std::string> v = item.value_exact<std::string>();
    if (!v) throw ConfigError(item.source(), message);
    out.push_back(std::move(*v));
  }
  return out;
}

std::vector<std::string> TableReader::codes(const toml::node& node, std::string_view key) {
  std::vector<std::string> out = strings(node, key, "a list of rule codes");
  const toml::array& array = *node.as_array();
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i] = upper(out[i]);
    if (!rules::is_known_rule(out[i]))
      warn(array[i].source(),
           "unknown rule code '" + out[i] + "' in " + prefix_ + std::string(key));
  }
  return out;
}

void TableReader::read_severity(const toml::node& node) {
  const toml::table* table = node.as_table();
  if (!table)
    throw ConfigError(node.source(), "[" + prefix_ + "severity] must be a table of rule codes");
  for (auto&& [key, value] : *table) {
    std::string code = upper(key.str());
    std::string where = "[" + prefix_ + "severity] " + code;
    if (!find_rule_info(code))
      throw ConfigError(key.source(), "unknown rule code '" + code + "' in [" + prefix_ +
                                          "severity]");
    std::string v = string_value(value, "severity." + code, "\"error\", \"warning\" or \"note\"");
    std::optional<Severity> level = parse_level(v);
    if (!level)
      throw ConfigError(value.source(), where + " must be \"error\", \"warning\" or \"note\", "
                                                "not \"" + v + "\"");
    out_.config.severity[code] = *level;
  }
}

toml::table parse_toml(const fs::path& file, const std::string& display) {
  ReadResult read = read_source_file(file);
  if (!read.text) throw ConfigError(toml::source_region{}, "cannot read configuration: " + read.error);
  try {
    return toml::parse(*read.text, display);
  } catch (const toml::parse_error& e) {
    throw ConfigError(e.source(), std::string(e.description()));
  }
}

bool has_tool_table(const fs::path& file) {
  try {
    std::string prefix;
    return pyproject_table(parse_toml(file, file.string()), prefix) != nullptr;
  } catch (const ConfigError&) {
    return true;  // unreadable or malformed: load_config reports it
  }
}

bool is_config_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

}  // namespace

ConfigLocation config_location_for(const fs::path& file) {
  bool pyproject = file.filename() == "pyproject.toml";
  return {file, pyproject ? ConfigKind::Pyproject : ConfigKind::WholeFile};
}

std::optional<ConfigLocation> find_config(const fs::path& start_dir) {
  for (fs::path dir = start_dir;; dir = dir.parent_path()) {
    for (std::string_view name : kConfigNames) {
      fs::path candidate = dir / name;
      if (!is_config_file(candidate)) continue;
      ConfigLocation location = config_location_for(candidate);
      if (location.kind == ConfigKind::WholeFile || has_tool_table(candidate)) return location;
    }
    if (dir == dir.parent_path() || dir.empty()) return std::nullopt;
  }
}

ConfigStamp config_stamp(const fs::path& start_dir) {
  ConfigStamp stamp;
  for (fs::path dir = start_dir;; dir = dir.parent_path()) {
    for (std::string_view name : kConfigNames) {
      fs::path candidate = dir / name;
      std::error_code ec;
      if (!is_config_file(candidate)) continue;
      fs::file_time_type modified = fs::last_write_time(candidate, ec);
      std::uintmax_t size = fs::file_size(candidate, ec);
      stamp.files.push_back({std::move(candidate), modified, size});
    }
    if (dir == dir.parent_path() || dir.empty()) return stamp;
  }
}

ConfigResult load_config(const ConfigLocation& location, const std::string& display) {
  ConfigResult result;
  result.config.file = location.file;
  result.config.dir = location.file.parent_path();
  try {
    toml::table root = parse_toml(location.file, display);
    std::string prefix;
    const toml::table* table = &root;
    if (location.kind == ConfigKind::Pyproject) table = pyproject_table(root, prefix);
    if (table) TableReader(prefix, display, result).read(*table);
  } catch (const ConfigError& e) {
    result.error = display + ":" + std::to_string(std::max<uint32_t>(e.line, 1)) + ":" +
                   std::to_string(std::max<uint32_t>(e.column, 1)) + ": error: " + e.what();
  }
  return result;
}

}  // namespace preflight::server
