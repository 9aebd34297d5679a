#include <catch2/catch.hpp>

#include <array>

#include "trnslurm/util/enum_names.hpp"

using namespace trnslurm;

namespace {
enum class Colour { red, green, blue };
constexpr std::array<EnumName<Colour>, 2> colour_names{{{Colour::red, "red"}, {Colour::green, "green"}}};
}  // namespace

TEST_CASE("enum_names: one table read both ways") {
  CHECK(name_of(colour_names, Colour::green) == "green");
  CHECK(value_named(colour_names, "red") == Colour::red);
  CHECK_FALSE(value_named(colour_names, "Red"));
  CHECK(name_of(colour_names, Colour::blue) == "unknown");  // a value the table lacks
}
