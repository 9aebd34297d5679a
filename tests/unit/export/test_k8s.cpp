#include <catch2/catch.hpp>

#include "trnslurm/export/k8s.hpp"
#include "trnslurm/instance/instance.hpp"

using namespace trnslurm;

namespace {
using Claims = std::vector<std::pair<std::string, std::string>>;

InstanceType cpu_type() {
  InstanceType t;
  t.name = "cpu";
  t.target.value = "cpu";
  return t;
}
}  // namespace

TEST_CASE("k8s: each shared directory gets its claim, or the export is refused") {
  CHECK(k8s_volume_claims({"/fsx"}, {"fsx-claim"}).value() == Claims{{"/fsx", "fsx-claim"}});
  CHECK(k8s_volume_claims({"/fsx", "/home"}, {"/home=home", "fsx"}).value() ==
        Claims{{"/home", "home"}, {"/fsx", "fsx"}});
  const auto refused = [](const std::vector<std::string>& shared, const std::vector<std::string>& claims,
                          const std::string& text) {
    auto r = k8s_volume_claims(shared, claims);
    REQUIRE_FALSE(r);
    CHECK_THAT(r.error().what, Catch::Contains(text));
  };
  refused({"/fsx"}, {}, "no volume claim for /fsx");
  refused({"/fsx", "/home"}, {"one"}, "one claim (one) for 2 directories");
  refused({"/fsx"}, {"a", "b"}, "more than one --volume-claim without a directory");
  refused({"/fsx"}, {"Fsx_Claim"}, "not a volume claim name");
  refused({"/fsx"}, {"fsx=claim"}, "not an absolute directory");
}

TEST_CASE("k8s: the MPIJob runs the launcher as node 0 and refuses a host name over 63 characters") {
  const Claims claims{{"/fsx", "fsx"}};
  K8sOptions options{"image:1", "training", {"fsx"}};
  ExportStage train{"train", 3, 900, 4};
  auto job = k8s_mpijob("20261127-010203-000-0000abcd", train, cpu_type(), options, claims, {"/bin/true"});
  REQUIRE(job);
  CHECK(job->at("metadata").at("name") == "trn-20261127-010203-000-0000abcd-train");
  CHECK(job->at("spec").at("runLauncherAsWorker") == true);
  CHECK(job->at("spec").at("mpiReplicaSpecs").at("Worker").at("replicas") == 2);
  CHECK(job->at("spec").at("runPolicy").at("backoffLimit") == 3);
  CHECK(job->at("spec").at("runPolicy").at("activeDeadlineSeconds") == 900);
  ExportStage one{"convert_back", 1, 0, std::nullopt};
  auto single = k8s_mpijob("c1", one, cpu_type(), options, claims, {"/bin/true"});
  REQUIRE(single);
  CHECK(single->at("metadata").at("name") == "trn-c1-convert-back");
  CHECK_FALSE(single->at("spec").at("mpiReplicaSpecs").contains("Worker"));
  CHECK(single->at("spec").at("runPolicy").at("backoffLimit") == 0);
  auto long_id = k8s_mpijob(std::string(50, 'a'), train, cpu_type(), options, claims, {"/bin/true"});
  REQUIRE_FALSE(long_id);
  CHECK_THAT(long_id.error().what, Catch::Contains("not a DNS-1035 label"));
  options.name_space = "Training";
  REQUIRE_FALSE(k8s_mpijob("c1", one, cpu_type(), options, claims, {"/bin/true"}));
}
