#include "estimator/hardware.h"

#include <cctype>
#include <charconv>
#include <cmath>

namespace preflight::estimator {
namespace {

constexpr int64_t kMiB = int64_t(1) << 20;
constexpr int64_t kGiB = int64_t(1) << 30;
// Assumed: the slice a driver keeps back from a card of stated capacity (the reference's 2 %).
constexpr double kCustomReserveFraction = 0.02;

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

Target from_gpu(const Gpu& gpu, std::string_view query) {
  Target t;
  t.query = std::string(query);
  t.display_name = gpu.display_name.empty() ? gpu.id : gpu.display_name;
  t.gpu_id = gpu.id;
  t.gpu = &gpu;
  t.usable_bytes = gpu.usable_bytes;
  t.usable_basis = gpu.usable_basis;
  t.device_count = std::max(1, gpu.devices_per_board);
  if (gpu.devices_per_board > 1)
    t.count_basis = "one board exposes " + std::to_string(gpu.devices_per_board) + " devices";
  t.bf16 = gpu.bf16;
  t.fp8 = gpu.fp8;
  t.consumer = gpu.segment == "consumer" || gpu.segment == "workstation";
  if (gpu.anchor && gpu.anchor->measured_context_mib) t.measured_context_bytes = *gpu.anchor->measured_context_mib * kMiB;
  t.reference_usable_bytes = reference_usable_bytes(gpu);
  return t;
}

// `8xa100-80gb`, `a100-80gbx8`, `8*a100-80gb`: a count on either side of an `x` or `*`
// whose other side resolves as a GPU. Every split point is tried, so `rtx4090` (which
// contains an `x`) resolves as itself before any split is considered.
std::optional<Target> multi_device(const Catalog& catalog, const std::string& key, std::string_view query) {
  for (std::size_t i = 0; i < key.size(); ++i) {
    if (key[i] != 'x' && key[i] != '*') continue;
    std::string left = key.substr(0, i), right = key.substr(i + 1);
    const bool count_left = all_digits(left);
    const std::string& count_text = count_left ? left : right;
    const std::string& gpu_text = count_left ? right : left;
    if (!all_digits(count_text) || count_text.size() > 5) continue;
    const Gpu* gpu = catalog.find_gpu(gpu_text);
    if (!gpu) continue;
    int boards = std::stoi(count_text);
    if (boards <= 0) continue;
    Target t = from_gpu(*gpu, query);
    t.device_count = boards * std::max(1, gpu->devices_per_board);
    t.count_basis = std::to_string(boards) + (gpu->devices_per_board > 1 ? " boards x " + std::to_string(gpu->devices_per_board) + " devices" : " devices") + " (from the name)";
    return t;
  }
  return std::nullopt;
}

std::string gib_text(int64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GiB", double(bytes) / double(kGiB));
  return buf;
}

}  // namespace

int64_t reference_usable_bytes(const Gpu& gpu) {
  if (gpu.anchor && gpu.anchor->usable_bytes > 0) return gpu.anchor->usable_bytes;
  const double total_mib = double(gpu.memory_bytes_nominal) / double(kMiB) * std::max(1, gpu.devices_per_board);
  const double reserve = gpu.memory_type.starts_with("HBM") ? 0.025 : 0.02;
  const double display = gpu.segment == "consumer" || gpu.segment == "workstation" ? 400.0 : 0.0;
  return static_cast<int64_t>((total_mib * (1.0 - reserve) - display) * double(kMiB));
}

std::optional<int64_t> parse_memory(std::string_view text) {
  std::string s;
  for (char c : text)
    if (!std::isspace(static_cast<unsigned char>(c))) s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::size_t unit_at = 0;
  while (unit_at < s.size() && (std::isdigit(static_cast<unsigned char>(s[unit_at])) || s[unit_at] == '.')) ++unit_at;
  const std::string number = s.substr(0, unit_at), unit = s.substr(unit_at);
  double value = 0;
  auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (number.empty() || ec != std::errc() || end != number.data() + number.size() || !(value > 0)) return std::nullopt;
  double scale = 0;
  if (unit.empty() || unit == "b") scale = 1;
  else if (unit == "k" || unit == "kb" || unit == "kib") scale = 1024.0;
  else if (unit == "m" || unit == "mb" || unit == "mib") scale = double(kMiB);
  else if (unit == "g" || unit == "gb" || unit == "gib") scale = double(kGiB);
  else if (unit == "t" || unit == "tb" || unit == "tib") scale = double(kGiB) * 1024.0;
  // "0.0001" is no capacity: it would round to 0 bytes.
  if (scale == 0 || value * scale < 0.5 || value * scale > double(kMaxMemoryBytes)) return std::nullopt;
  return static_cast<int64_t>(std::llround(value * scale));
}

std::optional<Target> resolve_target(const Catalog& catalog, std::string_view name,
                                     std::optional<int64_t> explicit_capacity, std::string& error) {
  std::optional<Target> target;
  const std::string key = normalize_name(name);
  if (!key.empty()) {
    if (const Instance* inst = catalog.find_instance(key)) {
      if (const Gpu* gpu = catalog.gpu_by_id(inst->gpu)) {
        target = from_gpu(*gpu, name);
        target->instance = inst->id;
        target->device_count = std::max(1, inst->gpu_count);
        target->count_basis = "instance " + inst->id + ": " + std::to_string(inst->gpu_count) + " devices (" +
                              inst->provider + (inst->confirmed ? ", confirmed" : ", not confirmed") + ")";
      }
    }
    if (!target)
      if (const Gpu* gpu = catalog.find_gpu(key)) target = from_gpu(*gpu, name);
    if (!target) target = multi_device(catalog, key, name);
    if (!target) {
      error = "unknown GPU or instance '" + std::string(name) + "' (see `preflight gpus --instances`)";
      return std::nullopt;
    }
  }
  if (explicit_capacity) {
    const int64_t usable = static_cast<int64_t>(double(*explicit_capacity) * (1.0 - kCustomReserveFraction));
    if (!target) {
      target = Target{};
      target->query = gib_text(*explicit_capacity);
      target->display_name = "custom " + gib_text(*explicit_capacity);
      target->gpu_id = "custom";
      target->bf16 = true;
    }
    target->usable_bytes = usable;
    target->reference_usable_bytes = usable;
    target->usable_basis = "--gpu-memory " + gib_text(*explicit_capacity) + " minus an assumed 2 % driver reserve";
  }
  if (!target) error = "no target: give --gpu or --gpu-memory";
  return target;
}

}  // namespace preflight::estimator
