package reader

import (
	"fmt"
	"math"
	"runtime"
	"strconv"
	"sync"

	"github.com/memowm/memowm/screen"
	"github.com/memowm/memowm/trajectory"
)

// TextArch is the text reader's architecture, stored in its file: the cell
// layout of the screens it reads (screen.NewCellLayout of their size) and
// the size of its hashed weight table.
type TextArch struct {
	Layout     screen.CellLayout
	WeightBits int // the table has 1<<WeightBits weights
}

// Limits on a TextArch.
const (
	minWeightBits = 8
	maxWeightBits = 24
	// maxOccurrences caps the places a choice is looked for, in reading
	// order.
	maxOccurrences = 32
)

func (a TextArch) validate() error {
	l := a.Layout
	if want, err := screen.NewCellLayout(l.Width, l.Height); err != nil || want != l {
		return fmt.Errorf("%w: cell layout %+v is not the layout of a %dx%d screen", ErrConfig, l, l.Width, l.Height)
	}
	if a.WeightBits < minWeightBits || a.WeightBits > maxWeightBits {
		return fmt.Errorf("%w: weight bits %d outside %d..%d", ErrConfig, a.WeightBits, minWeightBits, maxWeightBits)
	}
	return nil
}

// TextReader is the built-in text reader. It reads a state of the cells
// screen encoder (screen.EncodeCells) back into a screen, each cell the
// nearest character (screen.CellLayout.Decode), and scores each choice by
// where it stands on that screen:
//
//	s(y) = sum of w[f], f the features of y   + log sum over the places o where y appears of exp(sum of w[f], f the features of o)
//	P(y) = softmax of s over the question's choices
//
// A choice's features are its value, whether it appears at all, and whether
// it is the cursor's column or row (plus or minus one); a place's features
// are the characters and character classes around it, its row (from the top
// and from the bottom) and its column band, each joined with the question's
// kind and hashed (FNV-1a 64) into one weight table. So a value never seen in
// training (a turn count, an HP value) is read where the screen shows it in a
// context the reader has learned: "T:" before it on the bottom row. It is
// immutable and safe for concurrent use.
type TextReader struct {
	arch TextArch
	w    []float32
	name string
}

// Arch returns the reader's architecture.
func (r *TextReader) Arch() TextArch { return r.arch }

// Shape is the state geometry the reader reads: the paper's 32 x 512.
func (r *TextReader) Shape() (slots, dim int) { return screen.Slots, screen.Dim }

// Name is "text-" and the CRC-32C of the reader's file, in hex.
func (r *TextReader) Name() string { return r.name }

// NumParams is the size of the weight table.
func (r *TextReader) NumParams() int { return len(r.w) }

func (r *TextReader) setName() { r.name = fileName("text", r) }

// featHash hashes a feature: FNV-1a 64 over the question kind, a zero byte,
// the feature's name and its value.
type featHash uint64

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func kindHash(kind string) featHash {
	h := uint64(fnvOffset)
	for i := 0; i < len(kind); i++ {
		h = (h ^ uint64(kind[i])) * fnvPrime
	}
	return featHash((h ^ 0) * fnvPrime)
}

func (h featHash) str(name string, v string) uint64 {
	x := uint64(h)
	for i := 0; i < len(name); i++ {
		x = (x ^ uint64(name[i])) * fnvPrime
	}
	x = (x ^ 0xff) * fnvPrime
	for i := 0; i < len(v); i++ {
		x = (x ^ uint64(v[i])) * fnvPrime
	}
	return x
}

func (h featHash) num(name string, v int) uint64 { return h.str(name, strconv.Itoa(v)) }

// class names a character's class: digit, letter, space, edge of the row,
// or other.
func class(c int) string {
	switch {
	case c < 0:
		return "^"
	case c >= '0' && c <= '9':
		return "d"
	case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		return "a"
	case c == ' ':
		return "s"
	}
	return "p"
}

// choiceFeats are one choice's features on one screen: its own and each
// place's, as weight-table indices.
type choiceFeats struct {
	own    []uint32
	places [][]uint32
}

