#!/usr/bin/python3
"""Reads a memowm safetensors export with NumPy, writes new ones, prints JSON.

Usage: check_safetensors.py SPEC.json

SPEC is {"read": W.safetensors, "write": [{"path": OUT.safetensors,
"order": "reverse" | "name", "dtype": "F32" | "F16", "metadata": {...} or
null, "pad": true | false}, ...]}.

The header is parsed with json alone (no safetensors package): 8 bytes of
little-endian length, the JSON header, then the buffer. For the file read,
the output holds the header length, the metadata, and per tensor in header
order its name, dtype, shape, data_offsets and the SHA-256 of the bytes of
the array NumPy made of it (little-endian float32, C order).

Each file written holds the tensors read, as NumPy arrays, in another order
("reverse": the header's order reversed; "name": sorted by name), as float32
or converted to float16 by NumPy, with the given metadata (null: no
"__metadata__"), its header padded with spaces to a multiple of 8 or not.
Per tensor the output holds the SHA-256 of the bytes written and, for
float16, of the float32 values NumPy widens them to. The Go test
(safetensors_test.go) compares all of it with what memowm wrote and imports
the files memowm did not write.
"""
import hashlib
import json
import struct
import sys

import numpy as np

DTYPES = {"F32": "<f4", "F16": "<f2", "F64": "<f8"}


def no_duplicates(pairs):
    d = {}
    for k, v in pairs:
        if k in d:
            sys.exit("duplicate key %r in the header" % k)
        d[k] = v
    return d


def read(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n].decode("utf-8"), object_pairs_hook=no_duplicates)
    buf = memoryview(data)[8 + n:]
    meta = header.pop("__metadata__", None)
    tensors = []
    arrays = {}
    for name, e in header.items():
        if e["dtype"] not in DTYPES:
            sys.exit("tensor %r: dtype %r (this script reads %s)" % (name, e["dtype"], ", ".join(DTYPES)))
        begin, end = e["data_offsets"]
        a = np.frombuffer(buf[begin:end], dtype=DTYPES[e["dtype"]]).reshape(e["shape"])
        arrays[name] = a
        tensors.append({
            "name": name,
            "dtype": e["dtype"],
            "shape": list(a.shape),
            "data_offsets": [begin, end],
            "sha256": hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest(),
        })
    return {"header_len": n, "metadata": meta, "tensors": tensors}, arrays


def write(spec, arrays):
    names = list(arrays)
    if spec["order"] == "reverse":
        names.reverse()
    elif spec["order"] == "name":
        names.sort()
    else:
        sys.exit("unknown order %r" % spec["order"])
    dtype = spec["dtype"]
    header = {}
    if spec.get("metadata") is not None:
        header["__metadata__"] = spec["metadata"]
    chunks, tensors, off = [], [], 0
    for name in names:
        a = np.ascontiguousarray(arrays[name].astype(DTYPES[dtype]))
        b = a.tobytes()
        header[name] = {"dtype": dtype, "shape": list(a.shape), "data_offsets": [off, off + len(b)]}
        off += len(b)
        chunks.append(b)
        t = {"name": name, "dtype": dtype, "sha256": hashlib.sha256(b).hexdigest()}
        if dtype != "F32":
            t["sha256_f32"] = hashlib.sha256(a.astype("<f4").tobytes()).hexdigest()
        tensors.append(t)
    js = json.dumps(header, separators=(",", ":")).encode("utf-8")
    if spec.get("pad"):
        js += b" " * (-(8 + len(js)) % 8)
    with open(spec["path"], "wb") as f:
        f.write(struct.pack("<Q", len(js)))
        f.write(js)
        for b in chunks:
            f.write(b)
    return {"path": spec["path"], "header_len": len(js), "tensors": tensors}


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: check_safetensors.py SPEC.json")
    with open(sys.argv[1]) as f:
        spec = json.load(f)
    report, arrays = read(spec["read"])
    out = {"reader": "numpy " + np.__version__, "read": report, "written": [write(w, arrays) for w in spec["write"]]}
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
