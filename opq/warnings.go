package opq

import "fmt"

// MinPointsPerCentroid is the fewest training points per centroid at which
// a codebook's k-means is trusted; below it Warnings says so. faiss warns
// below 39 (its ClusteringParameters.min_points_per_centroid): with fewer,
// centroids fit their sample's noise and reconstruct unseen states worse
// than the training distortion suggests.
const MinPointsPerCentroid = 39

// PointsPerCentroid is the number of training points per centroid that each
// final codebook's k-means ran on: the sampled states (times Slots for shared
// codebooks, which see every slot) over Codewords. It is computed from Info,
// so it is known for a Quantizer read from a file too; 0 when Info records no
// training states.
func (q *Quantizer) PointsPerCentroid() float64 {
	states := q.info.TrainStates
	if states <= 0 {
		return 0
	}
	if cap := q.info.MaxPointsPerCentroid * q.codewords; cap > 0 {
		if q.shared {
			cap = (cap + q.shape.Slots - 1) / q.shape.Slots
		}
		states = min(states, cap)
	}
	points := states
	if q.shared {
		points *= q.shape.Slots
	}
	return float64(points) / float64(q.codewords)
}

// Warnings lists what a caller should tell the user about how q was fit,
// each message starting with "opq: "; nil when nothing is amiss. The
// library never prints them.
//
//   - too few points per centroid: below MinPointsPerCentroid (see
//     PointsPerCentroid), with the number of training states that would
//     reach it;
//   - a rotation from too few vectors: a PCA rotation estimated from fewer
//     slot vectors than Dim, so some of its directions are arbitrary.
func (q *Quantizer) Warnings() []string {
	var w []string
	if ppc := q.PointsPerCentroid(); ppc > 0 && ppc < MinPointsPerCentroid {
		need := MinPointsPerCentroid * q.codewords
		if q.shared {
			need = (need + q.shape.Slots - 1) / q.shape.Slots
		}
		w = append(w, fmt.Sprintf("opq: the codebooks trained on %.1f points per centroid (%d states, %d codewords), fewer than %d: "+
			"expect held-out reconstruction worse than the training distortion; fit on at least %d states or use fewer codewords",
			ppc, q.info.TrainStates, q.codewords, MinPointsPerCentroid, need))
	}
	if q.info.Rotation == PCA && q.info.TrainStates > 0 {
		vectors := min(q.info.TrainStates, max(q.info.RotationStates, 1)) * q.shape.Slots
		if vectors < q.shape.Dim {
			w = append(w, fmt.Sprintf("opq: the PCA rotation was estimated from %d slot vectors for %d channels: %d of its directions are arbitrary",
				vectors, q.shape.Dim, q.shape.Dim-vectors))
		}
	}
	return w
}

// HeldOut returns the reconstruction R^2 on the held-out states that Fit
// measured (Config.HeldOut) and their number; ok is false when there was no
// such measure (a fit without held-out states, or a file from before it).
func (q *Quantizer) HeldOut() (r2 float64, states int, ok bool) {
	if q.info.HeldOutStates == 0 {
		return 0, 0, false
	}
	return q.info.HeldOutR2, q.info.HeldOutStates, true
}
