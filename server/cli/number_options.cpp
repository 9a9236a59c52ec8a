#include "server/cli/number_options.h"

#include <CLI/CLI.hpp>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace preflight::server {

namespace {

std::string_view without_plus(std::string_view text) {
  if (text.starts_with('+')) text.remove_prefix(1);
  return text;
}

// 1e6 -> "1000000", 0.5 -> "0.5": the bounds as a user would type them.
std::string number_text(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.15g", v);
  return buf;
}

std::string with_note(const std::string& note) { return note.empty() ? "" : " (" + note + ")"; }

}  // namespace

std::optional<int64_t> parse_integer(std::string_view text) {
  text = without_plus(text);
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

std::optional<double> parse_finite(std::string_view text) {
  text = without_plus(text);
  double v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v))
    return std::nullopt;
  return v;
}

CLI::Validator integer_in(int64_t min, int64_t max, std::string note) {
  std::string range = std::to_string(min) + " to " + std::to_string(max);
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        std::optional<int64_t> v = parse_integer(text);
        if (v && *v >= min && *v <= max) return "";
        return "must be an integer from " + range + with_note(note) + ", not '" + text + "'";
      },
      range);
}

CLI::Validator number_in(double min, double max, std::string unit, std::string note) {
  std::string range = number_text(min) + " to " + number_text(max);
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        std::optional<double> v = parse_finite(text);
        if (v && *v >= min && *v <= max) return "";
        return "must be a number of " + unit + " from " + range + with_note(note) + ", not '" + text + "'";
      },
      unit == "seconds" ? "SECONDS" : range);
}

}  // namespace preflight::server
