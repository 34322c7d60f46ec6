// Shell quoting for the command lines a sweep shows its users and writes
// into runner scripts (commands.txt, run_parallel.sh, sweep.sbatch).
#pragma once

#include <string>
#include <vector>

namespace tpb::sweep {

// `s` as one shell word: bare when it holds only safe characters, else in
// single quotes (a ' as '\'').
std::string sh_quote(const std::string& s);
// The words quoted and joined by spaces.
std::string sh_join(const std::vector<std::string>& argv);

}  // namespace tpb::sweep
