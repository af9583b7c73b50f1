// Every command's one-line summary and the text its --help ends with, in one place: what the README's
// command table and the man pages say of each command starts here.
#include <stdexcept>
#include <string>

#include "options.hpp"

namespace ibroute::cli {

namespace {

constexpr CommandHelp kHelp[] = {
    {"accept", "Acceptance test: structure, routing, a congestion-free plan, and the plan played or run.",
     "Checks the newest scan (or --scan; --rescan scans first) against an expectation file (docs/acceptance.md): "
     "topology,\n"
     "hosts, link width and speed, broken links, LMC, routing balance, a congestion-free all-to-all\n"
     "(planned in name order, or in topology order when that is better: --order), its least possible worst link,\n"
     "the rate per node, skipped transfers, clock-sync uncertainty. Each check: pass/fail with the\n"
     "measured value beside the threshold. Writes a self-contained HTML report (--report).\n"
     "Exit code 0 only when every check passes; 1 when one fails; 2 on bad input.\n"
     "Modes: --simulate plays the plan by max-min fair sharing over the scanned links (no hardware);\n"
     "--launch 'srun --mpi=pmix -N {ranks} --ntasks-per-node=1' runs it through `ibroute run`; --run-report uses\n"
     "the report of an earlier `ibroute run -o FILE` of the same fabric."},
    {"analyze", "Fabric structure, routing balance and link load of traffic patterns.",
     "Patterns: rr-name (round-robin all-to-all, phase k: rank i sends to i+k mod N, ranks in host-name\n"
     "order), rr-topo (the same, ranks by leaf and port), perm (random permutations), bisect (random\n"
     "bisections: effective bisection bandwidth). LIDs: base (no LMC use), spread (offset = rank mod 2^LMC),\n"
     "random. Per-node bandwidth: max-min fair sharing of the link rates, per phase.\n"
     "Exit: 0 analysed, 2 bad input (hosts, patterns, a scan without tables for traffic)."},
    {"counters", "Read every port's performance counters; print per link what changed since the last snapshot.",
     "Reads PortCounters (and PortCountersExtended where a port has them) of every connected switch\n"
     "and host port of the scan, many queries in flight; stores them as a snapshot of the scan and\n"
     "prints per port - named by the link it sends on, as topo and routes name it - the change since\n"
     "the scan's previous snapshot: data each way, PortXmitWait (time with data to send and no\n"
     "credits: congestion, measured) and every error counter that rose; worst first. Then the ports\n"
     "whose error counters are not zero at all. Never resets a counter (the monitoring owns them); a\n"
     "counter that went back (wrapped or reset by another tool) or stopped at its maximum is marked.\n"
     "Exit 3 when some port did not answer (named; the rest is stored).\n"
     "--format prometheus or influx prints the reading for a monitoring system instead (every port's\n"
     "absolute counters, both ends of its link; docs/monitoring.md) and stores nothing unless --store."},
    {"diff", "Topology, LID, LFT and route changes between two scans.",
     "Changed routes are named by the switch they enter at and the port that owns the DLID.\n"
     "--against FILE checks the cabling of one scan (SCAN_A, default the newest) against a plan: a\n"
     "reference ibnetdiscover output or a CSV switch,port,peer,peer_port (names or GUIDs): every\n"
     "cable missing, extra, at another port than planned, or swapped, by both ends (docs/cabling.md).\n"
     "Exit: 0 the scans are the same (the cabling as planned), 1 something differs (like diff(1)),\n"
     "2 bad input."},
    {"export", "Write a stored schedule for peers (format: docs/schedule-format.md).", nullptr},
    {"exporter", "Serve every port's counters to Prometheus over HTTP (GET /metrics).",
     "A scrape reads the counters of every cabled port of the scan (as `counters --format prometheus`:\n"
     "metrics named as treydock/infiniband_exporter's, both ends of each cable; docs/monitoring.md)\n"
     "when the last reading is older than --min-interval, and waits for it up to --scrape-timeout;\n"
     "otherwise it gets the last reading, ibroute_exporter_scrape_age_seconds saying how old. Nothing\n"
     "is stored. Answers GET /metrics only, on the address given (default 127.0.0.1:9683). Runs until\n"
     "SIGINT or SIGTERM.\n"
     "Exit: 0 stopped by SIGINT or SIGTERM, 2 bad input (the address in use, no database or scan)."},
    {"migrate", "Upgrade a database to this ibroute's schema version (reading commands never do).", nullptr},
    {"plan", "Plan a congestion-free all-to-all (or two-group) schedule and store it.",
     "N-1 phases; in phase k rank i sends to rank i+k mod N. Two groups (--senders, --receivers; they\n"
     "may overlap): max(S, R) phases, in phase k sender i sends to receiver i+k mod max(S, R), each\n"
     "receiver getting from at most one sender at a time. For every transfer the planner picks the\n"
     "destination LID (the path) so that no link direction carries more transfers at once than the\n"
     "fabric's bound (2 on a half fat-tree, 1 on a non-blocking tree). Methods: structure (edge colouring\n"
     "of leaf-to-leaf traffic by spine, for two-level trees), free (routes whose links are still free,\n"
     "with ejection chains, any topology), auto (structure on two-level trees of 64+ hosts, else free;\n"
     "the other one too where congestion remains). Where no congestion-free choice exists the worst\n"
     "link is minimised and reported. The rate is checked per source, switch out-port and destination.\n"
     "Every phase aims at its least possible load (what its leaves' up-links allow), not the bound, and\n"
     "lasts as long as that load needs at its links' own rates, and at least one message at --rate: the\n"
     "schedule moves each node's bytes at the rate asked (docs/background.md#the-admission-rule).\n"
     "Where the shifts still take 10 % longer than the least possible time of the exchange (a leaf\n"
     "holding more of the hosts than it has up-links, unequal groups), the groups are interleaved by\n"
     "leaf and the busy leaves' excess transfers wait, packed into phases of their own (--shifts-only: not).\n"
     "Where that still misses the least time by 3 % (5 % from 1 000 hosts; up to 2 500: a director's edge switches "
     "with\n"
     "fewer up-links than hosts, LMC 0 tables), every transfer is packed into phases from none, the\n"
     "bottleneck busy in each, and kept where shorter. At LMC > 0 the same is tried over the base LIDs\n"
     "alone and kept where shorter: more paths never plan worse. --json lists every strategy tried, its\n"
     "time, work and why it stopped (solver.tried; docs/planner.md). Efficiency = least possible time / planned time, "
     "in message-times\n"
     "at the host link rate; 'limited by' names the bottleneck: a host link, a leaf's up-links, a link.\n"
     "Exit: 0 planned and stored, 1 planning failed, 2 bad input (hosts, units, a rate above what the fabric "
     "carries)."},
    {"routes", "Show the path between two ports, from the stored routes (like ibtracert).",
     "Show the path from one CA port to another, answered from the database alone.\n"
     "NODE is a node description (\"node1-036\") or its name in the scan's node-name map, a node or\n"
     "port GUID (0x...) or a LID; a name that several nodes carry is refused with the candidates.\n"
     "Exit: 0 shown, every route works; 1 shown, a route is broken (no route, a loop, a dead end);\n"
     "2 bad input (unknown node, a LID the port does not own, no such scan)."},
    {"routing", "Compute forwarding tables for OpenSM's file engine: the all-to-all congestion-free at LMC 0.",
     "Every destination LID turns at a hub (the lowest switches that reach most leaves: the spines of\n"
     "a two-level tree, the cores of a pod tree, the line ASICs of a director) picked by its host's\n"
     "rank, the hubs taken in turn so that consecutive ranks climb by different up-links at every\n"
     "level; a route climbs towards its hub until it meets the hub's way down. On a regular tree the\n"
     "round-robin all-to-all in that rank order is then congestion-free with base LIDs (LMC 0).\n"
     "Missing links are routed around; then a local search moves the first hop of (leaf, destination)\n"
     "pairs where that lowers the transfers above capacity in some phase, and the worst link left is\n"
     "reported. With LMC > 0 a port's LIDs start at hubs that differ at every level, so that\n"
     "'ibroute plan' has real choices.\n"
     "Where edge switches are cabled to several directors (no pods: the hubs would pin each\n"
     "destination to one link into its leaf), the spread construction lays each destination's\n"
     "traffic over the links' loads: sources climb towards the directors with the most spare capacity\n"
     "into the target's leaf, every switch above it descends by its lightest way. --style auto builds\n"
     "both and keeps the one whose least possible all-to-all time is lower (by more than 2 %), else\n"
     "the one with the lower worst link. The least possible time over the tables against the\n"
     "fabric's own is printed: the most efficiency any plan over them can reach.\n"
     "Orders: given (--hosts as listed), tree (by the switches above each leaf, then leaf and port:\n"
     "proposed), auto (given where it reaches the bound, else tree; tree without --hosts).\n"
     "Checked before anything is written: every LID arrives from every switch that a CA hangs off (a\n"
     "switch's LID from every switch with an up*/down* way to it), every route climbs and then only\n"
     "descends (up*/down*: no credit loops), no port beyond its switch's count. -o writes the tables in\n"
     "the dump_lfts.sh format with port GUIDs ('opensm -R file -U FILE'; OpenSM re-maps changed\n"
     "LIDs by GUID); --ranks the rank order, one host per line (for --hosts @FILE).\n"
     "Exit: 0 tables computed (and written), 1 they fail the check (nothing written), 2 bad input."},
    {"run", "Execute a schedule over verbs: one process per host, started by srun or mpirun.",
     "Rank 0 syncs the clocks by verbs round trips, every rank posts its transfers at the planned times,\n"
     "a destination with --skip-after unfinished transfers gets no more until they finish (counted as\n"
     "skipped), and rank 0 gathers the results: per transfer, per node, per link (links from the scan).\n"
     "Each rank re-measures its clock against rank 0 every --resync seconds and posts by its drift model.\n"
     "Results are aggregated per path and destination as the run goes (memory does not grow with its\n"
     "length); single transfers are kept only when something went wrong (--max-anomalies), or all of them\n"
     "in local files with --trace. SIGINT, SIGTERM or SIGUSR1 (mpirun forwards SIGUSR1 to every rank) end\n"
     "the run at a round boundary with the full report; a second signal kills.\n"
     "Exit code 0 when every transfer arrived, 1 when some were skipped, failed or lost (or a rank died),\n"
     "2 on bad input (on every rank), 128+signal when a signal ended the run early (report written)."},
    {"scan", "Discover the fabric, read every switch's LFT, store every route.",
     "Discover the fabric, read every switch's linear forwarding table and store the route of every\n"
     "(source port, destination LID) pair - all 2^LMC LIDs of every port - as a new scan.\n"
     "Live (default): through libibnetdisc and libibmad, like ibnetdiscover and dump_fts.\n"
     "Offline: from files admins keep: --topology (ibnetdiscover output) and optionally --lfts; the\n"
     "formats are told apart by content. Without --lfts routes are unknown: analyze and topo work,\n"
     "plan and validate refuse. Exit 3 when something was not read (unanswered MADs, a cut table),\n"
     "with the switch named."},
    {"scans", "List the scans in a database, or one scan's problems.", nullptr},
    {"schedules", "List the schedules in a database: name, scan, hosts, phases, worst link against the bound.",
     "Names and ids are what 'ibroute export --schedule' and 'ibroute run --schedule' take.\nExit: 0 listed, 2 bad "
     "input (no such database, a damaged one)."},
    {"topo", "The fabric as a Graphviz picture (DOT or SVG).",
     "Draw the fabric: switches as boxes (leaves blue, spines orange), hosts folded per leaf,\n"
     "links at reduced width or speed orange, links down red, switches with unread LFTs red; one row\n"
     "per switch level. --format matrix draws the links between adjacent levels as a grid instead:\n"
     "link counts (missing and slow links stand out) or, with --schedule/--pattern, the worst load\n"
     "per link direction against the capacity (over capacity red).\n"
     "--format slurm writes Slurm's topology.conf for TopologyPlugin=topology/tree: a line per switch (directors as\n"
     "their ASICs) with its child switches and hosts, hosts by their description's first word (node-name map\n"
     "names first), in compressed host lists; hosts without a usable name or link are left out and named on stderr.\n"
     "--format slurm-block writes topology.yaml for topology/block (Slurm 25.05 and later): a block per switch with\n"
     "hosts, the same hosts, blocks under one upper switch side by side.\n"
     "Exit: 0 written, 1 Graphviz failed, 2 bad input."},
    {"validate", "Check a schedule file against a scan: hosts, all-to-all, DLIDs, routes, load.",
     "Exit code 0 when every check passes, 1 when one fails, 2 when the file cannot be read as a schedule."},
    {"watch", "Keep the scan current; re-plan a schedule's hosts on every change and publish epochs for peers.",
     "Reads the fabric every --interval seconds (live, like scan; or the --topology/--lfts files again).\n"
     "A read that differs from the last (links, nodes, LIDs, forwarding tables) is stored as a scan\n"
     "and prints one line naming what changed; then the host set of --schedule (its hosts by port GUID,\n"
     "fixed at start: those gone from the fabric are left out, those back are planned again) is\n"
     "planned on it and published in --export DIR as the next epoch: DIR/epoch-NNNNNN/ (schedule.json,\n"
     "hosts.json, one slice per host), DIR/current pointing at it, replaced atomically; peers switch\n"
     "at the first round that starts --handover seconds or more after it was written (docs/epochs.md).\n"
     "Epoch 1 is written at start. No epoch for an incomplete read, or while transfers have no\n"
     "working route (the subnet manager has not routed again yet): one line each. The epoch's\n"
     "schedule is stored as NAME.eK. Runs until SIGINT/SIGTERM.\n"
     "Exit: 0 stopped by a signal or after --scans reads, 2 bad input (database, schedule, options) or another watch\n"
     "publishing into --export (one writer per directory: a lock on DIR/.ibroute-watch.lock)."},
};

}  // namespace

const CommandHelp& command_help(std::string_view name) {
  for (const CommandHelp& h : kHelp)
    if (name == h.name) return h;
  throw std::logic_error("no help for command " + std::string(name));  // a command added without its help
}

}  // namespace ibroute::cli
