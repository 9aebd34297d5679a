#include <catch2/catch.hpp>

#include "trnslurm/util/scontrol_record.hpp"

using trnslurm::scontrol_field;

TEST_CASE("scontrol_field: a key's value in one `scontrol show -o` record") {
  const std::string_view job = "JobId=12 JobName=trn-x ExcNodeList=n[1-2] NodeList=n3 Reason=None\n";
  CHECK(scontrol_field(job, "JobId") == "12");
  CHECK(scontrol_field(job, "ExcNodeList") == "n[1-2]");
  CHECK(scontrol_field(job, "Reason") == "None");
  // A key inside another's name is not that key.
  CHECK(scontrol_field(job, "Name") == "");
  CHECK(scontrol_field(job, "List") == "");
  CHECK(scontrol_field(job, "Missing") == "");
  // A value with spaces gives its first word.
  CHECK(scontrol_field("NodeName=n1 State=IDLE+DRAIN Reason=trnslurm: errors", "Reason") == "trnslurm:");
  CHECK(scontrol_field("State=", "State") == "");
}
