// Command wmgap says where world models spend their held-out bits, so that
// two models (say, two presets of a capacity sweep) can be compared
// transition by transition rather than by one total:
//
//	go run ./scripts/wmgap [-episodes N] HELD.arrow A.mwb [B.mwb ...]
//
// For each of the first N episodes of HELD (default 20) and each of its
// transitions, every bundle's world model predicts the next state from the
// true history (at most its window of states, as training and evaluation
// see them), and the code length of the true state is split three ways:
//
//   - gate: -log2(1 - a) on the coordinates whose code changed, the copy
//     gate's price for not copying;
//   - softmax: -log2 q(y) on the same coordinates, the price of the new code
//     among the codewords;
//   - unchanged: -log2(a + (1 - a) q(prev)) on the coordinates that kept
//     their code.
//
// It prints, per bundle, these means per transition over all transitions,
// over those where at least half of the codes changed (a new page or screen)
// and over the rest, and the mean bits per transition by the action that led
// to it. To tell a gate that is miscalibrated from one that cannot tell
// (which one shift of all its logits does not mend), it also gives the bits
// with every gate logit shifted by the one constant in -3, -2.75, ..., 3
// that gives the fewest, a shift chosen on the very episodes it is measured
// on. The figures are the teacher-forced ideal code lengths of the float
// forward (in float64 from its logits), as fit's held-out evaluation
// reports them, not the coded rate.
package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"sort"

	"github.com/memowm/memowm/model"
	"github.com/memowm/memowm/trajectory"
	"github.com/memowm/memowm/worldmodel"
)

func main() {
	episodes := flag.Int("episodes", 20, "read the first N episodes of HELD")
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "Usage: go run ./scripts/wmgap [-episodes N] HELD.arrow A.mwb [B.mwb ...]\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() < 2 || *episodes < 1 {
		flag.Usage()
		os.Exit(2)
	}
	for _, p := range flag.Args()[1:] {
		if err := report(os.Stdout, flag.Arg(0), p, *episodes); err != nil {
			fmt.Fprintf(os.Stderr, "wmgap: %s: %v\n", p, err)
			os.Exit(1)
		}
	}
}

// split is a sum of code lengths in bits over n transitions.
type split struct {
	n, changed, gate, softmax, unchanged float64
}

func (s split) String() string {
	if s.n == 0 {
		return "none"
	}
	return fmt.Sprintf("%4.0f transitions, %6.1f codes changed; bits: %7.1f = gate %6.1f + softmax %7.1f + unchanged %6.1f",
		s.n, s.changed/s.n, (s.gate+s.softmax+s.unchanged)/s.n, s.gate/s.n, s.softmax/s.n, s.unchanged/s.n)
}

func (s *split) add(o split) {
	s.n, s.changed, s.gate, s.softmax, s.unchanged = s.n+o.n, s.changed+o.changed, s.gate+o.gate, s.softmax+o.softmax, s.unchanged+o.unchanged
}

