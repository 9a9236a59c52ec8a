#include "server/lsp/settings.h"

#include <algorithm>
#include <cctype>

#include "estimator/catalog.h"
#include "estimator/hardware.h"

namespace preflight::lsp {

namespace {

using json = nlohmann::json;

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::optional<analysis::Severity> parse_level(std::string_view level) {
  if (level == "error") return analysis::Severity::Error;
  if (level == "warning") return analysis::Severity::Warning;
  if (level == "note" || level == "info" || level == "information") return analysis::Severity::Note;
  return std::nullopt;
}

std::optional<std::vector<std::string>> parse_codes(const json& v, const char* key,
                                                    std::vector<std::string>& problems) {
  if (!v.is_array()) {
    problems.push_back(std::string("settings: `") + key + "` must be a list of rule codes");
    return std::nullopt;
  }
  std::vector<std::string> codes;
  for (const json& c : v) {
    if (!c.is_string()) {
      problems.push_back(std::string("settings: `") + key + "` holds a value that is not a string");
      continue;
    }
    std::string code = upper(c.get<std::string>());
    if (!rules::is_known_rule(code)) {
      problems.push_back(std::string("settings: `") + key + "` names an unknown rule " + code);
      continue;
    }
    codes.push_back(code);
  }
  return codes;
}

}  // namespace

ClientSettings parse_client_settings(const json& value, std::vector<std::string>& problems) {
  ClientSettings out;
  const json* section = &value;
  if (value.is_object() && value.contains("preflight") && value["preflight"].is_object())
    section = &value["preflight"];
  if (!section->is_object()) return out;
  const json& s = *section;
  if (auto it = s.find("select"); it != s.end() && !it->is_null()) out.select = parse_codes(*it, "select", problems);
  if (auto it = s.find("ignore"); it != s.end() && !it->is_null()) out.ignore = parse_codes(*it, "ignore", problems);
  if (auto it = s.find("targetGpu"); it != s.end() && !it->is_null()) {
    std::string error;
    if (!it->is_string()) problems.push_back("settings: `targetGpu` must be a string");
    else if (it->get<std::string>().empty()) {
    } else if (!estimator::resolve_target(estimator::builtin_catalog(), it->get<std::string>(), std::nullopt, error))
      problems.push_back("settings: `targetGpu`: " + error + "; TG010 stays off");
    else out.target_gpu = it->get<std::string>();
  }
  if (auto it = s.find("severity"); it != s.end() && !it->is_null()) {
    if (!it->is_object()) {
      problems.push_back("settings: `severity` must map rule codes to error / warning / note");
    } else {
      for (auto& [code, level] : it->items()) {
        std::string c = upper(code);
        auto parsed = level.is_string() ? parse_level(level.get<std::string>()) : std::nullopt;
        if (!rules::is_known_rule(c)) problems.push_back("settings: `severity` names an unknown rule " + c);
        else if (!parsed) problems.push_back("settings: `severity." + c + "` must be error, warning or note");
        else out.severity[c] = *parsed;
      }
    }
  }
  return out;
}

std::optional<int> parse_debounce_ms(const json& init, std::vector<std::string>& problems) {
  if (!init.is_object()) return std::nullopt;
  auto it = init.find("debounceMs");
  if (it == init.end() || it->is_null()) return std::nullopt;
  // Compared as the JSON holds it: a get<int>() of 2^32 + 100 would wrap to 100.
  bool in_range = it->is_number_unsigned() ? it->get<uint64_t>() <= uint64_t(kMaxDebounceMs)
                  : it->is_number_integer() ? it->get<int64_t>() >= 0 && it->get<int64_t>() <= kMaxDebounceMs
                                            : false;
  if (in_range) return static_cast<int>(it->get<int64_t>());
  problems.push_back("settings: `debounceMs` must be an integer from 0 to " + std::to_string(kMaxDebounceMs) +
                     " (milliseconds), not " + it->dump() + "; the server's --debounce-ms value is kept");
  return std::nullopt;
}

namespace {

void apply(EffectiveSettings& e, const ClientSettings& layer) {
  if (layer.select && !layer.select->empty())
    e.options.select = std::set<std::string>(layer.select->begin(), layer.select->end());
  if (layer.ignore) e.options.ignore.insert(layer.ignore->begin(), layer.ignore->end());
  for (const auto& [code, level] : layer.severity) e.severity[code] = level;
  if (layer.target_gpu) e.target_gpu = layer.target_gpu;
}

}  // namespace

EffectiveSettings merge(const server::Config& project, const ClientSettings& init,
                        const ClientSettings& workspace) {
  EffectiveSettings e;
  e.options.select = std::set<std::string>(project.select.begin(), project.select.end());
  e.options.ignore = std::set<std::string>(project.ignore.begin(), project.ignore.end());
  e.severity = project.severity;
  e.target_gpu = project.target_gpu;
  e.excludes = project.exclude;
  e.config_dir = project.dir;
  e.respect_gitignore = project.respect_gitignore.value_or(true);
  apply(e, init);
  apply(e, workspace);
  e.options.target_gpu = e.target_gpu.value_or("");
  return e;
}

}  // namespace preflight::lsp
