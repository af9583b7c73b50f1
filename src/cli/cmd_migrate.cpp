// ibroute migrate: brings an older database to this ibroute's schema version. The commands that only
// read never migrate (they leave the file as it was and name this command); those that write do.
#include <iostream>

#include "commands.hpp"
#include "common.hpp"
#include "options.hpp"

namespace ibroute::cli {

using namespace ibroute::workflow;  // what the commands bind to options and print

namespace {

struct MigrateOptions : StoreOptions {};

int run_migrate(const MigrateOptions& o) {
  store::FabricStore store(o.db, store::Access::read_write);  // migrates in one transaction, or throws
  const int from = store.found_version();
  if (o.json) {
    print_json(
        {{"db", o.db}, {"from_version", from}, {"version", store::kSchemaVersion}, {"migrated", store.migrated()}});
  } else if (store.migrated()) {
    std::cout << "migrated " << o.db << " from version " << from << " to " << store::kSchemaVersion << "\n";
  } else {
    std::cout << o.db << " is already at version " << store::kSchemaVersion << "\n";
  }
  return kExitOk;
}

}  // namespace

Runner setup_migrate(CLI::App& app) {
  auto o = std::make_shared<MigrateOptions>();
  add_store_command(app, *o, "migrate", kWithJson);
  return [o] { return run_migrate(*o); };
}

}  // namespace ibroute::cli