func report(w io.Writer, held, bundle string, episodes int) error {
	b, err := model.Load(bundle)
	if err != nil {
		return err
	}
	cpu, err := worldmodel.NewCPU(b.Model)
	if err != nil {
		return err
	}
	win := b.Model.Config().MaxHistory
	enc := b.OPQ.NewEncoder()
	r, err := trajectory.Open(held, trajectory.WithQuantize(b.OPQ.Shape().Codes, enc.EncodeBatch))
	if err != nil {
		return err
	}
	defer r.Close()
	var all, pages, rest split
	byAction := map[string]*split{}
	shifted := make([]float64, len(gateShifts))
	for e := 0; e < episodes; e++ {
		ep, err := r.Next()
		if err == io.EOF { // the bare sentinel: a damaged file's error may wrap io.EOF
			break
		}
		if err != nil {
			return err
		}
		codes := make([][]uint8, len(ep.Actions)+1)
		for t := range codes {
			codes[t] = ep.CodesAt(nil, t)
		}
		for t := 1; t < len(codes); t++ {
			var h worldmodel.History
			for s := max(0, t-win); s < t; s++ {
				h = append(h, worldmodel.Step{Codes: codes[s], Action: ep.Actions[s]})
			}
			outs, err := cpu.Forward(nil, []worldmodel.History{h})
			if err != nil {
				return fmt.Errorf("episode %d, transition %d: %w", e, t, err)
			}
			s := costs(&outs[0], codes[t])
			shiftedCosts(shifted, &outs[0], codes[t])
			all.add(s)
			if 2*s.changed >= float64(len(codes[t])) {
				pages.add(s)
			} else {
				rest.add(s)
			}
			k := ep.Actions[t-1].Type.String()
			if byAction[k] == nil {
				byAction[k] = &split{}
			}
			byAction[k].add(s)
		}
	}
	fmt.Fprintf(w, "%s on %s:\n", bundle, held)
	fmt.Fprintf(w, "  all             %v\n", all)
	fmt.Fprintf(w, "  >= half changed %v\n", pages)
	fmt.Fprintf(w, "  the rest        %v\n", rest)
	best := 0
	for i := range shifted {
		if shifted[i] < shifted[best] {
			best = i
		}
	}
	if all.n > 0 {
		fmt.Fprintf(w, "  gate logits shifted by %+.2f (the best of %+.0f to %+.0f): %.1f bits/transition, against %.1f unshifted\n",
			gateShifts[best], gateShifts[0], gateShifts[len(gateShifts)-1], shifted[best]/all.n, (all.gate+all.softmax+all.unchanged)/all.n)
	}
	keys := make([]string, 0, len(byAction))
	for k := range byAction {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		s := byAction[k]
		fmt.Fprintf(w, "  after %-14s %4.0f transitions, %7.1f bits\n", k, s.n, (s.gate+s.softmax+s.unchanged)/s.n)
	}
	return nil
}

// gateShifts are the shifts of every gate logit that report tries.
var gateShifts = func() []float64 {
	var d []float64
	for i := -12; i <= 12; i++ {
		d = append(d, float64(i)/4)
	}
	return d
}()

// shiftedCosts adds to sum[i] the code length of state y under prediction o
// with every gate logit shifted by gateShifts[i].
func shiftedCosts(sum []float64, o *worldmodel.Output, y []uint8) {
	C := len(o.Logits) / len(o.Gate)
	for j, c := range y {
		q := softmaxAt(o.Logits[j*C:j*C+C], c)
		for i, d := range gateShifts {
			a := 1 / (1 + math.Exp(-(float64(o.Gate[j]) + d)))
			if c != o.Prev[j] {
				sum[i] -= math.Log2((1 - a) * q)
			} else {
				sum[i] -= math.Log2(a + (1-a)*q)
			}
		}
	}
}

// softmaxAt returns softmax(l)(c), in float64.
func softmaxAt(l []float32, c uint8) float64 {
	mx := l[0]
	for _, v := range l {
		mx = max(mx, v)
	}
	var z float64
	for _, v := range l {
		z += math.Exp(float64(v - mx))
	}
	return math.Exp(float64(l[c]-mx)) / z
}

// costs splits the code length of state y under prediction o.
func costs(o *worldmodel.Output, y []uint8) split {
	s := split{n: 1}
	C := len(o.Logits) / len(o.Gate)
	for j, c := range y {
		q := softmaxAt(o.Logits[j*C:j*C+C], c)
		a := 1 / (1 + math.Exp(-float64(o.Gate[j])))
		if c != o.Prev[j] {
			s.changed++
			s.gate -= math.Log2(1 - a)
			s.softmax -= math.Log2(q)
		} else {
			s.unchanged -= math.Log2(a + (1-a)*q)
		}
	}
	return s
}
