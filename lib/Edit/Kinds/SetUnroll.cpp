//===- SetUnroll.cpp - set_unroll: #pragma unroll N above a loop ----------===//
//
// docs/edits.md, "set_unroll". Writes `#pragma unroll N` on its own line above
// the loop, rewrites the loop's pragma line, or removes it (`count: null`).
//
//===----------------------------------------------------------------------===//
#include "../EditKind.h"

#include "llvm/ADT/StringExtras.h"

using namespace llvm;
using nlohmann::json;

namespace kloop {
namespace edit {
namespace {

class SetUnroll : public EditKindPlanner {
public:
  EditKind kind() const override { return EditKind::SetUnroll; }
  EntityKind target() const override { return EntityKind::Loop; }

  Outcome plan(const Edit &Ed, const Entity &E, PlanContext &C) const override {
    const std::string &File = C.fileOf(E);
    StringRef Buf = C.bufferOf(File);
    if (Buf.empty())
      return refuse("cannot read " + File);
    unsigned LoopBegin = E.Span.BeginOffset, LS = lineStart(Buf, LoopBegin);
    StringRef Before = Buf.substr(LS, LoopBegin - LS);
    std::string Indent = Before.substr(0, Before.find_first_not_of(" \t")).str();
    std::string Pragma = Ed.Count ? "#pragma unroll " + std::to_string(*Ed.Count) : "";
    const json &U = E.Data["unroll"];
    if (!U.is_null())
      return rewritePragma(Ed, E, File, Buf, LS, Pragma);
    if (!Ed.Count)
      return refuse("the loop has no unroll pragma to remove");
    if (!StringRef(Before).trim().empty())
      return accept({replaceRange(FileRange{File, LoopBegin, LoopBegin}, "\n" + Indent + Pragma + "\n" + Indent)});
    return accept({replaceRange(FileRange{File, LS, LS}, Indent + Pragma + "\n")});
  }

private:
  /// The end (its '\n', or npos) of the line at \p Off together with the lines a backslash before its
  /// newline continues it onto (`#pragma unroll \` then `4`): the whole directive goes.
  static size_t logicalLineEnd(StringRef Buf, size_t Off) {
    size_t EOL = Buf.find('\n', Off);
    while (EOL != StringRef::npos && Buf.substr(Off, EOL - Off).rtrim("\r").ends_with("\\")) {
      Off = EOL + 1;
      EOL = Buf.find('\n', Off);
    }
    return EOL;
  }

  /// The loop's unroll hint is on line U["line"] above it: that line becomes \p Pragma (or goes).
  static Outcome rewritePragma(const Edit &Ed, const Entity &E, const std::string &File, StringRef Buf,
                               unsigned LoopLineStart, const std::string &Pragma) {
    const json &U = E.Data["unroll"];
    if (!U.contains("line"))
      return refuse("its unroll hint has no source line");
    // Find the pragma's line above the loop.
    unsigned Want = U["line"].get<unsigned>(), Line = E.Span.BeginLine, Off = LoopLineStart;
    while (Line > Want && Off > 0) {
      Off = lineStart(Buf, Off - 1);
      --Line;
    }
    size_t EOL = logicalLineEnd(Buf, Off);
    StringRef Text = Buf.substr(Off, EOL == StringRef::npos ? StringRef::npos : EOL - Off);
    if (Line != Want || !isPragmaLine(Text))
      return refuse("its unroll hint (line " + std::to_string(Want) +
                    ") is not a #pragma line of its own (a macro or _Pragma?); cannot rewrite it");
    StringRef PragmaIndent = Text.substr(0, Text.find_first_not_of(" \t"));
    // A comment after the directive stays, on the directive's line: one that begins there may end lines
    // below (`#pragma unroll 4 /* first` then `x */`).
    size_t Comment = trailingCommentStart(Text);
    if (Comment != StringRef::npos) {
      FileRange R{File, Off, (unsigned)(Off + Comment)};
      return accept({replaceRange(R, PragmaIndent.str() + (Ed.Count ? Pragma + " " : std::string()))});
    }
    FileRange R{File, Off, (unsigned)(EOL == StringRef::npos ? Buf.size() : EOL + 1)};
    return accept({replaceRange(R, Ed.Count ? PragmaIndent.str() + Pragma + "\n" : std::string())});
  }

  /// Whether \p Text is a `#pragma` directive line: `#`, blanks allowed around it, then `pragma`.
  static bool isPragmaLine(StringRef Text) {
    StringRef T = Text.ltrim(" \t");
    if (!T.consume_front("#"))
      return false;
    T = T.ltrim(" \t");
    return T.consume_front("pragma") && (T.empty() || !isAlnum(T.front()));
  }

  /// The offset in \p Text (a pragma line, which holds no string literal) of a comment that ends it: a
  /// `//`, or a `/*` that runs past the line or is followed by nothing but blanks; npos when there is
  /// none (`#pragma unroll /* tuned */ 4`: the comment sits inside the directive, which goes whole).
  static size_t trailingCommentStart(StringRef Text) {
    size_t Line = Text.find("//"), Block = Text.find("/*");
    if (Line < Block)
      return Line;
    if (Block == StringRef::npos)
      return Block;
    size_t End = Text.find("*/", Block + 2);
    if (End == StringRef::npos || Text.substr(End + 2).trim().empty())
      return Block;
    size_t Later = trailingCommentStart(Text.substr(End + 2));
    return Later == StringRef::npos ? Later : End + 2 + Later;
  }
};

} // namespace

void registerSetUnroll(EditKindRegistry &R) { R.add<SetUnroll>(); }

} // namespace edit
} // namespace kloop
