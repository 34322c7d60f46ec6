// The semaphore plan of the race check (SPEC §14, docs/CONVENTIONS.md "Race
// check"): which increment a one-producer wait needs, what every way to
// satisfy a several-producer wait has in common, and which semaphores are
// observed instead, with why.
#include <gtest/gtest.h>

#include <algorithm>

#include "models/race/semaphore_plan.h"
#include "test_race_util.h"

namespace tpb::race {
namespace {

using isa::Queue;
using namespace tpb::race::test;

PlanInput input_of(const Prog& p) {
  PlanInput in;
  for (unsigned q = 0; q < isa::kNumQueues; ++q)
    in.queues.push_back(
        PlanQueue{queue_id(0, static_cast<Queue>(q)), p.notes[q].data(), p.notes[q].size()});
  in.start.push_back(p.start);
  return in;
}

std::vector<std::pair<Queue, std::uint64_t>> prefixes(const SemaphorePlan::Acquire& a) {
  std::vector<std::pair<Queue, std::uint64_t>> v;
  for (std::size_t i = 0; i < a.num_prefixes; ++i)
    v.push_back({static_cast<Queue>(a.prefixes[i].queue), a.prefixes[i].count});
  std::sort(v.begin(), v.end());
  return v;
}

TEST(RacePlan, OneProducerNamesTheIncrementTheCountNeedsFromWhereItStarts) {
  for (const std::uint32_t start : {0u, 1u, 2u}) {
    Prog p;
    p.start[5] = start;
    for (int i = 0; i < 3; ++i) p.add(Queue::Pool, inc(5));
    p.add(Queue::Dve, wait_ge(5, 2));
    p.add(Queue::Dma3, wait_ge(5, 3));
    const SemaphorePlan plan(input_of(p));
    EXPECT_TRUE(plan.exact(sem_id(0, 5)));
    const SemaphorePlan::Acquire dve = plan.acquire(queue_id(0, Queue::Dve), 0);
    ASSERT_TRUE(dve.planned);
    if (start >= 2) {
      EXPECT_EQ(dve.increment, nullptr);  // already there when the run starts
    } else {
      ASSERT_NE(dve.increment, nullptr);
      EXPECT_EQ(*dve.increment, (Increment{sem_id(0, 5), queue_id(0, Queue::Pool), 2 - start}));
      EXPECT_EQ(plan.waiters(*dve.increment), 1u);  // one compute wait needs it
    }
    const SemaphorePlan::Acquire dma = plan.acquire(queue_id(0, Queue::Dma3), 0);
    ASSERT_NE(dma.increment, nullptr);
    EXPECT_EQ(dma.increment->ordinal, 3 - start);
    EXPECT_EQ(plan.waiters(*dma.increment), 16u);  // each of the DMA queue's engines
    EXPECT_EQ(dma.num_prefixes, 0u);
  }
}

TEST(RacePlan, SeveralProducersOrderAfterWhatEveryWayToReachTheCountShares) {
  for (const std::uint32_t k : {1u, 2u}) {
    Prog p;
    p.add(Queue::Pool, inc(4));
    p.add(Queue::Dve, inc(4));
    p.add(Queue::Pe, wait_ge(4, k));
    const SemaphorePlan plan(input_of(p));
    const SemaphorePlan::Acquire a = plan.acquire(queue_id(0, Queue::Pe), 0);
    ASSERT_TRUE(a.planned);
    EXPECT_EQ(a.increment, nullptr);
    if (k == 1)
      EXPECT_TRUE(prefixes(a).empty());  // either may come first: neither is needed
    else
      EXPECT_EQ(prefixes(a),
                (std::vector<std::pair<Queue, std::uint64_t>>{{Queue::Pool, 1}, {Queue::Dve, 1}}));
  }
  // Both producers wait for pool's instruction 1: ge(s, 1) is ordered after it.
  Prog p;
  p.add(Queue::Pool);
  p.add(Queue::Pool, inc(1));
  p.add(Queue::Dve, wait_ge_inc(1, 1, 4));
  p.add(Queue::Pe, wait_ge_inc(1, 1, 4));
  p.add(Queue::Sfu, wait_ge(4, 1));
  const SemaphorePlan plan(input_of(p));
  EXPECT_EQ(prefixes(plan.acquire(queue_id(0, Queue::Sfu), 0)),
            (std::vector<std::pair<Queue, std::uint64_t>>{{Queue::Pool, 2}}));
}

TEST(RacePlan, ADmaWaitCanNeedItsOwnQueuesEarlierTransfer) {
  // dma0[0] completes -> pool increments sem2; dma1 increments sem2;
  // dma0[1] waits ge(sem2, 2): it needs pool's increment, so dma0[0]'s
  // completion too (its own queue's engines order only their own share).
  Prog p;
  p.add(Queue::Dma0, inc(1));
  p.add(Queue::Pool, wait_ge_inc(1, 1, 2));
  p.add(Queue::Dma1, inc(2));
  p.add(Queue::Dma0, wait_ge(2, 2));
  const SemaphorePlan plan(input_of(p));
  EXPECT_EQ(prefixes(plan.acquire(queue_id(0, Queue::Dma0), 1)),
            (std::vector<std::pair<Queue, std::uint64_t>>{
                {Queue::Pool, 1}, {Queue::Dma0, 1}, {Queue::Dma1, 1}}));
}

TEST(RacePlan, DecrementsSetsEqWaitsAndTheirNeighboursAreObservedWithWhy) {
  Prog p;
  p.add(Queue::Pool, events(0, 0, 0, 2, 7));  // decrement sem7
  p.add(Queue::Pool, events(0, 0, 3, 3, 8));  // set sem8 = 3
  p.add(Queue::Dve, wait_eq(9, 1));
  p.add(Queue::Pe, inc(10));
  p.add(Queue::Sfu, inc(10));
  p.add(Queue::Dve, wait_ge(10, 1));
  p.add(Queue::Pe, inc(11));
  const SemaphorePlan plan(input_of(p));
  EXPECT_EQ(plan.why_observed(sem_id(0, 7)), "decremented by pool[0]");
  EXPECT_EQ(plan.why_observed(sem_id(0, 8)), "set by pool[1]");
  EXPECT_EQ(plan.why_observed(sem_id(0, 9)), "waited on with == by dve[0]");
  // Two producers in a program with a timing-dependent wait (on sem9).
  EXPECT_FALSE(plan.exact(sem_id(0, 10)));
  EXPECT_EQ(plan.why_observed(sem_id(0, 10)),
            "incremented by several queues (pe, sfu) in a program that also waits on "
            "timing-dependent semaphores");
  EXPECT_TRUE(plan.exact(sem_id(0, 11)));
  EXPECT_EQ(plan.why_observed(sem_id(0, 11)), "");
}

TEST(RacePlan, PastItsBudgetASeveralProducerSemaphoreIsObserved) {
  Prog p;
  p.add(Queue::Pool, inc(4));
  p.add(Queue::Dve, inc(4));
  p.add(Queue::Pe, wait_ge(4, 2));
  const SemaphorePlan plenty(input_of(p));
  EXPECT_TRUE(plenty.exact(sem_id(0, 4)));
  EXPECT_GT(plenty.closure_steps(), 0u);
  const SemaphorePlan tight(input_of(p), 1);
  EXPECT_FALSE(tight.exact(sem_id(0, 4)));
  EXPECT_EQ(tight.why_observed(sem_id(0, 4)),
            "incremented by several queues, in a program too long to plan every wait on it "
            "exactly");
}

}  // namespace
}  // namespace tpb::race
