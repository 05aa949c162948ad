"""Stands in front of Intel's `ocloc` while XPU kernels compile (copied as `ocloc` onto PATH).

It records every invocation, so the device and options the compiler asks for can be judged, then
runs the real ocloc when that one can build native code on this machine. Where none can (a CPU
machine, or a distribution ocloc too old for `-o`), it leaves the SPIR-V in place of the native
binary and the adapter reports the binary itself as not checkable here. Standard library only.
"""

import json
import os
import shutil
import sys


def main(args: list[str]) -> int:
    with open(os.environ["KREGRESS_OCLOC_LOG"], "a") as log:
        log.write(json.dumps(args) + "\n")
    real = os.environ.get("KREGRESS_OCLOC_REAL")
    if real:
        os.execv(real, [real, *args])
    if args[:1] == ["compile"] and "-file" in args and "-o" in args:
        shutil.copyfile(args[args.index("-file") + 1], args[args.index("-o") + 1])
        return 0
    print("kregress ocloc front: no ocloc here can run this; invocation recorded", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
