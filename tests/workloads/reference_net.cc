#include "workloads/reference_net.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace opscope::testing {
namespace {

using devices::LayerKind;
using devices::ParamKind;

int64_t Count(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (const auto d : dims) n *= d;
  return n;
}

const std::vector<double>& Param(const RefParams& params, int layer, ParamKind kind) {
  const auto it = params.find({layer, kind});
  if (it == params.end()) throw std::runtime_error("reference: a parameter is missing");
  return it->second;
}

RefTensor Conv(const RefTensor& x, const std::vector<double>& w, int64_t out_c, int64_t k,
               int64_t stride, int64_t pad) {
  const int64_t n = x.dims[0], c = x.dims[1], h = x.dims[2], wd = x.dims[3];
  const int64_t oh = (h + 2 * pad - k) / stride + 1, ow = (wd + 2 * pad - k) / stride + 1;
  RefTensor y{{n, out_c, oh, ow}, std::vector<double>(n * out_c * oh * ow, 0.0)};
  for (int64_t b = 0; b < n; ++b)
    for (int64_t o = 0; o < out_c; ++o)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          double sum = 0;
          for (int64_t ci = 0; ci < c; ++ci)
            for (int64_t ki = 0; ki < k; ++ki)
              for (int64_t kj = 0; kj < k; ++kj) {
                const int64_t yi = i * stride - pad + ki, xj = j * stride - pad + kj;
                if (yi < 0 || yi >= h || xj < 0 || xj >= wd) continue;
                sum += x.v[((b * c + ci) * h + yi) * wd + xj] * w[((o * c + ci) * k + ki) * k + kj];
              }
          y.v[((b * out_c + o) * oh + i) * ow + j] = sum;
        }
  return y;
}

}  // namespace

RefResult ReferenceForward(const devices::NetworkSpec& spec, const RefParams& params,
                           const std::vector<double>& input, const std::vector<int32_t>& labels,
                           bool training, double bn_epsilon) {
  RefResult r;
  const RefTensor in{{spec.batch, spec.channels, spec.height, spec.width}, input};
  for (size_t li = 0; li < spec.layers.size(); ++li) {
    const auto& l = spec.layers[li];
    const int layer = static_cast<int>(li);
    const auto arg = [&](int which) -> const RefTensor& {
      const int from = l.inputs[which];
      return from < 0 ? in : r.outputs[from];
    };
    const RefTensor& x = arg(0);
    RefTensor y;
    switch (l.kind) {
      case LayerKind::kConv:
        y = Conv(x, Param(params, layer, ParamKind::kWeight), l.channels, l.kernel, l.stride,
                 l.pad);
        break;
      case LayerKind::kBatchNorm: {
        y = x;
        const int64_t n = x.dims[0], c = x.dims[1], hw = x.dims[2] * x.dims[3];
        const auto& scale = Param(params, layer, ParamKind::kScale);
        const auto& shift = Param(params, layer, ParamKind::kShift);
        for (int64_t ch = 0; ch < c; ++ch) {
          double mean = 0, var = 0;
          if (training) {
            for (int64_t b = 0; b < n; ++b)
              for (int64_t k = 0; k < hw; ++k) mean += x.v[(b * c + ch) * hw + k];
            mean /= static_cast<double>(n * hw);
            for (int64_t b = 0; b < n; ++b)
              for (int64_t k = 0; k < hw; ++k) {
                const double d = x.v[(b * c + ch) * hw + k] - mean;
                var += d * d;
              }
            var /= static_cast<double>(n * hw);
          } else {
            mean = Param(params, layer, ParamKind::kRunningMean)[ch];
            var = Param(params, layer, ParamKind::kRunningVar)[ch];
          }
          const double inv = 1.0 / std::sqrt(var + bn_epsilon);
          for (int64_t b = 0; b < n; ++b)
            for (int64_t k = 0; k < hw; ++k) {
              double& v = y.v[(b * c + ch) * hw + k];
              v = (v - mean) * inv * scale[ch] + shift[ch];
              if (l.relu) v = std::max(v, 0.0);
            }
        }
        break;
      }
      case LayerKind::kRelu:
        y = x;
        for (auto& v : y.v) v = std::max(v, 0.0);
        break;
      case LayerKind::kMaxPool: {
        const int64_t n = x.dims[0], c = x.dims[1], h = x.dims[2], w = x.dims[3];
        const int64_t k = l.kernel, s = l.stride, p = l.pad;
        const int64_t oh = (h + 2 * p - k) / s + 1, ow = (w + 2 * p - k) / s + 1;
        y = {{n, c, oh, ow}, std::vector<double>(n * c * oh * ow)};
        for (int64_t b = 0; b < n * c; ++b)
          for (int64_t i = 0; i < oh; ++i)
            for (int64_t j = 0; j < ow; ++j) {
              double best = -std::numeric_limits<double>::infinity();
              for (int64_t ki = 0; ki < k; ++ki)
                for (int64_t kj = 0; kj < k; ++kj) {
                  const int64_t yi = i * s - p + ki, xj = j * s - p + kj;
                  if (yi >= 0 && yi < h && xj >= 0 && xj < w)
                    best = std::max(best, x.v[(b * h + yi) * w + xj]);
                }
              y.v[(b * oh + i) * ow + j] = best;
            }
        break;
      }
      case LayerKind::kGlobalAvgPool: {
        const int64_t nc = x.dims[0] * x.dims[1], hw = x.dims[2] * x.dims[3];
        y = {{x.dims[0], x.dims[1], 1, 1}, std::vector<double>(nc)};
        for (int64_t b = 0; b < nc; ++b) {
          double sum = 0;
          for (int64_t k = 0; k < hw; ++k) sum += x.v[b * hw + k];
          y.v[b] = sum / static_cast<double>(hw);
        }
        break;
      }
      case LayerKind::kLinear: {
        const int64_t n = x.dims[0], f = Count(x.dims) / n, o = l.channels;
        const auto& w = Param(params, layer, ParamKind::kWeight);
        const auto& bias = Param(params, layer, ParamKind::kBias);
        y = {{n, o}, std::vector<double>(n * o)};
        for (int64_t b = 0; b < n; ++b)
          for (int64_t j = 0; j < o; ++j) {
            double sum = bias[j];
            for (int64_t i = 0; i < f; ++i) sum += x.v[b * f + i] * w[j * f + i];
            y.v[b * o + j] = sum;
          }
        break;
      }
      case LayerKind::kAdd: {
        y = x;
        const RefTensor& other = arg(1);
        for (size_t k = 0; k < y.v.size(); ++k) {
          y.v[k] += other.v[k];
          if (l.relu) y.v[k] = std::max(y.v[k], 0.0);
        }
        break;
      }
      case LayerKind::kSoftmaxCrossEntropy: {
        const int64_t n = x.dims[0], k = x.dims[1];
        y = x;
        double total = 0;
        for (int64_t b = 0; b < n; ++b) {
          double top = -std::numeric_limits<double>::infinity();
          for (int64_t j = 0; j < k; ++j) top = std::max(top, x.v[b * k + j]);
          double sum = 0;
          for (int64_t j = 0; j < k; ++j) sum += std::exp(x.v[b * k + j] - top);
          for (int64_t j = 0; j < k; ++j) y.v[b * k + j] = std::exp(x.v[b * k + j] - top) / sum;
          total += std::log(sum) + top - x.v[b * k + labels[b]];
        }
        r.loss = total / static_cast<double>(n);
        break;
      }
    }
    r.outputs.push_back(std::move(y));
  }
  return r;
}

}  // namespace opscope::testing
