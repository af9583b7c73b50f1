// The options several commands share, each with one name and one help text: a command binds its
// own fields to them, and `--db` or `--hosts` mean the same in every command.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ibroute::cli {

constexpr const char* kDefaultDb = "ibroute.db";

// What most commands read: the database, one scan in it, and whether to print JSON. A command's
// options derive from it and add their own.
struct StoreOptions {
  std::string db = kDefaultDb;
  std::optional<int64_t> scan;
  bool json = false;
};

// Which of StoreOptions a command offers besides --db.
enum StoreUse : unsigned { kDbOnly = 0, kWithScan = 1, kWithJson = 2, kScanAndJson = 3 };

// A command's one-line summary and the text its --help ends with (none: nullptr).
struct CommandHelp {
  const char* name;
  const char* summary;
  const char* footer;
};
// The help of every command is in one table (command_help.cpp); std::logic_error for a name it lacks.
const CommandHelp& command_help(std::string_view name);

// A subcommand with its help.
CLI::App* add_command(CLI::App& app, const char* name);

// A subcommand whose --db and, as `uses` says, --scan and --json fill `o`, which must outlive
// parsing (the command's options, held by its runner).
CLI::App* add_store_command(CLI::App& app, StoreOptions& o, const char* name, unsigned uses);

// --db: the fabric database. `created`: the command creates it when absent (scan).
CLI::Option* add_db_option(CLI::App* c, std::string& db, bool created = false);
// --scan: which scan (default: the newest).
CLI::Option* add_scan_option(CLI::App* c, std::optional<int64_t>& scan);
// --hosts: hosts in rank order, in every form a host can be named.
CLI::Option* add_hosts_option(CLI::App* c, std::string& hosts);
// --senders and --receivers: two groups instead of an all-to-all.
void add_group_options(CLI::App* c, std::string& senders, std::string& receivers);
// --rate and --message-size of a plan (`rate_default`: what no --rate means).
void add_rate_options(CLI::App* c, std::string& rate, std::string& message_size, const char* rate_default);
// -C, -P, -t and --retries: the local port MADs leave from, libibmad's timeout and retries.
// `live`: said in each help text, where the command may also read files instead.
void add_mad_options(CLI::App* c, std::string& ca, int& port, int& timeout_ms, int& retries, bool live = false);
// --mads-in-flight: `what` names the queries (as "LFT SMPs").
void add_in_flight_option(CLI::App* c, int& mads, const char* what);
// --json
CLI::Option* add_json_flag(CLI::App* c, bool& json);

// A number of seconds, a share or a budget: decimal only (no nan, inf or hex, which CLI11's own
// conversion takes and its Range lets through) and within [lo, hi].
CLI::Validator decimal_in(double lo, double hi);

// A name kept in the database and shown everywhere (a schedule, a snapshot's label): printable,
// at most 200 bytes — no newline or escape sequence that would break a line or a terminal.
CLI::Validator printable_name();

}  // namespace ibroute::cli
