"""torchrun, as Debian's python3-torch 1.13 runs it on Python 3.11, crashes before starting any
worker: on 3.11 iterating an IntFlag skips its zero member, so Std.from_str("0") returns None
(the default --redirects/--tee). Importing this module maps None back to Std.NONE; main() then
runs torchrun unchanged with the same arguments.

With c10d rendezvous the agents tell their workers the master by the host name of rank 0's agent.
The dev cluster's nodes are this one machine, each with a host name of its own (scripts/dev-cluster:
a UTS namespace per node) that does not resolve: such a name is replaced by the loopback address,
which reaches every node of that cluster. A name that resolves is kept."""

import socket
import sys

from torch.distributed.elastic.agent.server import api as agent_api
from torch.distributed.elastic.multiprocessing import api

_from_str = api.Std.from_str


def _fixed(cls, vm):
    value = _from_str(vm)
    if value is None:
        return cls.NONE
    if isinstance(value, dict):
        return {k: cls.NONE if v is None else v for k, v in value.items()}
    return value


api.Std.from_str = classmethod(_fixed)


def _reachable_hostname():
    name = socket.getfqdn(socket.gethostname())
    try:
        socket.getaddrinfo(name, None)
        return name
    except socket.gaierror:
        return "127.0.0.1"


agent_api._get_fq_hostname = _reachable_hostname


def main():
    from torch.distributed.run import main as torchrun_main

    sys.argv[0] = "torchrun"
    torchrun_main()


if __name__ == "__main__":
    main()
