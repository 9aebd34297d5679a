"""torchrun, as Debian's python3-torch 1.13 runs it on Python 3.11, crashes before starting any
worker: on 3.11 iterating an IntFlag skips its zero member, so Std.from_str("0") returns None
(the default --redirects/--tee). Importing this module maps None back to Std.NONE; main() then
runs torchrun unchanged with the same arguments."""

import sys

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


def main():
    from torch.distributed.run import main as torchrun_main

    sys.argv[0] = "torchrun"
    torchrun_main()
