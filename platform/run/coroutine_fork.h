// A fork in the middle of another thread's run (docs/EMBEDDING.md "Fork").
#pragma once

namespace tpb::run {

// In a forked child whose parent had a thread inside a simulation: makes
// SystemC's coroutine package (QuickThreads, Debian's libsystemc) take the
// child's thread as its main coroutine again. The package keeps one
// process-wide "current coroutine"; at the fork it named a coroutine of the
// parent's run, so the child's next simulation would save its stack there
// and, at its first return to the main coroutine, resume the parent's run
// on that thread's copied stack (the child "hung", running someone else's
// simulation). Call only then, from the child's one thread.
void reset_coroutines_after_fork();

}  // namespace tpb::run
