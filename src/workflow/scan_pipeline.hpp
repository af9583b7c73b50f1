// One scan as `scan` and `watch` make it: the fabric read live (libibnetdisc, libibmad) or from
// files, names from a node-name map, the problems the fabric as a whole shows, every route
// resolved and the broken ones located. Stored by the caller (or not: watch stores only a change).
#pragma once

#include <string>

#include "fabric_store.hpp"
#include "ibroute/fabric/model.hpp"
#include "ibroute/fabric/progress.hpp"
#include "ibroute/fabric/routes.hpp"

namespace ibroute::workflow {

struct ScanRequest {
  std::string ca;  // live: the CA and port to scan from ("" / 0: the default)
  int port = 0;
  int timeout_ms = 0, retries = 0;  // 0: libibmad's
  int mads = 32;                    // LFT SMPs in flight
  std::string topology, lfts;       // offline: the files (topology given: offline)
  std::string node_name_map;
};

struct ScanResult {
  store::ScanInfo info;  // source, origin, complete, duration (its id once stored)
  fabric::Fabric f;
  fabric::RouteSet routes;
  std::optional<fabric::CounterSnapshot> counters;  // the ports' counters where the file holds them (db_csv)
  double t_read = 0, t_routes = 0;
};

// InputError for options that do not go together (files offline, -C/-P live).
void check_scan_request(const ScanRequest& r);
// InputError for options that do not go together or files that are no fabric; a live read that
// fails throws the adapter's error.
ScanResult scan_fabric(const ScanRequest& r, const fabric::ProgressFn& progress = {});
// scan_fabric in two steps: the read (no routes yet; `complete` and the fabric's problems set),
// then every route resolved and the broken ones located. watch compares a read with the last scan
// before it pays for the routes (fabric::same_tables).
ScanResult read_scan(const ScanRequest& r, const fabric::ProgressFn& progress = {});
void resolve_scan_routes(ScanResult& x);

}  // namespace ibroute::workflow
