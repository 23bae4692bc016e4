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
// # The file
//
//	magic     [8]byte "\x89MWB\r\n\x1a\n"
//	version   uint32 (1)
//	header    uint32 length + JSON (see fileHeader): profile, precision,
//	          policy, preset, training (absent in older bundles)
//	opq       uint64 length + an opq file (opq.WriteTo)
//	weights   uint64 length + a worldmodel weights file (Model.WriteTo)
//	reader    uint64 length + a reader probe file (0: no reader yet)
//	crc       uint32, CRC-32C of every byte before it
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
//   - A half-trained model is never taken for a trained one: Training
//     records the steps done, the run's target and whether it was
//     interrupted; CheckTrained says whether the run finished. Bundles
//     written before it carry no record (ErrTrainingUnknown) and keep their
//     bytes and hash.
//   - Save writes a temporary file, syncs it and renames it.
//   - The retention policy decides from integers alone (a coordinate index
//     and a Q16 entropy), so writer and decoder make the same decisions.
package model
