#include <catch2/catch.hpp>

#include "trnslurm/util/error.hpp"

using namespace trnslurm;

TEST_CASE("error: a kind given when the error is made stays, an unclassified one takes the caller's") {
  const Error plain = fail("no such file", "r.toml").error();
  CHECK(plain.kind == ErrorKind::unclassified);
  CHECK(classified(plain, ErrorKind::input).kind == ErrorKind::input);
  const Error slurm =
      fail(ErrorKind::slurm, "Unable to contact slurm controller", "squeue", "is it up?").error();
  CHECK(slurm.kind == ErrorKind::slurm);
  CHECK(slurm.where == "squeue");
  CHECK(slurm.hint == "is it up?");
  CHECK(classified(slurm, ErrorKind::input).kind == ErrorKind::slurm);
  CHECK(to_string(slurm) == "squeue: Unable to contact slurm controller (is it up?)");
}
