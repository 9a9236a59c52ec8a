// Exact parameter counts of the built-in torchvision CNNs, from their architecture
// definitions (torchvision.models: resnet.py, vgg.py, densenet.py, mobilenetv2.py,
// efficientnet.py, convnext.py). Convolutions without bias are followed by BatchNorm
// (weight + bias); classifiers are the ImageNet-1k heads the published counts include.
#include <algorithm>
#include <array>
#include <vector>

#include "estimator/layout.h"

namespace preflight::estimator {
namespace {

int64_t conv(int64_t in, int64_t out, int64_t k, bool bias = false, int64_t groups = 1) {
  return in / groups * out * k * k + (bias ? out : 0);
}
int64_t batch_norm(int64_t c) { return 2 * c; }
int64_t linear(int64_t in, int64_t out) { return in * out + out; }

int64_t resnet(const std::array<int, 4>& blocks, bool bottleneck, int64_t classes) {
  const int64_t expansion = bottleneck ? 4 : 1;
  int64_t total = conv(3, 64, 7) + batch_norm(64);
  int64_t in = 64;
  for (int stage = 0; stage < 4; ++stage) {
    const int64_t planes = 64LL << stage;
    for (int b = 0; b < blocks[stage]; ++b) {
      const bool strided = b == 0 && stage > 0;
      if (bottleneck)
        total += conv(in, planes, 1) + batch_norm(planes) + conv(planes, planes, 3) + batch_norm(planes) +
                 conv(planes, planes * 4, 1) + batch_norm(planes * 4);
      else
        total += conv(in, planes, 3) + batch_norm(planes) + conv(planes, planes, 3) + batch_norm(planes);
      if (b == 0 && (strided || in != planes * expansion))
        total += conv(in, planes * expansion, 1) + batch_norm(planes * expansion);
      in = planes * expansion;
    }
  }
  return total + linear(in, classes);
}

int64_t vgg(const std::vector<int>& config, int64_t classes) {
  int64_t total = 0, in = 3;
  for (int c : config) {
    if (c == 0) continue;  // max-pool
    total += conv(in, c, 3, true);
    in = c;
  }
  return total + linear(512 * 7 * 7, 4096) + linear(4096, 4096) + linear(4096, classes);
}

int64_t densenet121(int64_t classes) {
  const int64_t growth = 32, bottleneck = 4 * growth;
  const std::array<int, 4> blocks = {6, 12, 24, 16};
  int64_t total = conv(3, 64, 7) + batch_norm(64), c = 64;
  for (int stage = 0; stage < 4; ++stage) {
    for (int l = 0; l < blocks[stage]; ++l) {
      total += batch_norm(c) + conv(c, bottleneck, 1) + batch_norm(bottleneck) + conv(bottleneck, growth, 3);
      c += growth;
    }
    if (stage < 3) {
      total += batch_norm(c) + conv(c, c / 2, 1);
      c /= 2;
    }
  }
  return total + batch_norm(c) + linear(c, classes);
}

int64_t mobilenet_v2(int64_t classes) {
  struct Setting { int t, c, n, s; };
  constexpr std::array<Setting, 7> settings = {{{1, 16, 1, 1}, {6, 24, 2, 2}, {6, 32, 3, 2}, {6, 64, 4, 2},
                                               {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}}};
  int64_t total = conv(3, 32, 3) + batch_norm(32), in = 32;
  for (const Setting& st : settings)
    for (int i = 0; i < st.n; ++i) {
      const int64_t hidden = in * st.t;
      if (st.t != 1) total += conv(in, hidden, 1) + batch_norm(hidden);
      total += conv(hidden, hidden, 3, false, hidden) + batch_norm(hidden) + conv(hidden, st.c, 1) + batch_norm(st.c);
      in = st.c;
    }
  return total + conv(in, 1280, 1) + batch_norm(1280) + linear(1280, classes);
}

int64_t efficientnet_b0(int64_t classes) {
  struct Stage { int expand, kernel, in, out, layers; };
  constexpr std::array<Stage, 7> stages = {{{1, 3, 32, 16, 1}, {6, 3, 16, 24, 2}, {6, 5, 24, 40, 2},
                                           {6, 3, 40, 80, 3}, {6, 5, 80, 112, 3}, {6, 5, 112, 192, 4},
                                           {6, 3, 192, 320, 1}}};
  int64_t total = conv(3, 32, 3) + batch_norm(32);
  for (const Stage& st : stages)
    for (int i = 0; i < st.layers; ++i) {
      const int64_t in = i == 0 ? st.in : st.out, expanded = in * st.expand;
      const int64_t squeeze = std::max<int64_t>(1, in / 4);
      if (st.expand != 1) total += conv(in, expanded, 1) + batch_norm(expanded);
      total += conv(expanded, expanded, st.kernel, false, expanded) + batch_norm(expanded);
      total += conv(expanded, squeeze, 1, true) + conv(squeeze, expanded, 1, true);  // squeeze-excitation
      total += conv(expanded, st.out, 1) + batch_norm(st.out);
    }
  return total + conv(320, 1280, 1) + batch_norm(1280) + linear(1280, classes);
}

int64_t convnext_tiny(int64_t classes) {
  constexpr std::array<int, 4> depths = {3, 3, 9, 3};
  constexpr std::array<int64_t, 4> dims = {96, 192, 384, 768};
  int64_t total = conv(3, 96, 4, true) + 2 * 96;  // patchify stem + LayerNorm2d
  for (int stage = 0; stage < 4; ++stage) {
    const int64_t d = dims[stage];
    if (stage > 0) total += 2 * dims[stage - 1] + conv(dims[stage - 1], d, 2, true);
    // depthwise 7x7, LayerNorm, two linears, layer scale
    total += depths[stage] * (conv(d, d, 7, true, d) + 2 * d + linear(d, 4 * d) + linear(4 * d, d) + d);
  }
  return total + 2 * 768 + linear(768, classes);
}

}  // namespace

std::optional<int64_t> cnn_parameter_count(const Architecture& a) {
  const int64_t classes = a.cnn ? a.cnn->num_classes : 1000;
  const std::string_view id = a.id;
  if (id == "resnet18") return resnet({2, 2, 2, 2}, false, classes);
  if (id == "resnet34") return resnet({3, 4, 6, 3}, false, classes);
  if (id == "resnet50") return resnet({3, 4, 6, 3}, true, classes);
  if (id == "resnet101") return resnet({3, 4, 23, 3}, true, classes);
  if (id == "resnet152") return resnet({3, 8, 36, 3}, true, classes);
  if (id == "vgg16") return vgg({64, 64, 0, 128, 128, 0, 256, 256, 256, 0, 512, 512, 512, 0, 512, 512, 512, 0}, classes);
  if (id == "vgg19")
    return vgg({64, 64, 0, 128, 128, 0, 256, 256, 256, 256, 0, 512, 512, 512, 512, 0, 512, 512, 512, 512, 0}, classes);
  if (id == "densenet121") return densenet121(classes);
  if (id == "mobilenet_v2") return mobilenet_v2(classes);
  if (id == "efficientnet_b0") return efficientnet_b0(classes);
  if (id == "convnext_tiny") return convnext_tiny(classes);
  return std::nullopt;
}

}  // namespace preflight::estimator
