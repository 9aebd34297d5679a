"""CPU stand-in of the Neuron fork's own package: config registries under the module names the
Neuron documentation gives (torchtitan_neuron.models.qwen3, ...), plus tiny CPU configs."""
