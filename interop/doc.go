// Package interop checks that memowm's trajectory files are read correctly by
// readers that memowm did not write: NumPy (Debian's python3-numpy under
// /usr/bin/python3) for the .npy export, DuckDB (@duckdb/node-api) for
// Parquet, and Apache Arrow JS (apache-arrow) for Arrow IPC.
//
// The package holds only tests and the reader scripts they run:
// check_npy.py, check_duckdb.mjs and check_arrow.mjs, with the npm versions
// pinned in package.json and package-lock.json. A test writes a small
// deterministic trajectory (episodes of the sim world, their OPQ codes, and a
// hand-made episode with edge values: an episode id above 2^53, a negative
// zero, a subnormal, non-UTF-8 and empty payloads, null facts), runs a script
// on the files, and compares every value the script reports with what Go
// wrote: each observation's SHA-256 over its exact bytes, sampled values bit
// for bit, every action field, facts, column types and schema metadata.
//
// check_safetensors.py does the same for world-model weights: NumPy reads a
// safetensors export byte for byte, and the files it writes import and
// predict the same bits (safetensors_test.go).
//
// When python3-numpy, node or interop/node_modules are missing the tests skip
// and say why, unless MEMOWM_INTEROP=1 is set: then a missing tool is a
// failure. .ci/run installs the tools (apt-get install python3-numpy, npm ci
// in interop/) and sets MEMOWM_INTEROP=1.
package interop
