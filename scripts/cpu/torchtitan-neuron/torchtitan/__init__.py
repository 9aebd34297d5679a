"""CPU stand-in of TorchTitan as the Neuron fork ships it (aws-neuron/torchtitan-neuron 0.2.2+neuron.1,
Neuron 2.33): the same entry point (`python -m torchtitan.train --module M --config F
[--section.field VALUE ...]`), command line (read from trnslurm's record
interfaces/torchtitan-neuron-2.33.json, the single copy), checkpoint layout, step line and HF
conversion, written for trnslurm's tests (scripts/cpu/README.md). Not upstream code."""
