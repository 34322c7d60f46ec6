// The sc_main of a program over the run API that has a main of its own
// (tpbsim, the Python extension in the interpreter, libtpbsim_dpi in a
// simulator): libsystemc's own main() would call sc_main, so libsystemc
// refers to it, and this weak definition only satisfies that reference,
// dynamic links included (exported: the Python extension hides its other
// symbols, and libtpbsim_dpi's version script names it). Never called; a
// program with an sc_main of its own (a test, a benchmark) keeps that one.
//
// Included by exactly one source of each such program: the definition is
// here once, in the object of the program's own code that the link always
// takes (a static library of the run API would not export it from a shared
// object that excludes its archives' symbols).
#pragma once

extern "C" __attribute__((weak, visibility("default"))) int sc_main(int, char**) { return 0; }