// features returns dst[:0] with the features of every choice of a question
// of kind k on grid g appended.
func (r *TextReader) features(dst []choiceFeats, g *screen.Grid, kind string, choices []string) []choiceFeats {
	mask := uint64(len(r.w) - 1)
	h := kindHash(kind)
	dst = dst[:0]
	at := func(row []byte, i int) int {
		if i < 0 || i >= len(row) {
			return -1
		}
		return int(row[i])
	}
	ctx := func(row []byte, lo, hi int) string { // row[lo:hi] with '^' outside the row
		b := make([]byte, 0, hi-lo)
		for i := lo; i < hi; i++ {
			if c := at(row, i); c < 0 {
				b = append(b, '^')
			} else {
				b = append(b, byte(c))
			}
		}
		return string(b)
	}
	for _, y := range choices {
		cf := choiceFeats{own: []uint32{uint32(h.str("v", y) & mask)}}
		if y == "" {
			cf.own = append(cf.own, uint32(h.str("empty", "")&mask))
		}
		if n, err := strconv.Atoi(y); err == nil && g.HasCursor {
			for d := -1; d <= 1; d++ {
				if n == g.CursorX+d {
					cf.own = append(cf.own, uint32(h.num("cx", d)&mask))
				}
				if n == g.CursorY+d {
					cf.own = append(cf.own, uint32(h.num("cy", d)&mask))
				}
			}
		}
		if y != "" && len(y) <= g.Width {
		rows:
			for ry := 0; ry < g.Height; ry++ {
				row := g.Row(ry)
				for x := 0; x+len(y) <= len(row); x++ {
					if string(row[x:x+len(y)]) != y {
						continue
					}
					if len(cf.places) == maxOccurrences {
						break rows
					}
					l1, r1 := at(row, x-1), at(row, x+len(y))
					f := []uint64{
						h.str("o", ""),
						h.str("l1", ctx(row, x-1, x)), h.str("l2", ctx(row, x-2, x)),
						h.str("l3", ctx(row, x-3, x)), h.str("l4", ctx(row, x-4, x)),
						h.str("r1", ctx(row, x+len(y), x+len(y)+1)), h.str("r2", ctx(row, x+len(y), x+len(y)+2)),
						h.str("lc", class(l1)), h.str("rc", class(r1)), h.str("lrc", class(l1)+class(r1)),
						h.num("row", ry), h.num("rowb", g.Height-1-ry), h.num("col", x*8/g.Width),
						h.str("rowl3", strconv.Itoa(g.Height-1-ry)+ctx(row, x-3, x)),
					}
					p := make([]uint32, len(f))
					for i, v := range f {
						p[i] = uint32(v & mask)
					}
					cf.places = append(cf.places, p)
				}
			}
		}
		if len(cf.places) == 0 {
			cf.own = append(cf.own, uint32(h.str("absent", "")&mask))
		}
		dst = append(dst, cf)
	}
	return dst
}

// scoreChoices sets sc[c] to s(choice c) and, for each choice, the
// weights of its places (softmax over places) in pw[c].
func scoreChoices[W float32 | float64](w []W, cfs []choiceFeats, sc []float64, pw [][]float64) {
	for c, cf := range cfs {
		s := 0.0
		for _, f := range cf.own {
			s += float64(w[f])
		}
		if len(cf.places) > 0 {
			ps := pw[c][:0]
			for _, p := range cf.places {
				v := 0.0
				for _, f := range p {
					v += float64(w[f])
				}
				ps = append(ps, v)
			}
			pw[c] = ps
			s += softmax(ps) // log sum exp, leaving the place weights in ps
		}
		sc[c] = s
	}
}

// softmax turns sc into probabilities in place and returns the log of the
// sum of exp(sc) it normalised by, so that -ln P(c) = logZ - sc_orig[c].
func softmax(sc []float64) (logZ float64) {
	m := math.Inf(-1)
	for _, v := range sc {
		m = max(m, v)
	}
	z := 0.0
	for i, v := range sc {
		sc[i] = math.Exp(v - m)
		z += sc[i]
	}
	for i := range sc {
		sc[i] /= z
	}
	return m + math.Log(z)
}

// textScratch is one goroutine's buffers.
type textScratch struct {
	g   screen.Grid
	cfs []choiceFeats
	sc  []float64
	pw  [][]float64
}

func (s *textScratch) sized(n int) {
	if cap(s.sc) < n {
		s.sc = make([]float64, n)
		s.pw = make([][]float64, n)
	}
	s.sc, s.pw = s.sc[:n], s.pw[:n]
}

// probs scores q on the grid in s and leaves the choice probabilities in
// s.sc.
func (r *TextReader) probs(s *textScratch, q *trajectory.Question) {
	s.cfs = r.features(s.cfs, &s.g, q.Kind, q.Choices)
	s.sized(len(q.Choices))
	scoreChoices(r.w, s.cfs, s.sc, s.pw)
	softmax(s.sc)
}

// argmax returns the index of the largest value, the lowest on ties.
func argmax(v []float64) int {
	best := 0
	for c, x := range v {
		if x > v[best] {
			best = c
		}
	}
	return best
}

// bitsOf returns -log2 P(answer).
func bitsOf(p []float64, ans int) float64 {
	return -math.Log2(max(p[ans], math.SmallestNonzeroFloat64))
}

