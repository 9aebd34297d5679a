# Shared by the test_plugin_*.sh tests; source it after lib.sh.

# Nodes whose job just ended are "completing" for a moment: wait for that (15 s at most) before
# checking that none is drained or down. A drained node stays drained, so waiting hides nothing.
settle() {
  local deadline=$((SECONDS + 15))
  while sinfo -h -N -o %t | grep -qE 'comp|mix|alloc' && [ $SECONDS -lt $deadline ]; do sleep 0.2; done
  expect_nodes_idle "$1"
}
