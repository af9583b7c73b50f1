// The options several commands share, each with one name and one help text: a command binds its
// own fields to them, and `--db` or `--hosts` mean the same in every command.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>

namespace ibroute::cli {

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
// --json
CLI::Option* add_json_flag(CLI::App* c, bool& json);

// A number of seconds, a share or a budget: decimal only (no nan, inf or hex, which CLI11's own
// conversion takes and its Range lets through) and within [lo, hi].
CLI::Validator decimal_in(double lo, double hi);

// A name kept in the database and shown everywhere (a schedule, a snapshot's label): printable,
// at most 200 bytes — no newline or escape sequence that would break a line or a terminal.
CLI::Validator printable_name();

}  // namespace ibroute::cli
