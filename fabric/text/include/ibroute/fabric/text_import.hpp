// Offline import of what admins already keep: `ibnetdiscover` topology output, ibdiagnet's
// `.ibnetdiscover`, `.lst` and `db_csv`, and `dump_fts` / `dump_lfts.sh` forwarding-table dumps. Parsers take text, not
// file names, so tests feed them strings; the CLI reads the files.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "ibroute/fabric/counters.hpp"
#include "ibroute/fabric/model.hpp"

namespace ibroute::fabric {

// A topology in any of the text forms below, told apart by content: ibnetdiscover's plain or
// grouped (-g) node records (ibdiagnet's labelled form too), its ports report (-p), ibdiagnet's
// .lst or its db_csv. Throws InputError naming the file and line.
// (The binary cache of `ibnetdiscover --cache` is loaded by libibnetdisc: see live_scan.hpp.)
Fabric parse_topology(std::string_view text, std::string_view source_name = "topology");

// Parse ibnetdiscover output (plain or -g) into a fabric without LFTs. Throws InputError naming the line.
Fabric parse_ibnetdiscover(std::string_view text, std::string_view source_name = "topology");
// The ports report of `ibnetdiscover -p`.
bool looks_like_ports_report(std::string_view text);
Fabric parse_ports_report(std::string_view text, std::string_view source_name = "topology");
// ibdiagnet's link list (ibdiagnet2.lst): no LMC, no uncabled ports.
bool looks_like_ibdiagnet_lst(std::string_view text);
Fabric parse_ibdiagnet_lst(std::string_view text, std::string_view source_name = "topology");
// ibdiagnet's CSV database (ibdiagnet2.db_csv): NODES, PORTS and LINKS; with `counters`, also
// its PM_INFO (as parse_ibdiagnet_counters below) from the same reading of the file.
bool looks_like_ibdiagnet_csv(std::string_view text);
Fabric parse_ibdiagnet_csv(std::string_view text, std::string_view source_name = "topology",
                           std::optional<CounterSnapshot>* counters = nullptr);
// The PM_INFO section of the same db_csv as a counters snapshot of `f` (the fabric parsed from it);
// nullopt where the run read no counters (`--skip pm`: no PM_INFO rows). Ports whose counters say
// "N/A" or -1 are listed as unanswered, never read as 0.
std::optional<CounterSnapshot> parse_ibdiagnet_counters(std::string_view text, const Fabric& f,
                                                        std::string_view source_name = "topology");

// Fill the switches' LFTs of `f` from a forwarding-table dump: `ibroute`/dump_lfts.sh, dump_fts,
// OpenSM's opensm-lfts.dump, or the .fdbs of OpenSM and ibdiagnet. Switches the dump does not
// cover, and tables that were cut, are marked unread and recorded as problems (scan incomplete);
// a dump naming a switch the topology lacks is an error.
void apply_lft_dump(Fabric& f, std::string_view text, std::string_view source_name = "lfts");

// infiniband-diags' node-name map: GUID -> name.
NodeNameMap parse_node_name_map(std::string_view text, std::string_view source_name = "node-name-map");

}  // namespace ibroute::fabric
