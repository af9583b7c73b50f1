// Each subcommand's examples, appended to its --help footer: the man pages take their EXAMPLES
// section from there (man_pages.cpp), and the package test checks every option they use.
#include <map>
#include <string>

#include "man_pages.hpp"

namespace ibroute::cli {

namespace {
const std::map<std::string, std::string>& examples() {
  static const std::map<std::string, std::string> table{
      {"scan",
       "ibroute scan --db fabric.db\n"
       "ibroute scan --db fabric.db --topology ibnetdiscover.out --lfts dump_lfts.out --node-name-map "
       "/etc/opensm/ib-node-name-map"},
      {"scans", "ibroute scans --db fabric.db\nibroute scans --db fabric.db --problems 3"},
      {"schedules", "ibroute schedules --db fabric.db\nibroute schedules --db fabric.db --json"},
      {"counters",
       "ibroute counters --db fabric.db --label before-run\n"
       "ibroute counters --db fabric.db --label after-run --top 50      # what changed since before-run\n"
       "ibroute counters --db fabric.db --json --mads-in-flight 64\n"
       "ibroute counters --db fabric.db --format prometheus -o /var/lib/node_exporter/textfile/ib.prom\n"
       "ibroute counters --db fabric.db --format influx | curl --data-binary @- 'http://influx:8086/write?db=ib'"},
      {"exporter",
       "ibroute exporter --db fabric.db                                  # Prometheus scrapes 127.0.0.1:9683/metrics\n"
       "ibroute exporter --db fabric.db --listen 0.0.0.0:9683 --min-interval 10"},
      {"routes", "ibroute routes --db fabric.db --from node1-036 --to 0x0002c90300a1b2c4 --lid all"},
      {"watch",
       "ibroute watch --db fabric.db --schedule daq --export /shared/daq-epochs --interval 5\n"
       "ibroute watch --db fabric.db --schedule daq --export epochs --json   # one JSON object per event"},
      {"diff", "ibroute diff --db fabric.db          # the two newest scans\nibroute diff --db fabric.db 4 7 --json"},
      {"topo",
       "ibroute topo --db fabric.db --format svg -o fabric.svg\nibroute topo --db fabric.db --format matrix --schedule "
       "a2a -o load.svg"},
      {"analyze",
       "ibroute analyze --db fabric.db --patterns rr-name,rr-topo --lids base\nibroute analyze --db fabric.db --hosts "
       "@hosts.txt --json"},
      {"plan",
       "ibroute plan --db fabric.db --hosts @hosts.txt --message-size 1M --name a2a\n"
       "ibroute plan --db fabric.db --senders @inputs.txt --receivers @builders.txt --order topology"},
      {"export", "ibroute export --db fabric.db --schedule a2a -o a2a.json --per-node slices/"},
      {"validate", "ibroute validate --db fabric.db a2a.json"},
      {"run",
       "srun --mpi=pmix -N 64 --ntasks-per-node=1 ibroute run --db fabric.db --schedule a2a --rounds 10\n"
       "mpirun -np 8 --map-by node ibroute run --db fabric.db --schedule a2a --duration 3600 -o run.json\n"
       "mpirun -np 8 --map-by node ibroute run --db fabric.db --schedule a2a --find-rate --max-skipped 0.001\n"
       "mpirun -np 8 --map-by node ibroute run --db fabric.db --schedule a2a --transport uc   # writes that never "
       "hang"},
      {"accept",
       "ibroute accept --db fabric.db --expect expect.json --simulate --report accept.html\n"
       "ibroute accept --db fabric.db --expect expect.json --launch 'srun --mpi=pmix -N {ranks} --ntasks-per-node=1' "
       "--report accept.html"},
      {"routing",
       "ibroute routing --db fabric.db --hosts @hosts.txt -o lfts.dump --ranks ranks.txt\nopensm -R file -U lfts.dump"},
      {"migrate", "ibroute migrate --db fabric.db"},
  };
  return table;
}
}  // namespace

void append_examples(CLI::App& sub) {
  auto it = examples().find(sub.get_name());
  if (it == examples().end()) return;
  std::string text = sub.get_footer();
  if (text.empty()) text = sub.get_parent() ? sub.get_parent()->get_footer() : "";
  std::string lines;
  for (size_t a = 0; a < it->second.size();) {
    size_t b = it->second.find('\n', a);
    if (b == std::string::npos) b = it->second.size();
    lines += "  " + it->second.substr(a, b - a) + "\n";
    a = b + 1;
  }
  sub.footer(text + (text.empty() ? "" : "\n") + kExamplesHeading + "\n" + lines.substr(0, lines.size() - 1));
}

}  // namespace ibroute::cli
