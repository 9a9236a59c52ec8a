// `preflight gpus [--instances] [--format terminal|json]`: the GPU catalogue (usable memory
// per device and how it was obtained, devices per board) and, with --instances, every cloud
// instance type with its GPU and device count.
#pragma once

#include <ostream>
#include <string>

namespace CLI {
class App;
}

namespace preflight::server {

struct GpusArgs {
  bool instances = false;
  std::string format = "terminal";
};

CLI::App* add_gpus_command(CLI::App& app, GpusArgs& args);
int run_gpus(const GpusArgs& args, std::ostream& out, std::ostream& err);

}  // namespace preflight::server
