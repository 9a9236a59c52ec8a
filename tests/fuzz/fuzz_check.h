// Shared by the fuzz targets: a failed invariant that libFuzzer reports as a crash, and a
// reader that turns the input bytes into choices.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace preflight::fuzz {

// abort() rather than an exception: the targets must see every violation, and the libFuzzer
// driver turns the abort into a crash artifact with the input that caused it.
[[noreturn]] inline void fail(std::string_view what, std::string_view detail = {}) {
  std::fprintf(stderr, "fuzz invariant violated: %.*s\n%.*s\n", static_cast<int>(what.size()), what.data(),
               static_cast<int>(detail.size()), detail.data());
  std::abort();
}

inline void require(bool ok, std::string_view what, std::string_view detail = {}) {
  if (!ok) fail(what, detail);
}

// Consumes the input from the front: small integers for choices, then the rest as bytes.
// Exhausted input yields zeros, so every input is a valid script.
class ByteReader {
 public:
  ByteReader(const uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  bool empty() const { return pos_ >= size_; }
  uint8_t byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  uint16_t u16() {
    uint16_t low = byte();  // two statements: the order of reads must not be unspecified
    return static_cast<uint16_t>(low | (byte() << 8));
  }
  std::string bytes(std::size_t n) {
    n = std::min(n, size_ - std::min(pos_, size_));
    std::string out(reinterpret_cast<const char*>(data_ + pos_), n);
    pos_ += n;
    return out;
  }

 private:
  const uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

}  // namespace preflight::fuzz
