//===- Prompt.cpp - Versioned prompt templates ----------------------------===//
#include "kloop/Propose/Prompt.h"
#include "kloop/Support/Path.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SHA256.h"

#include <cstdlib>
#include <set>

using namespace llvm;
using json = nlohmann::json;

namespace kloop {

std::string promptContentVersion(StringRef Content) {
  std::array<uint8_t, 32> H = SHA256::hash(arrayRefFromStringRef(Content));
  return toHex(ArrayRef<uint8_t>(H), /*LowerCase=*/true).substr(0, 12);
}

static const char SystemMarker[] = "<!-- kloop:system -->";
static const char UserMarker[] = "<!-- kloop:user -->";

static bool isNameStart(char C) { return isAlpha(C) || C == '_'; }
static bool isNameChar(char C) { return isAlnum(C) || C == '_'; }

/// Calls \p OnText for literal text and \p OnName for each placeholder of \p S,
/// in order; error at the first malformed `{{`.
static Error scan(StringRef S, StringRef TemplateName,
                  function_ref<void(StringRef)> OnText,
                  function_ref<void(StringRef)> OnName) {
  size_t Pos = 0;
  while (true) {
    size_t Open = S.find("{{", Pos);
    if (Open == StringRef::npos) {
      OnText(S.drop_front(Pos));
      return Error::success();
    }
    OnText(S.slice(Pos, Open));
    size_t I = Open + 2;
    size_t Start = I;
    if (I < S.size() && isNameStart(S[I]))
      while (I < S.size() && isNameChar(S[I]))
        ++I;
    if (I == Start || !S.drop_front(I).starts_with("}}")) {
      size_t Line = S.take_front(Open).count('\n') + 1;
      return createStringError("prompt template '" + TemplateName +
                               "': malformed placeholder at line " + Twine(Line) +
                               " (expected {{name}}): \"" +
                               S.slice(Open, std::min(S.size(), Open + 30)) + "\"");
    }
    OnName(S.slice(Start, I));
    Pos = I + 2;
  }
}

Expected<PromptTemplate> PromptTemplate::parse(StringRef Text, StringRef Name) {
  PromptTemplate T;
  T.Name = Name.str();
  T.Text = Text.str();
  T.Version = promptContentVersion(Text);
  size_t Sys = Text.find(SystemMarker), Usr = Text.find(UserMarker);
  auto twice = [&](size_t At, StringRef M) {
    return At != StringRef::npos && Text.find(M, At + 1) != StringRef::npos;
  };
  if (twice(Sys, SystemMarker) || twice(Usr, UserMarker))
    return createStringError("prompt template '" + Name +
                             "': a section marker appears twice");
  if (Sys != StringRef::npos && Usr != StringRef::npos && Usr < Sys)
    return createStringError("prompt template '" + Name +
                             "': the user marker comes before the system marker");
  if (Sys != StringRef::npos && Usr == StringRef::npos)
    return createStringError("prompt template '" + Name +
                             "': a system section needs a user section after it");
  std::set<std::string> Seen;
  if (Error E = scan(Text, Name, [](StringRef) {},
                     [&](StringRef N) {
                       if (Seen.insert(N.str()).second)
                         T.Names.push_back(N.str());
                     }))
    return E;
  return T;
}

Expected<PromptTemplate> PromptTemplate::load(StringRef Path) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> Buf = MemoryBuffer::getFile(Path);
  if (!Buf)
    return createStringError("prompt template '" + Path +
                             "': cannot read: " + Buf.getError().message());
  return parse((*Buf)->getBuffer(), Path);
}

bool PromptTemplate::hasPlaceholder(StringRef N) const {
  return llvm::is_contained(Names, N.str());
}

Expected<RenderedPrompt>
PromptTemplate::render(const std::map<std::string, std::string> &Values) const {
  for (const std::string &N : Names)
    if (!Values.count(N))
      return createStringError("prompt template '" + Name +
                               "': missing value for placeholder '" + N + "'");
  for (const auto &KV : Values)
    if (!hasPlaceholder(KV.first))
      return createStringError("prompt template '" + Name + "': unknown placeholder '" +
                               KV.first + "' (the template does not use {{" + KV.first +
                               "}})");
  auto Expand = [&](StringRef Part) {
    std::string Out;
    cantFail(scan(Part, Name, [&](StringRef S) { Out += S; },
                  [&](StringRef N) { Out += Values.at(N.str()); }));
    return Out;
  };
  StringRef Text = this->Text;
  RenderedPrompt R;
  R.Version = Version;
  size_t Sys = Text.find(SystemMarker), Usr = Text.find(UserMarker);
  auto AfterMarker = [&](size_t At, StringRef Marker) {
    StringRef Rest = Text.drop_front(At + Marker.size());
    return Rest.starts_with("\n") ? Rest.drop_front(1) : Rest;
  };
  if (Usr == StringRef::npos) {
    R.User = Expand(Text);
  } else {
    if (Sys != StringRef::npos) {
      StringRef SysPart = AfterMarker(Sys, SystemMarker);
      SysPart = SysPart.take_front(Usr - (SysPart.data() - Text.data()));
      R.System = Expand(SysPart.trim());
    }
    R.User = Expand(AfterMarker(Usr, UserMarker).trim());
  }
  return R;
}

Expected<RenderedPrompt> PromptTemplate::render(const json &Context) const {
  if (!Context.is_object())
    return createStringError("prompt template '" + Name +
                             "': the context must be a JSON object, got " +
                             Context.type_name());
  std::map<std::string, std::string> Values;
  for (auto It = Context.begin(); It != Context.end(); ++It)
    Values[It.key()] = It->is_string() ? It->get<std::string>() : It->dump(2);
  return render(Values);
}

Expected<std::string> findPromptsDir(StringRef Argv0) {
  if (const char *Env = std::getenv("KLOOP_PROMPTS_DIR")) {
    if (sys::fs::is_directory(Env))
      return std::string(Env);
    return createStringError(Twine("KLOOP_PROMPTS_DIR='") + Env + "' is not a directory");
  }
  std::string Prefix = Argv0.empty() ? "" : installPrefix(Argv0.str().c_str(), nullptr);
  if (Prefix.empty())
    return createStringError("cannot find the prompts directory (the kloop executable's own path is "
                             "unknown): set KLOOP_PROMPTS_DIR");
  SmallString<256> P(Prefix);
  sys::path::append(P, PromptsSubdir);
  if (sys::fs::is_directory(P))
    return std::string(P);
  return createStringError("cannot find the prompts directory: '" + P +
                           "' (share/kloop/prompts under kloop's installation prefix) does not exist; "
                           "install kloop (cmake --install) or set KLOOP_PROMPTS_DIR");
}

Expected<json> loadProposalSchema(StringRef Path) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> Buf = MemoryBuffer::getFile(Path);
  if (!Buf)
    return createStringError("schema '" + Path + "': cannot read: " +
                             Buf.getError().message());
  StringRef T = (*Buf)->getBuffer();
  json J = json::parse(T.begin(), T.end(), nullptr, false);
  if (J.is_discarded())
    return createStringError("schema '" + Path + "': not valid JSON");
  if (!J.is_object())
    return createStringError("schema '" + Path + "': not a JSON object");
  return J;
}

} // namespace kloop
