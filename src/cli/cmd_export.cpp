// ibroute export: a stored schedule in the documented exchange format, whole or per node.
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "commands.hpp"
#include "common.hpp"
#include "export_files.hpp"
#include "ibroute/fabric/error.hpp"
#include "ibroute/schedule/format.hpp"
#include "ibroute/schedule/validate.hpp"
#include "options.hpp"
#include "whole_file.hpp"

namespace ibroute::cli {

using namespace ibroute::workflow;  // what the commands bind to options and print

using namespace ibroute::schedule;

namespace {

struct ExportOptions : StoreOptions {
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
// Throws where `dir` holds anything export did not write (nothing is deleted then).
void check_own_slices(const std::string& dir) {
  namespace fs = std::filesystem;
  // Ours: the marker and slices named as export names them (rankNNNNN-NAME.json), also those of an
  // ibroute that wrote no marker yet.
  auto slice_name = [](const std::string& n) {
    return n.size() > 15 && n.starts_with("rank") && n[9] == '-' && n.ends_with(".json") &&
           std::all_of(n.begin() + 4, n.begin() + 9, [](char c) { return c >= '0' && c <= '9'; });
  };
  size_t foreign = 0;
  std::string example;
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name == kSliceMarker) continue;
    if (name == schedule::kHostsFile && e.is_regular_file() && is_host_table(e.path()))
      continue;  // the slices' host table, not a namesake
    if (!(e.is_regular_file() && slice_name(name)) && !foreign++) example = name;
  }
  if (foreign)
    throw InputError("--per-node " + dir + " holds " + std::to_string(foreign) +
                     " file(s) export did not write (e.g. " + example + "): give an empty or new directory");
}

// The slices written into a new directory beside `dir` and put in its place whole: exchanged with
// the old one by renameat2(RENAME_EXCHANGE), which then goes. A peer reads the old slices or the
// new, never a mix (an interrupted export leaves the old directory and a hidden `.NAME.slices-*`
// beside it); no slice of an earlier, larger schedule stays beside the new ones.
void replace_slices(const std::string& dir, const ScheduleDoc& doc, const std::string& schedule,
                    const fabric::ProgressFn& progress) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path target =
      fs::weakly_canonical(fs::absolute(dir), ec);  // "slices/", "./slices", a link to it: the one directory
  if (!ec && target.filename().empty() && target != target.root_path()) target = target.parent_path();  // "slices/"
  if (ec || target.filename().empty() || target == fs::current_path(ec))
    throw InputError("--per-node " + dir +
                     ": give the slices a directory of their own (not the current one or /); it is replaced whole");
  const fs::path name = target.filename(), parent = target.parent_path();
  const bool existed = fs::exists(fs::symlink_status(target, ec));
  if (existed && !fs::is_directory(target)) throw InputError("--per-node " + dir + ": exists and is not a directory");
  if (existed) check_own_slices(dir);
  fs::create_directories(parent, ec);
  std::string templ = (parent / ("." + name.string() + ".slices-XXXXXX")).string();
  if (!::mkdtemp(templ.data()))
    throw InputError("--per-node " + dir + ": cannot create a directory beside it: " + std::strerror(errno));
  const fs::path fresh = templ;
  try {
    workflow::write_text_file(fresh / kSliceMarker,
                              "slices of schedule " + schedule + ", written by ibroute export --per-node\n");
    workflow::write_slices(fresh, doc, progress);
    ::chmod(fresh.c_str(), 0755);  // mkdtemp's 0700 would keep other users' peers out
    if (!existed) {
      fs::rename(fresh, target, ec);
      if (ec) throw InputError("--per-node " + dir + ": cannot rename " + fresh.string() + " to it: " + ec.message());
      return;
    }
    if (::renameat2(AT_FDCWD, fresh.c_str(), AT_FDCWD, target.c_str(), RENAME_EXCHANGE) != 0)
      throw InputError("--per-node " + dir + ": cannot exchange it with " + fresh.string() + ": " +
                       std::strerror(errno));
  } catch (...) {
    fs::remove_all(fresh, ec);
    throw;
  }
  fs::remove_all(fresh, ec);  // now the old slices
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
    Progress progress;
    replace_slices(o.per_node, doc, info.name, std::ref(progress));
    progress.finish();
    std::cerr << "wrote " << doc.identities.size() << " per-node slices and their host table (" << schedule::kHostsFile
              << ") to " << o.per_node << "\n";
    if (o.output.empty()) return kExitOk;
  }
  auto write = [&](std::ostream& out) {
    if (o.format == "csv")
      write_csv(out, doc);  // streamed: 10^8 lines must not sit in memory
    else
      out << to_json(doc);  // compact (format version 2): O(N) values per phase
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
  auto* c = add_store_command(app, *o, "export", kDbOnly);
  c->add_option("--schedule", o->schedule, "schedule name or id")->required();
  c->add_option("--format", o->format, "json or csv")->check(CLI::IsMember({"json", "csv"}))->capture_default_str();
  c->add_option("-o,--output", o->output, "output file (default: standard output)");
  c->add_option(
      "--per-node", o->per_node,
      "also write one slice per host into this directory, and their host table (hosts.json; docs/schedule-format.md)");
  return [o] { return run_export(*o); };
}

}  // namespace ibroute::cli
