// Man pages and bash completion, generated at build time from the CLI's own definitions (the
// subcommands, their options and help texts), so that they cannot drift from --help.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace ibroute::cli {

// Writes DIR/ibroute.1 and DIR/ibroute-COMMAND.1 for every subcommand of `app`.
void write_man_pages(const CLI::App& app, const std::string& dir, const std::string& version);

// Appends the subcommand's examples (examples.cpp) to its --help footer.
void append_examples(CLI::App& sub);
inline constexpr const char* kExamplesHeading = "Examples:";

// A bash completion script for `app`: subcommands, then each one's options.
std::string bash_completion(const CLI::App& app);

}  // namespace ibroute::cli
