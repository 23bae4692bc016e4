package opq

import (
	"math/rand/v2"
)

// kmeans is the scratch and result of clustering one codebook's points.
// Reuse one per worker: run resizes its buffers as needed.
type kmeans struct {
	cent   []float32 // (k, sd): the centroids
	labels []uint8   // (n): index of each point's centroid
	mse    float64   // mean squared error per value with the final centroids

	centT  []float32 // (sd, k)
	norms  []float32 // (k)
	dots   []float32 // (assignRows, k)
	dist   []float64 // (n) for seeding and repair
	sums   []float64 // (k, sd)
	counts []int     // (k)
	prev   []uint8   // (n)
}

// run clusters the n points of pts (n x sd, contiguous) into k centroids: from
// init (k x sd) when it is not nil, else from k-means++ seeding drawn from
// rng; then at most iters Lloyd iterations (assign every point to its nearest
// centroid, then move each centroid to the mean of its points), stopping
// early when no assignment changes. A cluster left empty takes the point
// farthest from its centroid among clusters of two or more points (the lowest
// point index on ties), clusters in index order. Finally every point is
// assigned to the final centroids (labels) and the error is measured (mse).
// Needs n >= k >= 2.
func (km *kmeans) run(pts []float32, n, sd, k, iters int, init []float32, rng *rand.Rand) {
	km.cent = grow(km.cent, k*sd)
	km.labels = grow(km.labels, n)
	km.prev = grow(km.prev, n)
	km.centT = grow(km.centT, k*sd)
	km.norms = grow(km.norms, k)
	km.dots = grow(km.dots, assignRows*k)
	km.dist = grow(km.dist, n)
	km.sums = grow(km.sums, k*sd)
	km.counts = grow(km.counts, k)

	if init != nil {
		copy(km.cent, init[:k*sd])
	} else {
		km.seed(pts, n, sd, k, rng)
	}
	for it := 0; it < iters; it++ {
		copy(km.prev, km.labels)
		km.assign(pts, n, sd, k)
		if it > 0 && equalU8(km.prev, km.labels) {
			break
		}
		km.update(pts, n, sd, k)
	}
	km.assign(pts, n, sd, k)
	var sse float64
	for i := 0; i < n; i++ {
		sse += sqDist(pts[i*sd:(i+1)*sd], km.cent[int(km.labels[i])*sd:])
	}
	km.mse = sse / float64(n*sd)
}

// seed is k-means++: the first centroid is a uniform draw, each next one a
// draw with probability proportional to the squared distance to the nearest
// centroid so far (uniform when every point is already a centroid).
func (km *kmeans) seed(pts []float32, n, sd, k int, rng *rand.Rand) {
	first := rng.IntN(n)
	copy(km.cent[:sd], pts[first*sd:(first+1)*sd])
	d := km.dist[:n]
	for i := range d {
		d[i] = sqDist(pts[i*sd:(i+1)*sd], km.cent[:sd])
	}
	for c := 1; c < k; c++ {
		var total float64
		for _, v := range d {
			total += v
		}
		pick := n - 1
		if total > 0 {
			r := rng.Float64() * total
			var acc float64
			for i, v := range d {
				acc += v
				if acc > r {
					pick = i
					break
				}
			}
		} else {
			pick = rng.IntN(n)
		}
		cent := km.cent[c*sd : (c+1)*sd]
		copy(cent, pts[pick*sd:(pick+1)*sd])
		for i := range d {
			if v := sqDist(pts[i*sd:(i+1)*sd], cent); v < d[i] {
				d[i] = v
			}
		}
	}
}

// assign sets labels to the nearest centroid of every point.
func (km *kmeans) assign(pts []float32, n, sd, k int) {
	transposeBook(km.centT, km.cent, k, sd)
	centroidNorms(km.norms, km.cent, k, sd)
	for lo := 0; lo < n; lo += assignRows {
		m := min(assignRows, n-lo)
		nearest(km.labels[lo:], 1, nil, pts[lo*sd:], sd, m, sd, km.centT[:k*sd], km.norms[:k], km.dots)
	}
}

// update moves every centroid to the mean of its points, repairing empty
// clusters first.
func (km *kmeans) update(pts []float32, n, sd, k int) {
	sums, counts := km.sums[:k*sd], km.counts[:k]
	clear(sums)
	clear(counts)
	for i := 0; i < n; i++ {
		c := int(km.labels[i])
		counts[c]++
		s := sums[c*sd : (c+1)*sd]
		for l, v := range pts[i*sd : (i+1)*sd] {
			s[l] += float64(v)
		}
	}
	distKnown := false
	for c := 0; c < k; c++ {
		if counts[c] > 0 {
			continue
		}
		if !distKnown {
			for i := 0; i < n; i++ {
				km.dist[i] = sqDist(pts[i*sd:(i+1)*sd], km.cent[int(km.labels[i])*sd:])
			}
			distKnown = true
		}
		far := -1
		for i := 0; i < n; i++ {
			if counts[km.labels[i]] > 1 && (far < 0 || km.dist[i] > km.dist[far]) {
				far = i
			}
		}
		if far < 0 {
			break // unreachable while n >= k
		}
		old := int(km.labels[far])
		counts[old]--
		counts[c] = 1
		p := pts[far*sd : (far+1)*sd]
		for l, v := range p {
			sums[old*sd+l] -= float64(v)
			sums[c*sd+l] = float64(v)
		}
		km.labels[far] = uint8(c)
		km.dist[far] = -1
	}
	for c := 0; c < k; c++ {
		inv := 1 / float64(counts[c])
		for l := 0; l < sd; l++ {
			km.cent[c*sd+l] = float32(sums[c*sd+l] * inv)
		}
	}
}

// sqDist is |a - b|^2 over len(a) values, summed in index order in float64.
func sqDist(a, b []float32) float64 {
	b = b[:len(a)]
	var s float64
	for i, v := range a {
		d := float64(v) - float64(b[i])
		s += float64(d * d)
	}
	return s
}

func equalU8(a, b []uint8) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// grow returns s resized to n, reallocated only when its capacity is short.
// The contents are not kept.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}
