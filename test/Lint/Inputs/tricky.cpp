// Input of function-length.test: constructs that fool a naive brace count. The test runs the
// checker with --max 0 and checks every function found, with its body's length in lines.
#include <string>
#define BRACES { \
  int x = 1; }
/* a comment with a function in it:
int commented() {
  return 0;
}
*/
namespace outer {
static const int Table[] = {
    1, 2,
    3,
};
extern "C" {
int inC(int a) {
  return a;
}
}

int strings() {
  const char *S = "}}} { \" {";
  char C = '{', D = '}', Q = '\'';
  const char *R = R"x( } " { )x";
  int N = 1'000'000 + '}';
  return S[0] + C + D + Q + R[0] + N;
}

template <typename T = int, int M = (3 > 2)> T defaulted(T V = T{}) {
  auto L = [&](int I) {
    if (I) {
      return I;
    }
    return 0;
  };
  return V + L(M);
}

struct Box {
  int A, B;
  Box() : A{1}, B(2) {
    A += B;
  }
  bool operator==(const Box &O) const { return A == O.A; }
  int get() const
  {
    return A;
  }
};

} // namespace outer

void Box_free() { /* } */ }
