// ibroute topo: the fabric of a scan as a Graphviz picture (DOT text or SVG).
#include <fstream>
#include <iostream>

#include "commands.hpp"
#include "common.hpp"
#include "ibroute/fabric/dot.hpp"
#include "ibroute/fabric/error.hpp"

namespace ibroute::cli {

using namespace ibroute::fabric;

namespace {

struct TopoOptions {
  std::string db = kDefaultDb;
  std::optional<int64_t> scan;
  std::string format = "dot";
  std::string output;
  bool hosts = false;
};

int run_topo(const TopoOptions& o) {
  store::FabricStore store(o.db, false);
  Fabric f = store.load_fabric(pick_scan(store, o.scan), false);
  std::string text = to_dot(f, DotOptions{.fold_hosts = !o.hosts});
  if (o.format == "svg") text = render_svg(text);
  if (o.output.empty() || o.output == "-") {
    std::cout << text;
  } else {
    std::ofstream out(o.output, std::ios::binary);
    if (!(out << text)) throw InputError("cannot write " + o.output);
  }
  return kExitOk;
}

}  // namespace

Runner setup_topo(CLI::App& app) {
  auto o = std::make_shared<TopoOptions>();
  auto* c = app.add_subcommand("topo", "The fabric as a Graphviz picture (DOT or SVG).");
  c->footer(
      "Draw the fabric: switches as boxes (leaves blue, spines orange), hosts folded per leaf,\n"
      "links at reduced width or speed orange, links down red, switches with unread LFTs red.");
  c->add_option("--db", o->db, "fabric database")->capture_default_str();
  c->add_option("--scan", o->scan, "scan id (default: the newest)");
  c->add_option("--format", o->format, "dot or svg")->check(CLI::IsMember({"dot", "svg"}))->capture_default_str();
  c->add_option("-o,--output", o->output, "output file (default: standard output)");
  c->add_flag("--hosts", o->hosts, "draw every host instead of one box per leaf");
  return [o] { return run_topo(*o); };
}

}  // namespace ibroute::cli
