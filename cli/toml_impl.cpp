// toml++'s compiled part, built into trnslurm (what libtomlplusplus.so holds), so that with
// fmt_impl.cpp and -static-libstdc++ the command loads no C++ shared library: dynamic linking
// of libstdc++, libfmt and libtomlplusplus was a third of every command's start (bench/chain).
#define TOML_IMPLEMENTATION
#include <toml++/toml.h>
