"""The safetensors writer of Attention Lab's Python scripts: the training scripts
(kjv_gpt2/train.py, fashion_vit/train.py) and the test fixtures (tests/data/models).

write_safetensors(path, tensors, source) writes (name, dtype name, numpy array already in that
dtype, little-endian) triples in order: the 8-byte little-endian header length, the JSON header
(every tensor's dtype, shape and data_offsets, then __metadata__ with format "pt" and the source
script) padded with spaces to a multiple of 8, then the raw data.
"""

import json
import struct

import numpy as np


def write_safetensors(path, tensors, source):
    header, data = {}, bytearray()
    for name, dtype, array in tensors:
        raw = np.ascontiguousarray(array).tobytes()
        header[name] = {"dtype": dtype, "shape": list(array.shape),
                        "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    header["__metadata__"] = {"format": "pt", "source": source}
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        f.write(data)
