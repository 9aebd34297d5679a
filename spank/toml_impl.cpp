// toml++'s compiled part, built into the plugin and trnslurm (what libtomlplusplus.so holds), so
// that with fmt_impl.cpp and -static-libstdc++ neither loads a C++ shared library: dynamic
// linking of libstdc++, libfmt and libtomlplusplus was a third of every command's start
// (bench/chain), and the plugin reads the site's instances file in every step.
#define TOML_IMPLEMENTATION
#include <toml++/toml.h>
