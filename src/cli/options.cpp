#include "options.hpp"

#include <cstdio>
#include <cstdlib>

#include "text_input.hpp"

namespace ibroute::cli {

using namespace ibroute::workflow;  // what the commands bind to options and print

namespace {
// Every form a host can be named in, for --hosts, --senders, --receivers and --placement alike.
constexpr const char* kHostForms =
    "a,b,c, node[0001-0100] (Slurm) or @FILE (one per line), each a hostname (node0270), a node description "
    "(node0270 HCA-1), host/HCA-2, a node-name-map name, a node or port GUID, or a LID";
}  // namespace

CLI::App* add_command(CLI::App& app, const char* name) {
  const CommandHelp& help = command_help(name);
  CLI::App* c = app.add_subcommand(name, help.summary);
  if (help.footer) c->footer(help.footer);
  return c;
}

CLI::App* add_store_command(CLI::App& app, StoreOptions& o, const char* name, unsigned uses) {
  CLI::App* c = add_command(app, name);
  add_db_option(c, o.db);
  if (uses & kWithScan) add_scan_option(c, o.scan);
  if (uses & kWithJson) add_json_flag(c, o.json);
  return c;
}

CLI::Option* add_db_option(CLI::App* c, std::string& db, bool created) {
  return c
      ->add_option("--db", db,
                   created ? "fabric database (created if absent)" : "fabric database (made by ibroute scan)")
      ->capture_default_str();
}

CLI::Option* add_scan_option(CLI::App* c, std::optional<int64_t>& scan) {
  return c->add_option("--scan", scan, "scan id (default: the newest; ibroute scans lists them)");
}

CLI::Option* add_hosts_option(CLI::App* c, std::string& hosts) {
  return c->add_option("--hosts", hosts,
                       std::string("hosts in rank order: ") + kHostForms + " (default: every host, in name order)");
}

void add_group_options(CLI::App* c, std::string& senders, std::string& receivers) {
  c->add_option("--senders", senders,
                "two groups instead of an all-to-all: the hosts that send (as --hosts), with --receivers");
  c->add_option("--receivers", receivers,
                "two groups: the hosts that receive; every sender sends to every receiver once");
}

void add_rate_options(CLI::App* c, std::string& rate, std::string& message_size, const char* rate_default) {
  c->add_option("--message-size", message_size, "bytes per transfer: 64KiB, 1MiB (1024^n), 64K, 1MB (1000^n) or bytes")
      ->capture_default_str();
  c->add_option(
      "--rate", rate,
      std::string("per-node rate: 5G or 5GB/s (bytes, 1000^n), 5GiB/s (1024^n) or 40Gb/s, 40Gbit/s (bits); a unit is "
                  "required; default: ") +
          rate_default);
}

void add_mad_options(CLI::App* c, std::string& ca, int& port, int& timeout_ms, int& retries, bool live) {
  const std::string when = live ? " (live)" : "",
                    defaults = live ? " (live; default: libibmad's)" : " (default: libibmad's)";
  c->add_option("-C,--Ca", ca, "CA name to send from" + when);
  c->add_option("-P,--Port", port, "CA port number to send from" + when)->check(CLI::Range(0, 254));
  c->add_option("-t,--timeout", timeout_ms, "MAD timeout in ms" + defaults)->check(CLI::Range(0, 60000));
  c->add_option("--retries", retries, "MAD retries" + defaults)->check(CLI::Range(0, 100));
}

void add_in_flight_option(CLI::App* c, int& mads, const char* what) {
  c->add_option("--mads-in-flight", mads, std::string(what) + " in flight at once")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
}

CLI::Option* add_json_flag(CLI::App* c, bool& json) {
  return c->add_flag("--json", json, "print JSON instead of text");
}

CLI::Validator decimal_in(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        char range[96];
        std::snprintf(range, sizeof range, "a decimal number from %g to %g", lo, hi);
        if (text.empty() || workflow::decimal_prefix(text) != text.size()) return "'" + text + "' is not " + range;
        const double v = std::strtod(text.c_str(), nullptr);
        if (!(v >= lo && v <= hi)) return "'" + text + "' is not " + range;
        return {};
      },
      [&] {
        char name[64];
        std::snprintf(name, sizeof name, "DECIMAL in [%g, %g]", lo, hi);
        return std::string(name);
      }());
}

CLI::Validator printable_name() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        if (text.empty()) return "an empty name";
        if (text.size() > 200) return "a name of " + std::to_string(text.size()) + " bytes (at most 200)";
        for (unsigned char ch : text)
          if (ch < 0x20 || ch == 0x7f) return "a control character (byte " + std::to_string(ch) + ") in the name";
        return {};
      },
      "NAME");
}

}  // namespace ibroute::cli
