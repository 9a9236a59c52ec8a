// A main for the fuzz targets without libFuzzer (the g++ and ASan test builds): runs
// LLVMFuzzerTestOneInput once on every file named, or found under a directory named, in
// sorted order. A violated invariant aborts, which fails the ctest that replays the folder.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace fs = std::filesystem;

static std::vector<fs::path> inputs(const fs::path& arg) {
  std::vector<fs::path> out;
  if (fs::is_directory(arg)) {
    for (const auto& e : fs::recursive_directory_iterator(arg))
      if (e.is_regular_file() && e.path().filename().string().front() != '.') out.push_back(e.path());
  } else if (fs::exists(arg)) {
    out.push_back(arg);
  }
  std::sort(out.begin(), out.end());
  return out;
}

int main(int argc, char** argv) {
  std::size_t count = 0;
  for (int i = 1; i < argc; ++i)
    for (const fs::path& file : inputs(argv[i])) {
      std::ifstream in(file, std::ios::binary);
      std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
      std::fprintf(stderr, "replay %s (%zu bytes)\n", file.c_str(), bytes.size());
      LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
      ++count;
    }
  std::fprintf(stderr, "replayed %zu inputs\n", count);
  return 0;
}
