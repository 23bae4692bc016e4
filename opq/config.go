package opq

import (
	"fmt"
	"strconv"

	"github.com/memowm/memowm/trajectory"
)

// Rotation is how Fit chooses the shared rotation R.
type Rotation uint8

const (
	// NoRotation keeps R = I: subspace m of a slot is channels 16m..16m+15
	// of the standardised state.
	NoRotation Rotation = iota + 1
	// PCA rotates onto the principal directions of the standardised slot
	// vectors, assigned to subspaces so that their variance is balanced.
	// Config.Rounds OPQ rounds then refine it.
	PCA
)

func (r Rotation) String() string {
	switch r {
	case NoRotation:
		return "none"
	case PCA:
		return "pca"
	}
	return fmt.Sprintf("rotation(%d)", uint8(r))
}

// MarshalJSON writes a rotation by name ("pca"), as inspect prints it.
func (r Rotation) MarshalJSON() ([]byte, error) { return []byte(strconv.Quote(r.String())), nil }

// ParseRotation is the inverse of Rotation.String.
func ParseRotation(s string) (Rotation, error) {
	switch s {
	case "none":
		return NoRotation, nil
	case "pca":
		return PCA, nil
	}
	return 0, fmt.Errorf("opq: unknown rotation %q (want none or pca)", s)
}

// Progress reports Fit's work: Stage names the step, Done of Total units are
// finished, and Distortion, when positive, is the mean squared error per
// value of the standardised training sample after the step.
type Progress struct {
	Stage       string
	Done, Total int
	Distortion  float64
}

// Config sets how Fit learns a Quantizer. Start from DefaultConfig.
type Config struct {
	// Shape is the geometry: Codes must be a multiple of Slots, and Dim a
	// multiple of Codes/Slots (the subspaces per slot). Default 32x512, 1,024.
	Shape trajectory.Shape
	// Codewords per codebook, 2..256 (codes are bytes). Default 64.
	Codewords int
	// Shared uses one codebook per subspace for all slots instead of one per
	// (slot, subspace). Default false (1,024 codebooks).
	Shared bool
	// Rotation is the starting rotation. Default PCA.
	Rotation Rotation
	// Rounds of OPQ refinement after PCA (ignored for NoRotation). Each round
	// runs k-means on the rotation sample and one Procrustes step. Default 0.
	Rounds int
	// Iterations of Lloyd's algorithm for the final codebooks (it stops early
	// when no assignment changes). Default 25.
	Iterations int
	// RoundIterations of Lloyd's algorithm inside each OPQ round, warm-started
	// from the previous round's codebooks. Default 4.
	RoundIterations int
	// MaxPointsPerCentroid caps the training points of one codebook at
	// MaxPointsPerCentroid*Codewords, drawn by a seeded subsample. Default
	// 256 (16,384 points for 64 codewords), the cap that faiss uses: beyond
	// it k-means centroids move by far less than their quantisation error,
	// while time grows linearly.
	MaxPointsPerCentroid int
	// RotationStates caps the states (a seeded subsample) from which the PCA
	// covariance and the OPQ rounds are computed. Default 2,048 (65,536 slot
	// vectors, 128 per dimension of a 512-wide slot).
	RotationStates int
	// StdFloor is the floor of every standard deviation, relative to the
	// root mean square of all of them. Default 1e-3.
	StdFloor float64
	// Seed seeds every random choice. Default 0.
	Seed uint64
	// Workers is the number of goroutines (0: GOMAXPROCS). The result does
	// not depend on it.
	Workers int
	// Progress, when not nil, is called as Fit works, from one goroutine.
	Progress func(Progress)
	// HeldOut, when not empty, are states Fit does not train on: after the
	// fit it measures the reconstruction on them and records their count and
	// R^2 in Info (and so in the file). Default none.
	HeldOut [][]float32
}

// DefaultConfig is the paper's setting: 32x512 states, 64 codewords per
// (slot, subspace) codebook, PCA rotation, 25 Lloyd iterations, seed 0.
func DefaultConfig() Config {
	return Config{
		Shape:                trajectory.DefaultShape,
		Codewords:            64,
		Rotation:             PCA,
		Iterations:           25,
		RoundIterations:      4,
		MaxPointsPerCentroid: 256,
		RotationStates:       2048,
		StdFloor:             1e-3,
	}
}

// Validate reports the first setting that is out of range.
func (c Config) Validate() error {
	if err := c.Shape.Validate(); err != nil {
		return fmt.Errorf("opq: %w", err)
	}
	s := c.Shape
	switch {
	case s.Codes%s.Slots != 0:
		return fmt.Errorf("opq: %d codes do not split evenly over %d slots", s.Codes, s.Slots)
	case s.Dim%(s.Codes/s.Slots) != 0:
		return fmt.Errorf("opq: %d channels per slot do not split into %d subspaces", s.Dim, s.Codes/s.Slots)
	case c.Codewords < 2 || c.Codewords > 256:
		return fmt.Errorf("opq: codewords %d must be in 2..256", c.Codewords)
	case c.Rotation != NoRotation && c.Rotation != PCA:
		return fmt.Errorf("opq: unknown rotation %d", c.Rotation)
	case c.Rounds < 0 || c.Rounds > 1000:
		return fmt.Errorf("opq: rounds %d must be in 0..1000", c.Rounds)
	case c.Iterations < 1 || c.Iterations > 10000:
		return fmt.Errorf("opq: iterations %d must be in 1..10000", c.Iterations)
	case c.RoundIterations < 1 || c.RoundIterations > 10000:
		return fmt.Errorf("opq: round iterations %d must be in 1..10000", c.RoundIterations)
	case c.MaxPointsPerCentroid < 1:
		return fmt.Errorf("opq: max points per centroid %d must be at least 1", c.MaxPointsPerCentroid)
	case c.RotationStates < 1:
		return fmt.Errorf("opq: rotation states %d must be at least 1", c.RotationStates)
	case !(c.StdFloor > 0 && c.StdFloor < 1):
		return fmt.Errorf("opq: std floor %g must be in (0, 1)", c.StdFloor)
	case c.Workers < 0:
		return fmt.Errorf("opq: workers %d must not be negative", c.Workers)
	}
	return nil
}
