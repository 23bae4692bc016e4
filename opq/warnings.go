package opq

import "fmt"

// ReliableStates is the fewest training states from which Fit's held-out
// reconstruction can be relied on; below it Warnings says so. It is
// measured (docs/quantizer.md, "How many training states"): with the
// default configuration, held-out R^2 on the sim world rose from 0.754
// (100 training states) to 0.894 (400), 0.941 (800), 0.954 (1,600), 0.963
// (6,400) and 0.966 (20,000): from 1,600 states on it is within 0.015 of
// what 20,000 give, from 800 within 0.03. On recorded NetHack and vim
// sessions of 64 to 200 states it was below zero.
// Fewer codewords (more points per centroid) did not fix it: held-out R^2
// is limited by the screens the training states cover. On the sim world
// they were worse (16 codewords: 0.746 from 100 states, 0.863 from 400; 4:
// 0.537, 0.599); on NetHack and vim they left it below zero (-3.2 at best).
const ReliableStates = 1600

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
//   - too few training states: fewer than ReliableStates, with the
//     measured held-out R^2 that such fits reach;
//   - a rotation from too few vectors: a PCA rotation estimated from fewer
//     slot vectors than Dim, so some of its directions are arbitrary.
func (q *Quantizer) Warnings() []string {
	var w []string
	if n := q.info.TrainStates; n > 0 && n < ReliableStates {
		w = append(w, fmt.Sprintf("opq: fit on %d training states, fewer than %d: expect held-out reconstruction far worse than on the training states "+
			"(measured with the default configuration: held-out R^2 0.75 from 100 sim states, 0.89 from 400, 0.95 from %d; below 0 from 64 to 200 recorded NetHack states). "+
			"Fit on at least %d states; fewer codewords do not fix this (16 codewords: 0.75 from 100 sim states, 0.86 from 400; NetHack still below 0)",
			n, ReliableStates, ReliableStates, ReliableStates))
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
