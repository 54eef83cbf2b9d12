//===- Elements.h - Decoding elements of captured buffers (private) -------===//
#ifndef KLOOP_LIB_VERIFY_ELEMENTS_H
#define KLOOP_LIB_VERIFY_ELEMENTS_H

#include "kloop/Verify/Compare.h"
#include <cmath>
#include <cstdint>
#include <cstring>

namespace kloop {
namespace verify {
namespace detail {

/// IEEE 754 binary16 to double (exact).
inline double halfToDouble(uint16_t H) {
  int Sign = H >> 15, Exp = (H >> 10) & 0x1f, Man = H & 0x3ff;
  double V;
  if (Exp == 0)
    V = std::ldexp(static_cast<double>(Man), -24); // subnormal or zero
  else if (Exp == 31)
    V = Man ? std::nan("") : HUGE_VAL;
  else
    V = std::ldexp(static_cast<double>(Man | 0x400), Exp - 25);
  return Sign ? -V : V;
}

/// Value of element \p I of \p Bytes as a double (little-endian, as the GPU
/// writes it and the dump stores it).
inline double valueAt(const uint8_t *Bytes, size_t I, DType T) {
  switch (T) {
  case DType::F32: {
    float F;
    std::memcpy(&F, Bytes + I * 4, 4);
    return F;
  }
  case DType::F64: {
    double D;
    std::memcpy(&D, Bytes + I * 8, 8);
    return D;
  }
  case DType::F16: {
    uint16_t H;
    std::memcpy(&H, Bytes + I * 2, 2);
    return halfToDouble(H);
  }
  case DType::I32: {
    int32_t V;
    std::memcpy(&V, Bytes + I * 4, 4);
    return V;
  }
  case DType::U8:
    return Bytes[I];
  }
  return 0;
}

inline bool isFloat(DType T) {
  return T == DType::F32 || T == DType::F64 || T == DType::F16;
}

/// Position of the element's bit pattern in the ordered sequence of
/// representable values (sign-magnitude to biased unsigned): adjacent
/// floats differ by 1; +0 and -0 are adjacent (the caller treats equal values
/// as distance 0 first).
inline uint64_t orderedBits(const uint8_t *Bytes, size_t I, DType T) {
  uint64_t U = 0, SignBit = 0;
  switch (T) {
  case DType::F32: {
    uint32_t V;
    std::memcpy(&V, Bytes + I * 4, 4);
    U = V;
    SignBit = 1ULL << 31;
    break;
  }
  case DType::F64:
    std::memcpy(&U, Bytes + I * 8, 8);
    SignBit = 1ULL << 63;
    break;
  case DType::F16: {
    uint16_t V;
    std::memcpy(&V, Bytes + I * 2, 2);
    U = V;
    SignBit = 1ULL << 15;
    break;
  }
  default:
    return 0;
  }
  // Negative values: order reversed below the sign bit; positive: above it.
  return (U & SignBit) ? SignBit - (U & ~SignBit) : SignBit + U;
}

} // namespace detail
} // namespace verify
} // namespace kloop

#endif
