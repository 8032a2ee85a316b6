"""The safetensors writer of the training scripts (kjv_gpt2/train.py, fashion_vit/train.py).

write_safetensors(path, tensors, source) writes (name, float32 array) pairs in order as F32: the
8-byte little-endian header length, the JSON header (every tensor's dtype, shape and
data_offsets, then __metadata__ with format "pt" and the source script) padded with spaces to a
multiple of 8, then the raw little-endian data.
"""

import json
import struct

import numpy as np


def write_safetensors(path, tensors, source):
    header, data = {}, bytearray()
    for name, array in tensors:
        raw = np.ascontiguousarray(array, dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(array.shape),
                        "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    header["__metadata__"] = {"format": "pt", "source": source}
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        f.write(data)
