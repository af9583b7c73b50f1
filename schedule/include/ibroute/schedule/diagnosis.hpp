// Which part of the fabric slowed a run down, read from the run like a tomography: every pair's
// path is known from the forwarding tables, so a link direction whose transfers are slow across
// phases and hosts — while the same hosts run at plan over other links — is a suspect, and a pair
// slowed once is noise. A host's own link (its sends, or its receives) stands for the host: its
// HCA and its cable carry every one of its transfers, so no path tells them apart.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ibroute/schedule/evaluate.hpp"
#include "ibroute/schedule/schedule.hpp"

namespace ibroute::schedule {

// The rate each pair's transfer is planned to get in its phase: the least over its path of a
// link's rate shared by the phase's transfers on that link. n x n (row: sender), Gb/s; -1 where
// the schedule has no such transfer or its route is broken. With `cap_gbps` > 0 at most that (what
// a simulation shows of a pair: at most the node's planned rate).
std::vector<float> planned_pair_gbps(const EvalContext& ctx, const Schedule& s, double cap_gbps = 0);

struct RunSuspect {
  int32_t link = -1;         // directed link (LinkIndex): out of (node, port)
  int32_t rank = -1;         // the host whose own link it is (sends from it, or receives into it); -1: between switches
  bool receive = false;      // a host's receiving side (the switch port towards it)
  double factor = 1;         // its transfers run at this share of their planned rate (median)
  size_t transfers = 0;      // pairs measured over it
  double slow_share = 0;     // of them, the share below the middle of factor and plan
  double others = 1;         // the same senders' other transfers (not over it): median share of plan
  double confidence = 0;     // 0..1
  int32_t alternative = -1;  // another link that explains its slow transfers as well (this run cannot tell them apart)
};

struct RunDiagnosis {
  std::vector<RunSuspect> suspects;  // most likely first
  size_t pairs = 0;                  // pairs with a planned and a measured rate
  double median_share = 1;           // of all pairs, before any suspect is taken out; below 0.9 the
                                     // shares are judged against it (slower than plan everywhere)
};

// `observed`: n x n measured Gb/s per pair (row: sender), negative where none — taken by value
// and worked on in place (move the run's matrix in: no second n x n array is made). Suspects are
// peeled greedily: the link whose transfers' median share of plan is lowest is taken, its factor
// divided out of its transfers, and the next one sought, up to `at_most`; links with fewer than
// `min_transfers` measured pairs are not judged.
// `cap_gbps`: the observed rates are capped at it (planned_pair_gbps).
RunDiagnosis diagnose_run(const EvalContext& ctx, const Schedule& s, std::vector<float> observed, double cap_gbps = 0,
                          size_t at_most = 10, size_t min_transfers = 8);

// A confirmation run for suspect links: for each, up to `per_link` of the plan's transfers that
// cross it and as many transfers of the same senders or to the same receivers that avoid every
// suspect (the controls),
// packed into phases in which no host sends or receives twice. The hosts, timing and bound are the
// plan's; the phases are new (time them before running). One more run tells the suspects apart:
// their transfers slow, the controls at plan.
struct Confirmation {
  Schedule schedule;
  std::vector<int32_t> links;                                            // the suspects, in the order given
  std::vector<std::vector<std::pair<int32_t, int32_t>>> over, controls;  // per suspect: (src, dst) pairs
};
Confirmation confirmation_schedule(const EvalContext& ctx, const Schedule& plan, const std::vector<int32_t>& links,
                                   size_t per_link = 16);

// The confirmation run read back: per suspect the median share of plan of its transfers and of its
// controls, and whether it is confirmed (its transfers at most 0.8 of the controls') or cleared
// (at least 0.95 of them).
struct Verdict {
  int32_t link = -1;
  double share = 1, controls = 1;
  bool confirmed = false, cleared = false;
};
std::vector<Verdict> judge_confirmation(const EvalContext& ctx, const Confirmation& c,
                                        const std::vector<float>& observed);

}  // namespace ibroute::schedule
