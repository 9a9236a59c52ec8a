#include "server/cli/gpus_command.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "estimator/catalog.h"
#include "estimator/report.h"
#include "server/cli/check_command.h"

namespace preflight::server {
namespace {

namespace est = preflight::estimator;

std::string padded(std::string s, std::size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

std::string aliases_of(const est::Gpu& g) {
  std::string out;
  for (const std::string& a : g.aliases) out += (out.empty() ? "" : ", ") + a;
  return out;
}

void write_terminal(const est::Catalog& c, bool instances, std::ostream& out) {
  out << "GPUs (usable memory per device, before the CUDA context)\n";
  for (const est::Gpu& g : c.gpus()) {
    out << "  " << padded(g.id, 16) << padded(est::format_bytes(g.usable_bytes), 12) << padded(g.display_name, 40);
    if (g.devices_per_board > 1) out << " [" << g.devices_per_board << " devices per board]";
    if (!g.aliases.empty()) out << " (" << aliases_of(g) << ")";
    out << "\n";
  }
  if (!instances) {
    out << "\n--instances also lists cloud instance types.\n";
    return;
  }
  out << "\nCloud instances\n";
  for (const est::Instance& i : c.instances()) {
    const est::Gpu* g = c.gpu_by_id(i.gpu);
    out << "  " << padded(i.id, 30) << padded(std::to_string(i.gpu_count) + "x " + (g ? g->display_name : i.gpu), 44)
        << " (" << i.provider << (i.confirmed ? "" : ", not confirmed") << ")\n";
  }
}

nlohmann::ordered_json to_json(const est::Catalog& c, bool instances) {
  nlohmann::ordered_json gpus = nlohmann::ordered_json::array();
  for (const est::Gpu& g : c.gpus())
    gpus.push_back({{"id", g.id}, {"name", g.display_name}, {"aliases", g.aliases}, {"usable_bytes", g.usable_bytes},
                    {"usable_basis", g.usable_basis}, {"memory_bytes_nominal", g.memory_bytes_nominal},
                    {"devices_per_board", g.devices_per_board}, {"bf16", g.bf16}, {"fp8", g.fp8}});
  nlohmann::ordered_json out = {{"gpus", gpus}};
  if (instances) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const est::Instance& i : c.instances())
      list.push_back({{"id", i.id}, {"provider", i.provider}, {"gpu", i.gpu}, {"gpu_count", i.gpu_count},
                      {"confirmed", i.confirmed}});
    out["instances"] = list;
  }
  return out;
}

}  // namespace

CLI::App* add_gpus_command(CLI::App& app, GpusArgs& args) {
  CLI::App* cmd = app.add_subcommand("gpus", "List known GPUs (and, with --instances, cloud instance types)");
  cmd->add_flag("--instances", args.instances, "Also list cloud instance types");
  cmd->add_option("-f,--format", args.format, "Output format: terminal or json");
  return cmd;
}

int run_gpus(const GpusArgs& args, std::ostream& out, std::ostream& err) {
  const est::Catalog& c = est::builtin_catalog();
  if (args.format == "json") {
    out << to_json(c, args.instances).dump(2) << "\n";
    return kExitClean;
  }
  if (args.format != "terminal") {
    err << "preflight: unknown --format '" << args.format << "' (terminal or json)\n";
    return kExitUsage;
  }
  write_terminal(c, args.instances, out);
  return kExitClean;
}

}  // namespace preflight::server
