#!/usr/bin/python3
"""Reads memowm .npy exports with NumPy and prints what it read as JSON.

Usage: check_npy.py SPEC.json

SPEC maps a name ("states", "codes") to {"path": X.npy, "index": X.index.npy,
"samples": [flat indices]}. For each, the output holds the array's dtype,
shape and header as NumPy reads them, and per row the SHA-256 of its bytes
and its values at the sample indices (float32 as IEEE 754 bits); for the
index, its dtype, shape and the (episode, step) of every row. The Go test
(interop_test.go) compares all of it with what memowm wrote.
"""
import hashlib
import json
import sys

import numpy as np


def header(path):
    with open(path, "rb") as f:
        version = np.lib.format.read_magic(f)
        if version == (1, 0):
            shape, fortran_order, dtype = np.lib.format.read_array_header_1_0(f)
        elif version == (2, 0):
            shape, fortran_order, dtype = np.lib.format.read_array_header_2_0(f)
        else:
            sys.exit("%s: .npy format version %d.%d" % (path, version[0], version[1]))
    return {"version": list(version), "fortran_order": fortran_order, "descr": dtype.str, "shape": list(shape)}


def observations(path, samples):
    a = np.load(path, allow_pickle=False)
    flat = a.reshape(a.shape[0], -1)
    # Floats are reported as their bits, so -0.0 and subnormals compare exactly.
    values = flat.view(np.uint32) if flat.dtype == np.float32 else flat
    little = flat.dtype.newbyteorder("<")  # the bytes Go hashed: little-endian
    rows = []
    for i in range(flat.shape[0]):
        rows.append({
            "obs_len": int(flat.shape[1]),
            "obs_sha256": hashlib.sha256(np.ascontiguousarray(flat[i], dtype=little).tobytes()).hexdigest(),
            "obs_sample": [int(values[i, j]) for j in samples],
        })
    return {"header": header(path), "dtype": a.dtype.str, "shape": list(a.shape), "rows": rows}


def index(path):
    a = np.load(path, allow_pickle=False)
    return {
        "header": header(path),
        "dtype": a.dtype.str,
        "shape": list(a.shape),
        "rows": [{"episode": str(int(e)), "step": int(s)} for e, s in a],
    }


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: check_npy.py SPEC.json")
    with open(sys.argv[1]) as f:
        spec = json.load(f)
    out = {"reader": "numpy " + np.__version__}
    for name, s in spec.items():
        out[name] = {"observations": observations(s["path"], s["samples"]), "index": index(s["index"])}
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
