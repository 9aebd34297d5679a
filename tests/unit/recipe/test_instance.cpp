#include <catch2/catch.hpp>

#include "trnslurm/recipe/instance.hpp"

using namespace trnslurm;

TEST_CASE("instance: cores per node follow the instance and the LNC") {
  const auto* trn1 = find_instance("trn1.32xlarge");
  const auto* trn1n = find_instance("trn1n.32xlarge");
  const auto* trn2 = find_instance("trn2.48xlarge");
  REQUIRE(trn1 != nullptr);
  REQUIRE(trn1n != nullptr);
  REQUIRE(trn2 != nullptr);
  CHECK(cores_per_node(*trn1, 1, std::nullopt).value() == 32);
  CHECK(cores_per_node(*trn1n, 1, std::nullopt).value() == 32);
  CHECK(cores_per_node(*trn2, 1, std::nullopt).value() == 128);
  CHECK(cores_per_node(*trn2, 2, std::nullopt).value() == 64);
  CHECK(trn2->default_lnc == 2);
  CHECK(trn1->default_lnc == 1);
  CHECK(trn1->backend == "trn1");
  CHECK(trn2->backend == "trn2");
  CHECK(find_instance("p4d.24xlarge") == nullptr);
}

TEST_CASE("instance: refusals") {
  const auto r = cores_per_node(*find_instance("trn1.32xlarge"), 2, std::nullopt);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().where == "cluster.lnc");
  CHECK(r.error().hint == "trn1.32xlarge supports only lnc = 1");
  const auto contradiction = cores_per_node(*find_instance("trn2.48xlarge"), 2, 128u);
  REQUIRE_FALSE(contradiction.has_value());
  CHECK(contradiction.error().what == "cores_per_node = 128 but trn2.48xlarge at lnc = 2 has 64 cores");
  CHECK(cores_per_node(*find_instance("trn2.48xlarge"), 2, 64u).value() == 64);
  const auto cpu = find_instance("cpu");
  CHECK_FALSE(cores_per_node(*cpu, 1, std::nullopt).has_value());
  CHECK(cores_per_node(*cpu, 1, 6u).value() == 6);
}

TEST_CASE("instance: device memory per core") {
  CHECK(memory_per_core_bytes(*find_instance("trn1.32xlarge"), 1) == 16ull << 30);
  CHECK(memory_per_core_bytes(*find_instance("trn2.48xlarge"), 2) == 24ull << 30);
  CHECK(memory_per_core_bytes(*find_instance("trn2.48xlarge"), 1) == 12ull << 30);
  CHECK(memory_per_core_bytes(*find_instance("cpu"), 1) == 0);
}

TEST_CASE("instance: choose_instance resolves lnc and cores, and names the key at fault") {
  const auto trn2 = choose_instance("trn2.48xlarge", 0, std::nullopt);
  REQUIRE(trn2.has_value());
  CHECK(trn2->spec == find_instance("trn2.48xlarge"));
  CHECK(trn2->lnc == 2);
  CHECK(trn2->cores_per_node == 64);

  const auto typo = choose_instance("trn1.32xlarg", 0, std::nullopt);
  REQUIRE_FALSE(typo.has_value());
  CHECK(typo.error().where == "cluster.instance");
  CHECK(typo.error().hint == "did you mean 'trn1.32xlarge'?");

  const auto lnc = choose_instance("trn1.32xlarge", 2, std::nullopt);
  REQUIRE_FALSE(lnc.has_value());
  CHECK(lnc.error().where == "cluster.lnc");

  const auto cpu = choose_instance("cpu", 0, std::nullopt);
  REQUIRE_FALSE(cpu.has_value());
  CHECK(cpu.error().where == "cluster.cores_per_node");
}
