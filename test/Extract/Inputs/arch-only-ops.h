// Op<N> is defined for the device pass only, as architecture-specific code often is; Tile<N> reads
// it from a header, so an error of clang's host side lies here, not in the translation unit.
template <int N> struct Op;
#if defined(__CUDA_ARCH__)
template <> struct Op<4> {
  static __device__ int f(int x) { return x * 4; }
};
#endif
template <int N> struct Tile {
  using Impl = Op<N>;
  static constexpr int kWidth = sizeof(Impl);
  __device__ int get(int x) const { return Impl::f(x) + kWidth; }
};
