"""The safetensors files of Attention Lab's Python scripts: the training scripts (kjv_gpt2,
kjv_llama, fashion_vit), the head analyses and the test fixtures (tests/data/models).

write_safetensors(path, tensors, source) writes (name, dtype name, numpy array already in that
dtype, little-endian) triples in order: the 8-byte little-endian header length, the JSON header
(every tensor's dtype, shape and data_offsets, then __metadata__ with format "pt" and the source
script) padded with spaces to a multiple of 8, then the raw data.

read_safetensors(path) reads one file back: name -> float64 numpy array (F32, F16 or BF16;
tensors of other dtypes, such as the BOOL masks of old GPT-2 checkpoints, are left out).
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


def read_safetensors(path):
    with open(path, "rb") as f:
        size = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(size))
        data = f.read()
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        begin, end = entry["data_offsets"]
        raw = data[begin:end]
        if entry["dtype"] == "F32":
            values = np.frombuffer(raw, dtype="<f4").astype(np.float64)
        elif entry["dtype"] == "F16":
            values = np.frombuffer(raw, dtype="<f2").astype(np.float64)
        elif entry["dtype"] == "BF16":
            bits = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
            values = bits.view(np.float32).astype(np.float64)
        else:
            continue
        tensors[name] = values.reshape(entry["shape"])
    return tensors
