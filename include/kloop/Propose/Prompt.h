//===- kloop/Propose/Prompt.h - Versioned prompt templates ----------------===//
///
/// \file
/// Prompt templates live in prompts/ (e.g. prompts/optimize-kernel.v1.md). A
/// template is text with `{{name}}` placeholders (name: [A-Za-z_][A-Za-z0-9_]*)
/// and optionally two sections introduced by the marker lines
/// `<!-- kloop:system -->` and `<!-- kloop:user -->`; text before the first
/// marker is a comment for maintainers and is not sent. Without markers the
/// whole text is the user message and there is no system message.
///
/// A template's version is its content hash: the first 12 hex digits of the
/// SHA-256 of the file's bytes (promptContentVersion). Any edit, even of
/// whitespace or of the maintainers' comment, is a new version; the journal
/// records the version with each proposal.
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_PROPOSE_PROMPT_H
#define KLOOP_PROPOSE_PROMPT_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

namespace kloop {

/// First 12 lowercase hex digits of SHA-256(\p Content) (llvm/Support/SHA256.h).
std::string promptContentVersion(llvm::StringRef Content);

/// A rendered prompt, ready to send.
struct RenderedPrompt {
  std::string System;  ///< system message; "" when the template has none
  std::string User;    ///< user message
  std::string Version; ///< the template's promptContentVersion
};

/// A parsed template.
class PromptTemplate {
public:
  /// Parses \p Text; \p Name (usually the file path) appears in errors.
  /// Errors: a `{{` not followed by a valid name and `}}`; a marker appearing
  /// twice; a user marker before the system marker.
  static llvm::Expected<PromptTemplate> parse(llvm::StringRef Text, llvm::StringRef Name);
  /// Reads and parses the file at \p Path (error naming it if unreadable).
  static llvm::Expected<PromptTemplate> load(llvm::StringRef Path);

  /// The name given to parse() (the path for load()).
  const std::string &name() const { return Name; }
  /// The template text as given.
  const std::string &text() const { return Text; }
  /// promptContentVersion(text()).
  const std::string &version() const { return Version; }
  /// Every distinct placeholder name, in order of first appearance.
  const std::vector<std::string> &placeholders() const { return Names; }
  /// True if the template uses `{{Name}}`.
  bool hasPlaceholder(llvm::StringRef Name) const;

  /// Substitutes \p Values in one pass (substituted text is not scanned
  /// again, so kernel source containing `{{` is safe). Errors naming the
  /// template: a placeholder without a value ("missing value for
  /// placeholder 'x'"), a value that no placeholder uses ("unknown
  /// placeholder 'y'": catches misspelt context keys).
  llvm::Expected<RenderedPrompt>
  render(const std::map<std::string, std::string> &Values) const;
  /// render() with the values taken from the JSON object \p Context: string
  /// members are inserted as they are, other members as JSON indented by 2.
  /// Error if \p Context is not an object.
  llvm::Expected<RenderedPrompt> render(const nlohmann::json &Context) const;

private:
  std::string Name, Text, Version;
  std::vector<std::string> Names;
};

/// Where the prompts are installed, relative to kloop's installation prefix
/// (kloop::installPrefix; cmake/Install.cmake installs prompts/ there, and the
/// build tree links build/share/kloop/prompts to the source's prompts/).
inline constexpr const char *PromptsSubdir = "share/kloop/prompts";

/// Directory holding the prompt templates and proposal.schema.json: the
/// environment variable KLOOP_PROMPTS_DIR if set (error if it is not a
/// directory), else <installation prefix of the executable \p Argv0>/
/// PromptsSubdir. Never the source tree: an installed kloop must not depend on
/// it (docs/install.md). Error when it does not exist, naming the path looked
/// at, or when \p Argv0 is empty or the executable's path is unknown.
llvm::Expected<std::string> findPromptsDir(llvm::StringRef Argv0 = "");

/// Reads and parses a JSON schema file such as prompts/proposal.schema.json;
/// error naming \p Path if it is unreadable, not JSON, or not an object.
llvm::Expected<nlohmann::json> loadProposalSchema(llvm::StringRef Path);

} // namespace kloop

#endif
