#include "devices/cpu/openblas_kernels.h"

#include <cblas.h>
#include <dlfcn.h>

#include <cstring>
#include <string>

namespace opscope::devices::cpu {
namespace {

// cblas_sbgemm exists only in OpenBLAS builds with BUILD_BFLOAT16 (Debian's has none).
using SbgemmFn = void (*)(CBLAS_ORDER, CBLAS_TRANSPOSE, CBLAS_TRANSPOSE, blasint, blasint, blasint,
                          float, const uint16_t*, blasint, const uint16_t*, blasint, float, float*,
                          blasint);

SbgemmFn Sbgemm() {
  static const auto fn = reinterpret_cast<SbgemmFn>(::dlsym(RTLD_DEFAULT, "cblas_sbgemm"));
  return fn;
}

class OpenblasMatmul final : public Kernel {
 public:
  OpenblasMatmul(const MatmulSpec& spec, const void* a, const void* b, float* c)
      : spec_(spec), a_(a), b_(b), c_(c) {}
  void Run() override {
    const auto m = static_cast<blasint>(spec_.m), n = static_cast<blasint>(spec_.n),
               k = static_cast<blasint>(spec_.k);
    if (spec_.dtype == DType::kF32) {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f,
                  static_cast<const float*>(a_), k, static_cast<const float*>(b_), n, 0.0f, c_, n);
    } else {
      Sbgemm()(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f,
               static_cast<const uint16_t*>(a_), k, static_cast<const uint16_t*>(b_), n, 0.0f, c_,
               n);
    }
  }
  void ReadOutput(void* out) override {
    std::memcpy(out, c_, static_cast<size_t>(spec_.m * spec_.n) * sizeof(float));
  }
  std::string Implementation() const override {
    return std::string(spec_.dtype == DType::kF32 ? "cblas_sgemm" : "cblas_sbgemm") + " (" +
           openblas_get_corename() + ")";
  }

 private:
  MatmulSpec spec_;
  const void* a_;
  const void* b_;
  float* c_;
};

}  // namespace

std::unique_ptr<Kernel> CreateOpenblasMatmul(const MatmulSpec& spec, const void* a, const void* b,
                                             float* c) {
  return std::make_unique<OpenblasMatmul>(spec, a, b, c);
}

Applicability OpenblasApplicability(DType dtype) {
  if (dtype == DType::kBF16 && Sbgemm() == nullptr) {
    return Applicability::No(
        NotApplicableReason::kMissingFeature,
        "not applicable: this OpenBLAS is built without bfloat16 (no cblas_sbgemm)");
  }
  return Applicability::Yes();
}

void SetOpenblasThreads(int threads) { openblas_set_num_threads(threads); }

std::string OpenblasVersion() {
  std::string config = openblas_get_config();
  const auto space = config.find(' ', config.find(' ') + 1);
  return config.substr(0, space) + " (core " + openblas_get_corename() + ")";
}

}  // namespace opscope::devices::cpu
