// Package model is the model bundle: the one file that a memory-file writer
// and its decoder share.
//
// # Overview
//
// A Bundle holds the OPQ quantizer, the world model (configuration and
// weights), the inference profile and table precision, the retention
// policy, and the reader that calibrated it. Its identity is the SHA-256 of its file bytes (Hash): a memory file
// records it, and a decoder refuses a memory file written with another
// bundle.
//
// # Identity and reproducibility
//
// The hash covers every byte of the file, from the magic to the CRC-32C
// trailer: the header (profile, precision, policy, preset, the training
// record's steps, target, stop, prior steps, initialisation and peak
// learning rate), the quantizer, the weights and the reader. Nothing in them
// depends on when, where or on how many threads the bundle was made: the
// header is a Go struct in its canonical JSON encoding (no maps, fixed field
// order), and the parts are written from the model alone. So the same run
// (the same inputs, flags and seed) gives the same bundle, byte for byte, on
// any GOMAXPROCS (fitting, training and the parts' writers do not depend on
// it; see package opq and worldmodel), and the same hash; 'memowm fit
// --stage wm' twice into two files gives two identical files.
//
// What a run records that is not the model, its wall-clock training time
// and the host, lives outside the bundle, in a sidecar JSON file
// (ProvenancePath: BUNDLE.provenance.json) that names the bundle's hash.
// Save writes it when Training has a time or a host; Load reads it back into
// Training.Seconds, PriorSeconds and Host when it names the bundle's hash,
// and ignores it otherwise (missing, damaged, or left by a bundle written
// over it); Read, from a stream, never sees it. Bundles written before the
// sidecar hold "seconds" and "prior_seconds" in their header's training
// record; they read with their time and write back to the same bytes.
//
// # The file
//
//	magic     [8]byte "\x89MWB\r\n\x1a\n"
//	version   uint32 (1)
//	header    uint32 length + JSON (see fileHeader): profile, precision,
//	          policy, preset, training (absent in older bundles; without
//	          its time, which is in the provenance sidecar)
//	opq       uint64 length + an opq file (opq.WriteTo)
//	weights   uint64 length + a worldmodel weights file (Model.WriteTo)
//	reader    uint64 length + a reader probe file (0: no reader yet)
//	int8      version 2 only: uint64 length + the int8 network
//	          (worldmodel.Int8Model.WriteTo)
//	crc       uint32, CRC-32C of every byte before it
//
// A bundle in the f32 profile is version 1, byte for byte as before the
// int8 profile; one in the int8 profile (Profile "int8", made by 'memowm
// model int8') is version 2: the f32 weights it was made from stay in the
// weights part (its input embedding runs from them), and the integer
// network follows the reader. Predictor returns the backend of the
// bundle's profile.
//
// # Invariants
//
//   - The OPQ geometry and the world model agree: the quantizer's slots,
//     subspaces and codewords are the model's.
//   - Read verifies the checksum, the version and every part; damaged or
//     foreign data is an error wrapping ErrFormat, never a panic. The
//     CRC-32C trailer covers the whole file (and each part has its own), so
//     every single-bit flip and every truncation is an error: no damaged
//     bundle is accepted as another one (TestBundleCampaign counts them).
//   - Bounded allocation: the header is at most 1 MiB and a part at most
//     4 GiB; every length is checked against what the file can still hold
//     (when the reader knows it: a bytes.Reader, the file's size for Load)
//     before anything is allocated, and the parts grow their arrays as data
//     arrives, so a flipped bit cannot ask for a huge allocation.
//   - A bundle that reads writes back to the same bytes: its JSON header
//     must be in the canonical encoding, so a bundle's hash is its content.
//   - The bytes, and so the hash, are a function of the model alone: no
//     time, host or thread count is in them (see above).
//   - A half-trained model is never taken for a trained one: Training
//     records the steps done, the run's target and whether it was
//     interrupted; CheckTrained says whether the run finished. Bundles
//     written before it carry no record (ErrTrainingUnknown) and keep their
//     bytes and hash.
//   - Save writes a temporary file, syncs it and renames it (the bundle,
//     then its provenance sidecar).
//   - The retention policy decides from integers alone (a coordinate index
//     and a Q16 entropy), so writer and decoder make the same decisions.
package model
