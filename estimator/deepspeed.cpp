#include "estimator/deepspeed.h"

#include <algorithm>
#include <initializer_list>
#include <type_traits>

namespace preflight::estimator {
namespace {

using json = nlohmann::json;

const json* at(const json& document, std::initializer_list<const char*> path) {
  const json* node = &document;
  for (const char* key : path) {
    if (!node->is_object()) return nullptr;
    auto it = node->find(key);
    if (it == node->end()) return nullptr;
    node = &*it;
  }
  return node;
}

std::string dotted(std::initializer_list<const char*> path) {
  std::string out;
  for (const char* key : path) out += (out.empty() ? "" : ".") + std::string(key);
  return out;
}

// Present but not a value the model can use: "auto", or an unfolded script expression.
std::string blocking_of(const json& v) {
  if (v.is_object() && v.contains(kUnfoldedKey)) return v[std::string(kUnfoldedKey)].get<std::string>();
  return v.dump();
}

// The largest integer a DeepSpeed setting is read as (a micro-batch, accumulation steps).
constexpr int64_t kMaxSetting = int64_t(1) << 30;

// An integer from `min` to kMaxSetting; anything else is blocking. A number outside the range
// (a negative, 0 where DeepSpeed asserts a positive value, a fraction, one past int) says so.
DeepSpeedSetting<int> int_setting(const json& document, std::initializer_list<const char*> path, int64_t min) {
  DeepSpeedSetting<int> s;
  s.key = dotted(path);
  const json* v = at(document, path);
  if (!v) return s;
  const bool in_range = v->is_number_unsigned() ? v->get<uint64_t>() >= uint64_t(min) && v->get<uint64_t>() <= uint64_t(kMaxSetting)
                        : v->is_number_integer() ? v->get<int64_t>() >= min && v->get<int64_t>() <= kMaxSetting
                                                 : false;
  if (in_range) s.value = static_cast<int>(v->get<int64_t>());
  else if (v->is_number()) s.blocking = v->dump() + " (not an integer from " + std::to_string(min) + " to " + std::to_string(kMaxSetting) + ")";
  else s.blocking = blocking_of(*v);
  return s;
}

// `offload_optimizer` / `offload_param`: `device` cpu or nvme offloads; none (DeepSpeed's
// default device) does not.
DeepSpeedSetting<bool> offload_setting(const json& document, const char* block) {
  DeepSpeedSetting<bool> s;
  s.key = dotted({"zero_optimization", block, "device"});
  const json* b = at(document, {"zero_optimization", block});
  if (!b || b->is_null()) return s;
  if (!b->is_object() || b->contains(kUnfoldedKey)) {
    s.blocking = blocking_of(*b);
    return s;
  }
  const json* device = at(*b, {"device"});
  if (!device) s.value = false;
  else if (device->is_string() && (*device == "cpu" || *device == "nvme")) s.value = true;
  else if (device->is_string() && *device == "none") s.value = false;
  else s.blocking = blocking_of(*device);
  return s;
}

// bf16.enabled / bfloat16.enabled / fp16.enabled: "bf16", "fp16", "none" when a section says
// false and none says true; absent when no section exists.
DeepSpeedSetting<std::string> half_setting(const json& document) {
  DeepSpeedSetting<std::string> s;
  bool any = false;
  for (auto [section, name] : {std::pair{"bf16", "bf16"}, {"bfloat16", "bf16"}, {"fp16", "fp16"}}) {
    const json* enabled = at(document, {section, "enabled"});
    if (!enabled) continue;
    any = true;
    if (enabled->is_boolean()) {
      if (enabled->get<bool>()) {
        s.key = std::string(section) + ".enabled";
        s.value = name;
        s.blocking.clear();
        return s;
      }
    } else if (s.blocking.empty()) {
      s.key = std::string(section) + ".enabled";
      s.blocking = blocking_of(*enabled);
    }
  }
  if (any && s.blocking.empty()) s.key = "bf16.enabled / fp16.enabled", s.value = "none";
  return s;
}

template <class T>
std::string value_text(const T& v) {
  if constexpr (std::is_same_v<T, bool>) return v ? "true" : "false";
  else if constexpr (std::is_same_v<T, std::string>) return v;
  else return std::to_string(v);
}

template <class T>
Source stated_source(const Source& where, const DeepSpeedSetting<T>& s) {
  Source out = where;
  out.detail = where.detail + ": " + s.key + "=" + value_text(*s.value);
  return out;
}

template <class T>
Source unknown_source(const Source& where, const DeepSpeedSetting<T>& s) {
  return Source{SourceKind::Unknown, where.detail + ": " + s.key, where.range, s.key + ": " + s.blocking};
}

// "auto": the Hugging Face integration fills it from the arguments the script already passes,
// so a stated value stands; an unstated one becomes Unknown.
template <class F, class T>
void apply(Field<F>& field, const DeepSpeedSetting<T>& s, const Source& where, F value_if_set) {
  if (s.value) field.set(value_if_set, stated_source(where, s));
  else if (!s.blocking.empty() && !field.stated()) field.source = unknown_source(where, s);
}

void apply_stage(const DeepSpeedConfig& c, const Source& where, JobSpec& job) {
  if (!c.stage.present()) return;
  if (!c.stage.value) {
    job.sharding.source = unknown_source(where, c.stage);
    return;
  }
  static constexpr Sharding kByStage[] = {Sharding::Ddp, Sharding::Zero1, Sharding::Zero2, Sharding::Zero3};
  if (*c.stage.value > 3) {
    DeepSpeedSetting<int> bad = c.stage;
    bad.blocking = std::to_string(*c.stage.value) + " (no such stage)";
    job.sharding.source = unknown_source(where, bad);
    return;
  }
  job.sharding.set(kByStage[*c.stage.value], stated_source(where, c.stage));
}

void apply_half(const DeepSpeedConfig& c, const Source& where, JobSpec& job) {
  const DeepSpeedSetting<std::string>& h = c.half;
  if (h.value && *h.value != "none") {
    // DeepSpeed's bf16 / fp16 engines keep half weights, an fp32 master copy and fp32 state.
    Source s = stated_source(where, h);
    s.detail += " (half weights + fp32 master copy)";
    job.precision.set(Precision::Fp16Master, s);
  } else if (h.value) {
    job.precision.set(Precision::Fp32, stated_source(where, h));
  } else if (!h.blocking.empty()) {
    const Precision p = job.precision.value;
    const bool script_half = job.precision.stated() && p != Precision::Fp32;
    if (script_half) {
      Source s = job.precision.source;
      s.detail += "; DeepSpeed " + h.key + "=\"auto\" follows it (half weights + fp32 master copy)";
      job.precision.set(Precision::Fp16Master, s);
    } else {
      job.precision.source = unknown_source(where, h);
    }
  }
}

// train_batch_size = micro-batch x accumulation x world size: the world size when it divides.
void derive_world_size(const DeepSpeedConfig& c, const Source& where, JobSpec& job) {
  if (!c.train_batch.value || job.world_size.stated() || !job.batch_size.stated()) return;
  const int64_t per_step = int64_t(job.batch_size.value) * std::max(1, job.accumulation_steps.value);
  if (per_step <= 0 || *c.train_batch.value % per_step != 0) return;
  Source s = Source::derived(where.detail + ": train_batch_size / (micro-batch x accumulation)");
  s.range = where.range;
  job.world_size.set(static_cast<int>(*c.train_batch.value / per_step), s);
}

}  // namespace

std::optional<DeepSpeedConfig> parse_deepspeed_config(const json& document, std::string& error) {
  if (!document.is_object()) {
    error = "a DeepSpeed config is a JSON object";
    return std::nullopt;
  }
  DeepSpeedConfig c;
  c.stage = int_setting(document, {"zero_optimization", "stage"}, 0);
  c.offload_optimizer = offload_setting(document, "offload_optimizer");
  // The deprecated spelling (`"cpu_offload": true`) means the optimizer.
  if (!c.offload_optimizer.present())
    if (const json* old = at(document, {"zero_optimization", "cpu_offload"}); old && old->is_boolean())
      c.offload_optimizer.key = "zero_optimization.cpu_offload", c.offload_optimizer.value = old->get<bool>();
  c.offload_params = offload_setting(document, "offload_param");
  c.half = half_setting(document);
  c.micro_batch = int_setting(document, {"train_micro_batch_size_per_gpu"}, 1);
  c.accumulation = int_setting(document, {"gradient_accumulation_steps"}, 1);
  c.train_batch = int_setting(document, {"train_batch_size"}, 1);
  return c;
}

std::optional<DeepSpeedConfig> parse_deepspeed_json(std::string_view text, std::string& error) {
  json document = json::parse(text, nullptr, /*allow_exceptions=*/false, /*ignore_comments=*/true);
  if (document.is_discarded()) {
    error = "not valid JSON";
    return std::nullopt;
  }
  return parse_deepspeed_config(document, error);
}

void apply_deepspeed_config(const DeepSpeedConfig& c, const Source& where, JobSpec& job) {
  apply_stage(c, where, job);
  if (c.offload_optimizer.value) job.offload_optimizer.set(*c.offload_optimizer.value, stated_source(where, c.offload_optimizer));
  else if (!c.offload_optimizer.blocking.empty()) job.offload_optimizer.source = unknown_source(where, c.offload_optimizer);
  if (c.offload_params.value) job.offload_params.set(*c.offload_params.value, stated_source(where, c.offload_params));
  else if (!c.offload_params.blocking.empty()) job.offload_params.source = unknown_source(where, c.offload_params);
  apply_half(c, where, job);
  apply(job.batch_size, c.micro_batch, where, c.micro_batch.value.value_or(1));
  apply(job.accumulation_steps, c.accumulation, where, c.accumulation.value.value_or(1));
  // A micro-batch of 0 is no batch: keep the field's previous value.
  if (job.batch_size.value <= 0) job.batch_size.value = 1;
  if (job.accumulation_steps.value <= 0) job.accumulation_steps.value = 1;
  derive_world_size(c, where, job);
}

}  // namespace preflight::estimator
