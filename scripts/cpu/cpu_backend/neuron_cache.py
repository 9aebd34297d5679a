"""The Neuron persistent compile cache as the CPU stand-ins keep it, with the location rules and
directory layout of the real one (Neuron docs: "Neuron Persistent Cache" and "PyTorch NeuronX
neuron_parallel_compile CLI"):

  location   --cache_dir=<url> in NEURON_CC_FLAGS, else NEURON_COMPILE_CACHE_URL, else
             /var/tmp/neuron-compile-cache
  entry      <cache>/neuronxcc-<compiler version>/MODULE_<graph hash>+<flags hash>/
               model.hlo_module.pb   the extracted graph (here: the JSON that determines it)
               compile_flags.json    the compiler flags (NEURON_CC_FLAGS less the wrapper's own)
               model.neff            the compiled graph (here: a digest of the graph)
               model.done            written last: the compilation succeeded
               model.log             instead of model.done: the compilation failed
  flags hash the first 8 hex digits of the MD5 of the compiler flags (d41d8cd9 for none)

A "graph" of the stand-in trainers is what would give a distinct XLA graph on Trainium: the
model config, the trainer, TP, PP stage, CP, micro-batch, sequence length, the precision
and memory switches, and the compiler flags; never the step count or paths."""

import hashlib
import json
import os
import shlex
import shutil
import socket
from pathlib import Path

DEFAULT_URL = "/var/tmp/neuron-compile-cache"
COMPILER_VERSION = "0.0.0.0+trnslurmcpu"
# Flags the compiler wrapper takes itself and never passes to the compiler (Neuron docs,
# "Neuron Persistent Cache"): they do not change a graph's key.
WRAPPER_FLAGS = ("--cache_dir", "--retry_failed_compilation", "--no_cache", "--log_level")


class CacheError(RuntimeError):
    pass


def cc_flags(env=os.environ) -> list:
    return shlex.split(env.get("NEURON_CC_FLAGS", ""))


def cache_url(env=os.environ) -> str:
    flags = cc_flags(env)
    url = None
    for i, f in enumerate(flags):
        if f.startswith("--cache_dir="):
            url = f.split("=", 1)[1]
        elif f == "--cache_dir" and i + 1 < len(flags):
            url = flags[i + 1]
    url = url or env.get("NEURON_COMPILE_CACHE_URL") or DEFAULT_URL
    if url.startswith("s3://"):
        raise CacheError(f"compile cache {url}: S3 caches are not supported by the CPU stand-in")
    return url


def compiler_flags(env=os.environ) -> list:
    """NEURON_CC_FLAGS less the wrapper's own flags (and their values)."""
    out, skip = [], False
    for f in cc_flags(env):
        if skip:
            skip = False
            continue
        name = f.split("=", 1)[0]
        if name in WRAPPER_FLAGS:
            skip = "=" not in f and name == "--cache_dir"
            continue
        out.append(f)
    return out


def has_flag(name: str, env=os.environ) -> bool:
    return any(f.split("=", 1)[0] == name for f in cc_flags(env))


def version_dir(env=os.environ) -> Path:
    return Path(cache_url(env)) / f"neuronxcc-{COMPILER_VERSION}"


def entry_dir(graph: dict, env=os.environ) -> Path:
    flags = " ".join(compiler_flags(env))
    text = json.dumps({"graph": graph, "flags": flags}, sort_keys=True)
    module = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
    return version_dir(env) / f"MODULE_{module}+{hashlib.md5(flags.encode()).hexdigest()[:8]}"


def _write(path: Path, data: bytes):
    # Every rank of every node compiles into the one shared cache: a temporary name of its own each.
    tmp = path.with_name(f"{path.name}.tmp.{socket.gethostname()}.{os.getpid()}")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def extract(graph: dict, env=os.environ) -> Path:
    """Graph-extraction mode: the graph and its flags into the cache, nothing compiled."""
    d = entry_dir(graph, env)
    d.mkdir(parents=True, exist_ok=True)
    if not (d / "model.hlo_module.pb").is_file():
        _write(d / "compile_flags.json", json.dumps(compiler_flags(env)).encode())
        _write(d / "model.hlo_module.pb", json.dumps(graph, sort_keys=True, indent=1).encode())
    return d


def compile_entry(d: Path, retry_failed: bool = False) -> str:
    """Compiles one extracted graph: 'done' (already or now), 'failed' (now or before)."""
    if (d / "model.done").is_file():
        return "done"
    if (d / "model.log").is_file() and not retry_failed:
        return "failed"
    try:
        graph = json.loads((d / "model.hlo_module.pb").read_text())
        if not isinstance(graph, dict) or "model" not in graph:
            raise ValueError("not a graph of the CPU stand-in trainers")
        if os.environ.get("TRNSLURM_STANDIN_COMPILE_FAIL") == "1":
            raise ValueError("TRNSLURM_STANDIN_COMPILE_FAIL=1: every compilation fails")
    except (OSError, ValueError) as e:
        _write(d / "model.log", f"compilation failed: {d / 'model.hlo_module.pb'}: {e}\n".encode())
        return "failed"
    (d / "model.log").unlink(missing_ok=True)
    _write(d / "model.neff", hashlib.sha256(json.dumps(graph, sort_keys=True).encode()).digest())
    _write(d / "model.done", b"")
    return "done"


def pending(env=os.environ) -> list:
    """Extracted graphs of this compiler version, in a stable order."""
    root = version_dir(env)
    return sorted(p.parent for p in root.glob("MODULE_*/model.hlo_module.pb")) if root.is_dir() else []


def lookup(graph: dict, env=os.environ) -> tuple:
    """A training run's use of a graph: ('hit' | 'miss' | 'failed' | 'off', entry). A miss
    compiles and fills the entry; a failed entry stays failed unless --retry_failed_compilation."""
    if has_flag("--no_cache", env):
        return "off", None
    d = entry_dir(graph, env)
    if (d / "model.done").is_file() and (d / "model.neff").is_file():
        return "hit", d
    if (d / "model.log").is_file() and not has_flag("--retry_failed_compilation", env):
        return "failed", d
    extract(graph, env)
    state = compile_entry(d, retry_failed=True)
    return ("miss" if state == "done" else "failed"), d


def clean(env=os.environ):
    root = Path(cache_url(env))
    for d in root.glob("neuronxcc-*"):
        shutil.rmtree(d, ignore_errors=True)


def clear_locks(env=os.environ) -> int:
    locks = list(Path(cache_url(env)).rglob("*.lock"))
    for lock in locks:
        lock.unlink()
    return len(locks)
