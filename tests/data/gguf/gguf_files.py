"""GGUF files in Python, for make_gguf_fixtures.py: a writer of metadata and tensors (F32, F16,
BF16, or blocks already made), and a reader of the metadata and of F32 tensors, both written from
ggml's docs/gguf.md (version 3, little-endian):

  "GGUF", version (uint32), tensor count (uint64), metadata count (uint64);
  each metadata entry: key (uint64 length + UTF-8), value type (uint32), value;
  each tensor info: name (string), n_dims (uint32), dims (uint64 each, fastest first), ggml type
  (uint32), offset (uint64) of its data from the start of the tensor data, a multiple of the
  alignment (general.alignment, 32 by default);
  zero padding to the alignment, then the tensor data, each tensor's data aligned.
"""

import struct

import numpy as np

ALIGNMENT = 32

# gguf_metadata_value_type
UINT8, INT8, UINT16, INT16, UINT32, INT32, FLOAT32, BOOL, STRING, ARRAY, UINT64, INT64, \
    FLOAT64 = range(13)
SCALARS = {UINT8: "<B", INT8: "<b", UINT16: "<H", INT16: "<h", UINT32: "<I", INT32: "<i",
           FLOAT32: "<f", BOOL: "<?", UINT64: "<Q", INT64: "<q", FLOAT64: "<d"}

# ggml_type
F32, F16, BF16 = 0, 1, 30


def _string(text):
    data = text.encode("utf-8") if isinstance(text, str) else bytes(text)
    return struct.pack("<Q", len(data)) + data


def _value(kind, value):
    if kind == STRING:
        return _string(value)
    if kind == ARRAY:
        element, items = value
        out = struct.pack("<IQ", element, len(items))
        if element == STRING:
            return out + b"".join(_string(item) for item in items)
        return out + b"".join(struct.pack(SCALARS[element], item) for item in items)
    return struct.pack(SCALARS[kind], value)


def to_bf16(array):
    """float -> bfloat16 bits (uint16), rounded to nearest even (as ggml_compute_fp32_to_bf16)."""
    bits = np.asarray(array, dtype=np.float32).view(np.uint32).astype(np.uint64)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


def from_bf16(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def stored(array, ggml_type):
    """(raw little-endian bytes, the float64 values as stored) of a float array in F32/F16/BF16."""
    if ggml_type == F32:
        values = np.asarray(array, dtype="<f4")
        return values.tobytes(), values.astype(np.float64)
    if ggml_type == F16:
        values = np.asarray(array, dtype="<f2")
        return values.tobytes(), values.astype(np.float64)
    bits = to_bf16(array)
    return bits.astype("<u2").tobytes(), from_bf16(bits).astype(np.float64)


def write_gguf(path, metadata, tensors):
    """metadata: (key, type, value) triples (arrays: (ARRAY, (element type, items)));
    tensors: (name, ggml type, PyTorch shape, raw bytes) in file order. Dimensions are written
    fastest first, the PyTorch shape reversed."""
    header = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(metadata))
    for key, kind, value in metadata:
        header += _string(key) + struct.pack("<I", kind) + _value(kind, value)
    data = b""
    for name, ggml_type, shape, raw in tensors:
        data += b"\0" * (-len(data) % ALIGNMENT)
        header += _string(name) + struct.pack("<I", len(shape))
        header += b"".join(struct.pack("<Q", dim) for dim in reversed(shape))
        header += struct.pack("<IQ", ggml_type, len(data))
        data += raw
    header += b"\0" * (-len(header) % ALIGNMENT)
    with open(path, "wb") as f:
        f.write(header + data)


def read_gguf(path):
    """(metadata {key: value}, tensors {name: float64 array in PyTorch shape}) of a file whose
    tensors are all F32 (the dequantized files ggml writes)."""
    data = open(path, "rb").read()
    assert data[:4] == b"GGUF"
    _, tensor_count, kv_count = struct.unpack_from("<IQQ", data, 4)
    position = 24

    def read(fmt):
        nonlocal position
        values = struct.unpack_from(fmt, data, position)
        position += struct.calcsize(fmt)
        return values[0]

    def string():
        nonlocal position
        length = read("<Q")
        text = data[position:position + length].decode("utf-8")
        position += length
        return text

    def value(kind):
        if kind == STRING:
            return string()
        if kind == ARRAY:
            element, count = read("<I"), read("<Q")
            return [value(element) for _ in range(count)]
        return read(SCALARS[kind])

    metadata = {}
    for _ in range(kv_count):
        key = string()
        metadata[key] = value(read("<I"))
    infos = []
    for _ in range(tensor_count):
        name = string()
        dims = [read("<Q") for _ in range(read("<I"))]
        ggml_type, offset = read("<I"), read("<Q")
        assert ggml_type == F32, f"{name} is of type {ggml_type}, not F32"
        infos.append((name, dims, offset))
    alignment = metadata.get("general.alignment", ALIGNMENT)
    start = position + (-position % alignment)
    tensors = {}
    for name, dims, offset in infos:
        count = int(np.prod(dims))
        values = np.frombuffer(data, dtype="<f4", count=count, offset=start + offset)
        tensors[name] = values.astype(np.float64).reshape(list(reversed(dims)))
    return metadata, tensors
