// ibroute export: a stored schedule in the documented exchange format, whole or per node.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "commands.hpp"
#include "export_files.hpp"
#include "common.hpp"
#include "whole_file.hpp"
#include "options.hpp"
#include "ibroute/fabric/error.hpp"
#include "ibroute/schedule/format.hpp"
#include "ibroute/schedule/validate.hpp"

namespace ibroute::cli {

using namespace ibroute::schedule;

namespace {

struct ExportOptions {
  std::string db = kDefaultDb;
  std::string schedule;
  std::string format = "json";
  std::string output;
  std::string per_node;
};

// The slices' folder holds only what export wrote there: its marker, the host table and rank*.json slices. Those
// of an earlier export (any schedule) are removed first, so that no peer reads a stale slice
// beside the new ones; a folder with anything else in it is refused, and nothing is deleted.
constexpr const char* kSliceMarker = ".ibroute-slices";
bool is_host_table(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::string head(4096, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  return head.find("\"format\":\"ibroute-schedule-hosts\"") != std::string::npos;
}
void clear_own_slices(const std::string& dir, const std::string& schedule) {
  namespace fs = std::filesystem;
  // Ours: the marker and slices named as export names them (rankNNNNN-NAME.json), also those of an
  // ibroute that wrote no marker yet.
  auto slice_name = [](const std::string& n) {
    return n.size() > 15 && n.starts_with("rank") && n[9] == '-' && n.ends_with(".json") &&
           std::all_of(n.begin() + 4, n.begin() + 9, [](char c) { return c >= '0' && c <= '9'; });
  };
  std::vector<fs::path> ours;
  size_t foreign = 0;
  std::string example;
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name == kSliceMarker) continue;
    if (name == schedule::kHostsFile && e.is_regular_file() && is_host_table(e.path())) {  // the slices' host table, not a namesake
      ours.push_back(e.path());
      continue;
    }
    if (e.is_regular_file() && slice_name(name)) ours.push_back(e.path());
    else if (!foreign++) example = name;
  }
  if (foreign)
    throw InputError("--per-node " + dir + " holds " + std::to_string(foreign) + " file(s) export did not write (e.g. " + example +
                     "): give an empty or new directory");
  for (const fs::path& p : ours) fs::remove(p);
  workflow::write_text_file(fs::path(dir) / kSliceMarker, "slices of schedule " + schedule + ", written by ibroute export --per-node\n");
}

int run_export(const ExportOptions& o) {
  store::FabricStore store(o.db, store::Access::read_only);
  store::ScheduleInfo info = store.schedule_info(o.schedule);
  ScheduleDoc doc;
  doc.schedule = store.load_schedule(info.id);
  store::ScanInfo scan = store.scan(info.scan_id);
  fabric::Fabric f = store.load_fabric(info.scan_id, false);
  doc.identities = identify_hosts(f, doc.schedule.hosts);
  doc.fabric = {info.scan_id, scan.started_at, static_cast<uint8_t>(scan.lmc)};
  doc.created_at = info.created_at;

  if (!o.per_node.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(o.per_node, ec);
    if (ec || !std::filesystem::is_directory(o.per_node))
      throw InputError("--per-node " + o.per_node + ": " + (std::filesystem::exists(o.per_node) ? "exists and is not a directory" : "cannot create it: " + ec.message()));
    clear_own_slices(o.per_node, info.name);
    Progress progress;
    workflow::write_slices(o.per_node, doc, std::ref(progress));
    progress.finish();
    std::cerr << "wrote " << doc.identities.size() << " per-node slices and their host table (" << schedule::kHostsFile << ") to " << o.per_node << "\n";
    if (o.output.empty()) return kExitOk;
  }
  auto write = [&](std::ostream& out) {
    if (o.format == "csv") write_csv(out, doc);  // streamed: 10^8 lines must not sit in memory
    else out << to_json(doc);                   // compact (format version 2): O(N) values per phase
  };
  if (o.output.empty() || o.output == "-") {
    write(std::cout);
    if (!std::cout.flush()) throw InputError("cannot write the standard output");
  } else {
    WholeFile out(o.output);  // an interrupted export leaves the old file whole
    write(out.out());
    out.commit();
  }
  return kExitOk;
}

}  // namespace

Runner setup_export(CLI::App& app) {
  auto o = std::make_shared<ExportOptions>();
  auto* c = app.add_subcommand("export", "Write a stored schedule for peers (format: docs/schedule-format.md).");
  add_db_option(c, o->db);
  c->add_option("--schedule", o->schedule, "schedule name or id")->required();
  c->add_option("--format", o->format, "json or csv")->check(CLI::IsMember({"json", "csv"}))->capture_default_str();
  c->add_option("-o,--output", o->output, "output file (default: standard output)");
  c->add_option("--per-node", o->per_node, "also write one slice per host into this directory, and their host table (hosts.json; docs/schedule-format.md)");
  return [o] { return run_export(*o); };
}

}  // namespace ibroute::cli
