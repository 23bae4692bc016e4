package opq

import (
	"crypto/sha256"
	"encoding/hex"
)

// Digest names q: the SHA-256 of its file bytes (WriteTo), in hex. The bytes
// depend only on q, so a quantizer saved and loaded keeps its digest. Codes
// files record it (trajectory.Meta.Quantizer), so codes are never read
// through another quantizer's codebooks.
func (q *Quantizer) Digest() string {
	h := sha256.New()
	if _, err := q.WriteTo(h); err != nil {
		// A hash.Hash never fails to write; WriteTo fails only on its writer.
		panic("opq: digest: " + err.Error())
	}
	return hex.EncodeToString(h.Sum(nil))
}
