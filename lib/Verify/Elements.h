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

/// The element types, one struct each: Bits is the unsigned integer whose
/// bytes are the element's (little-endian, as the GPU writes it and the dump
/// stores it), value() the element as a double, Float whether it is a
/// floating-point type (NaNs, ulp distances from orderedBits()).
struct F32Element {
  using Bits = uint32_t;
  static constexpr bool Float = true;
  static double value(Bits X) {
    float F;
    std::memcpy(&F, &X, sizeof F);
    return F;
  }
};
struct F64Element {
  using Bits = uint64_t;
  static constexpr bool Float = true;
  static double value(Bits X) {
    double D;
    std::memcpy(&D, &X, sizeof D);
    return D;
  }
};
struct F16Element {
  using Bits = uint16_t;
  static constexpr bool Float = true;
  static double value(Bits X) { return halfToDouble(X); }
};
struct I32Element {
  using Bits = uint32_t;
  static constexpr bool Float = false;
  static double value(Bits X) {
    int32_t V;
    std::memcpy(&V, &X, sizeof V);
    return V;
  }
};
struct U8Element {
  using Bits = uint8_t;
  static constexpr bool Float = false;
  static double value(Bits X) { return X; }
};

/// Calls \p F with a value of the element struct of \p T (F32Element, ...):
/// code templated on the element type switches on the dtype once per buffer.
template <typename Fn> decltype(auto) withElement(DType T, Fn &&F) {
  switch (T) {
  case DType::F32:
    return F(F32Element());
  case DType::F64:
    return F(F64Element());
  case DType::F16:
    return F(F16Element());
  case DType::I32:
    return F(I32Element());
  case DType::U8:
    break;
  }
  return F(U8Element());
}

/// The bits of element \p I of \p Bytes.
template <typename E> typename E::Bits bitsAt(const uint8_t *Bytes, size_t I) {
  typename E::Bits X;
  std::memcpy(&X, Bytes + I * sizeof X, sizeof X);
  return X;
}

/// Value of element \p I of \p Bytes as a double.
inline double valueAt(const uint8_t *Bytes, size_t I, DType T) {
  return withElement(T, [&](auto E) {
    using El = decltype(E);
    return El::value(bitsAt<El>(Bytes, I));
  });
}

inline bool isFloat(DType T) {
  return withElement(T, [](auto E) { return decltype(E)::Float; });
}

/// Position of the float bit pattern \p X in the ordered sequence of
/// representable values (sign-magnitude to biased unsigned): adjacent
/// floats differ by 1; +0 and -0 are adjacent (the caller treats equal values
/// as distance 0 first).
template <typename Bits> uint64_t orderedBits(Bits X) {
  constexpr unsigned SignShift = 8 * sizeof(Bits) - 1;
  constexpr uint64_t SignBit = uint64_t(1) << SignShift;
  uint64_t U = X, Magnitude = U & ~SignBit;
  // Negative values: SignBit - Magnitude, order reversed below the sign bit;
  // positive: SignBit + Magnitude. Without a branch, which random signs would
  // mispredict: Neg is all ones for a negative value, and (M ^ Neg) - Neg is
  // -M then (two's complement), M otherwise.
  uint64_t Neg = 0 - (U >> SignShift);
  return SignBit + ((Magnitude ^ Neg) - Neg);
}

/// isPoisonElement() of the element whose bits are \p X: all its bytes 0xFF,
/// or all 0xA5.
template <typename Bits> bool isPoisonBits(Bits X) {
  constexpr Bits Ones = Bits(Bits(~Bits(0)) / 0xFF); // 0x01 in every byte
  return X == Bits(Ones * PoisonNaNByte) || X == Bits(Ones * PoisonSentinelByte);
}

} // namespace detail
} // namespace verify
} // namespace kloop

#endif
