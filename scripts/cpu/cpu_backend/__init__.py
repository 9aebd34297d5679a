"""The CPU reference backend's shared code (README.md, "The upstream stand-ins"): what the
stand-ins of neuronx-distributed's scripts, the Neuron venv's tools, TorchTitan's torchrun and the
collective checks have in common. The scripts beside this package import it as a package; the
stand-in venvs' python3 (neuron-venv/bin, torchtitan-venv/bin) put its directory on PYTHONPATH, as
a real venv's site-packages holds what its scripts import."""