func (r *TextReader) check(states [][]float32, qs []*trajectory.Question) ([]int, error) {
	if len(states) < len(qs) {
		return nil, fmt.Errorf("%w: %d states for %d questions", ErrShape, len(states), len(qs))
	}
	ans := make([]int, len(qs))
	for i, q := range qs {
		a, err := answerIndex(q)
		if err != nil {
			return nil, err
		}
		ans[i] = a
		if err := checkState(states[i], screen.Slots, screen.Dim, fmt.Sprintf("state %d", i)); err != nil {
			return nil, err
		}
	}
	return ans, nil
}

// each runs f(i, scratch) for i < n on up to GOMAXPROCS goroutines; the
// results go to fixed indices, so they do not depend on the schedule.
func (r *TextReader) each(n int, f func(i int, s *textScratch)) {
	workers := min(runtime.GOMAXPROCS(0), max(1, n/4))
	var wg sync.WaitGroup
	next := make(chan int, n)
	for i := range n {
		next <- i
	}
	close(next)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var s textScratch
			for i := range next {
				f(i, &s)
			}
		}()
	}
	wg.Wait()
}

// runs cuts 0..n into runs of consecutive questions that read the same
// state (the same backing array), so each state is decoded once.
func runs(states [][]float32, n int) [][2]int {
	var out [][2]int
	for i := 0; i < n; {
		j := i + 1
		for j < n && len(states[j]) > 0 && &states[j][0] == &states[i][0] {
			j++
		}
		out = append(out, [2]int{i, j})
		i = j
	}
	return out
}

// eachRun decodes each run's state once and calls f for every question of
// the run with the choice probabilities in s.sc.
func (r *TextReader) eachRun(states [][]float32, qs []*trajectory.Question, f func(i int, s *textScratch)) {
	rs := runs(states, len(qs))
	r.each(len(rs), func(k int, s *textScratch) {
		lo, hi := rs[k][0], rs[k][1]
		r.arch.Layout.DecodeGrid(&s.g, states[lo]) // checked: cannot fail
		for i := lo; i < hi; i++ {
			r.probs(s, qs[i])
			f(i, s)
		}
	})
}

// Bits implements Reader.
func (r *TextReader) Bits(dst []float64, states [][]float32, qs []*trajectory.Question) ([]float64, error) {
	ans, err := r.check(states, qs)
	if err != nil {
		return nil, err
	}
	dst = grow(dst, len(qs))
	r.eachRun(states, qs, func(i int, s *textScratch) { dst[i] = bitsOf(s.sc, ans[i]) })
	return dst, nil
}

// Predict implements Predictor: the most likely choice, the lowest index on
// ties.
func (r *TextReader) Predict(dst []int, states [][]float32, qs []*trajectory.Question) ([]int, error) {
	if _, err := r.check(states, qs); err != nil {
		return nil, err
	}
	dst = grow(dst, len(qs))
	r.eachRun(states, qs, func(i int, s *textScratch) { dst[i] = argmax(s.sc) })
	return dst, nil
}

// BitsEdits implements Reader: the base state is decoded once, and each
// edit re-decodes only the cells of its slot.
func (r *TextReader) BitsEdits(dst []float64, base []float32, q *trajectory.Question, edits []SlotEdit) ([]float64, error) {
	if err := checkState(base, screen.Slots, screen.Dim, "base state"); err != nil {
		return nil, err
	}
	ans, err := answerIndex(q)
	if err != nil {
		return nil, err
	}
	for k, e := range edits {
		if err := checkEdit(e, k, screen.Slots, screen.Dim); err != nil {
			return nil, err
		}
	}
	var bg screen.Grid
	r.arch.Layout.DecodeGrid(&bg, base)
	dst = grow(dst, len(edits))
	r.each(len(edits), func(k int, s *textScratch) {
		s.g.Width, s.g.Height, s.g.CursorX, s.g.CursorY, s.g.HasCursor = bg.Width, bg.Height, bg.CursorX, bg.CursorY, bg.HasCursor
		s.g.Cells = append(s.g.Cells[:0], bg.Cells...)
		r.arch.Layout.DecodeSlot(&s.g, edits[k].Slot, edits[k].Values)
		r.probs(s, q)
		dst[k] = bitsOf(s.sc, ans)
	})
	return dst, nil
}

// Probs sets dst to the probability of each of q's choices given state.
func (r *TextReader) Probs(dst []float64, state []float32, q *trajectory.Question) ([]float64, error) {
	if _, err := r.check([][]float32{state}, []*trajectory.Question{q}); err != nil {
		return nil, err
	}
	var s textScratch
	r.arch.Layout.DecodeGrid(&s.g, state)
	r.probs(&s, q)
	dst = grow(dst, len(q.Choices))
	copy(dst, s.sc)
	return dst, nil
}
