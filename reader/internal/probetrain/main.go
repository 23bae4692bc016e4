// Command probetrain trains the built-in reader probe on sim questions and
// measures it on held-out episodes: the reproducible source of the numbers in
// the reader's notes. It generates the episodes in memory with the sim package
// (the same episodes as `memowm sim --episodes N --steps T --seed S`), keeps
// the state each question asks about, quantises it with the given OPQ
// quantizer (encode, then decode: the complete quantised state) and trains.
//
//	go run ./reader/internal/probetrain --opq /tmp/opqexp/pca.opq --out /tmp/reader/probe.rdr
package main

import (
	"flag"
	"fmt"
	"log"
	"math"
	"os"
	"sort"
	"time"

	"github.com/memowm/memowm/opq"
	"github.com/memowm/memowm/reader"
	"github.com/memowm/memowm/sim"
	"github.com/memowm/memowm/trajectory"
)

func main() {
	log.SetFlags(0)
	opqPath := flag.String("opq", "/tmp/opqexp/pca.opq", "OPQ quantizer file")
	out := flag.String("out", "", "write the trained probe here")
	trainSeeds := flag.Int("train-seeds", 1, "train on sim seeds 1..N")
	trainEps := flag.Int("train-episodes", 1000, "episodes per training seed")
	evalSeed := flag.Uint64("eval-seed", 1000, "sim seed of the held-out episodes")
	evalEps := flag.Int("eval-episodes", 500, "held-out episodes")
	steps := flag.Int("steps", 20, "steps per episode")
	d := reader.DefaultProbeConfig()
	cfg := d
	flag.IntVar(&cfg.Proj, "proj", d.Proj, "slot projection width K")
	flag.IntVar(&cfg.Hidden, "hidden", d.Hidden, "hidden width H")
	flag.IntVar(&cfg.Epochs, "epochs", d.Epochs, "max epochs")
	flag.IntVar(&cfg.Patience, "patience", d.Patience, "early-stopping patience")
	flag.Float64Var(&cfg.LR, "lr", d.LR, "Adam learning rate")
	flag.IntVar(&cfg.Batch, "batch", d.Batch, "batch size")
	flag.Float64Var(&cfg.GradClip, "clip", d.GradClip, "gradient norm cap (0: off)")
	flag.Parse()

	q, err := opq.Load(*opqPath)
	if err != nil {
		log.Fatal(err)
	}
	t0 := time.Now()
	var trS [][]float32
	var trQ []*trajectory.Question
	for s := 1; s <= *trainSeeds; s++ {
		st, qs := data(q, uint64(s), *trainEps, *steps)
		trS, trQ = append(trS, st...), append(trQ, qs...)
	}
	evS, evQ := data(q, *evalSeed, *evalEps, *steps)
	fmt.Printf("data: %d training questions (seeds 1..%d x %d episodes), %d held-out (seed %d, %d episodes); sim+OPQ %.1f s\n",
		len(trQ), *trainSeeds, *trainEps, len(evQ), *evalSeed, *evalEps, time.Since(t0).Seconds())

	p, rep, err := reader.TrainProbe(trS, trQ, cfg, func(pr reader.TrainProgress) {
		mark := ""
		if pr.Best {
			mark = " *"
		}
		fmt.Printf("epoch %2d  train %.4f bits  val %.4f bits  val acc %.4f  %5.1f s%s\n",
			pr.Epoch, pr.TrainBits, pr.ValBits, pr.ValAccuracy, pr.Elapsed.Seconds(), mark)
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("trained %s: %d parameters, best epoch %d of %d, %d train / %d val questions (%d / %d episodes), %.1f s\n",
		p.Name(), rep.Params, rep.BestEpoch, rep.Epochs, rep.TrainQuestions, rep.ValQuestions, rep.TrainEpisodes, rep.ValEpisodes, rep.Duration.Seconds())

	ev, err := reader.Evaluate(p, evS, evQ)
	if err != nil {
		log.Fatal(err)
	}
	prior := priorBits(trQ, evQ)
	fmt.Printf("\nheld-out (seed %d, %d episodes, complete quantised states):\n", *evalSeed, *evalEps)
	fmt.Printf("%-9s %6s %9s %10s %11s %11s %11s\n", "kind", "n", "accuracy", "mean bits", "chance acc", "chance bits", "prior bits")
	for _, k := range append(ev.Kinds, ev.All) {
		fmt.Printf("%-9s %6d %9.4f %10.4f %11.4f %11.4f %11.4f\n", k.Kind, k.N, k.Accuracy, k.MeanBits, k.ChanceAccuracy, k.ChanceBits, prior[k.Kind])
	}

	// Speed of the counterfactual path: one state, one question, 1024 one-slot edits.
	edits := make([]reader.SlotEdit, 1024)
	for k := range edits {
		s := k % 32
		edits[k] = reader.SlotEdit{Slot: s, Values: evS[1][s*512 : (s+1)*512]}
	}
	var bits []float64
	t1 := time.Now()
	n := 0
	for time.Since(t1) < 2*time.Second {
		bits, err = p.BitsEdits(bits, evS[0], evQ[0], edits)
		if err != nil {
			log.Fatal(err)
		}
		n += len(edits)
	}
	fmt.Printf("\nBitsEdits: %.0f edits/s (1024 one-slot edits of one state per call)\n", float64(n)/time.Since(t1).Seconds())
	t1 = time.Now()
	if _, err := p.Bits(nil, evS, evQ); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("Bits: %.0f (state, question) pairs/s over %d held-out pairs\n", float64(len(evQ))/time.Since(t1).Seconds(), len(evQ))

	if *out != "" {
		if err := p.Save(*out); err != nil {
			log.Fatal(err)
		}
		fi, _ := os.Stat(*out)
		fmt.Printf("wrote %s (%.2f MB)\n", *out, float64(fi.Size())/1e6)
	}
}

// data generates n episodes of sim seed seed and returns, for each question,
// the complete quantised state of the observation it asks about.
func data(q *opq.Quantizer, seed uint64, n, steps int) ([][]float32, []*trajectory.Question) {
	cfg := sim.DefaultConfig()
	cfg.Episodes, cfg.Steps, cfg.Seed = n, steps, seed
	w, err := sim.New(cfg)
	if err != nil {
		log.Fatal(err)
	}
	sh := q.Shape()
	var raw []float32
	var qs []*trajectory.Question
	for i := 0; i < n; i++ {
		ep, eqs, _ := w.Episode(i)
		for k := range eqs {
			raw = append(raw, ep.States[eqs[k].Step]...)
			qs = append(qs, &eqs[k])
		}
	}
	enc := q.NewEncoder()
	codes := make([]uint8, len(qs)*sh.Codes)
	if err := enc.EncodeBatch(codes, raw); err != nil {
		log.Fatal(err)
	}
	if err := enc.DecodeBatch(raw, codes); err != nil {
		log.Fatal(err)
	}
	L := sh.StateLen()
	states := make([][]float32, len(qs))
	for i := range states {
		states[i] = raw[i*L : (i+1)*L : (i+1)*L]
	}
	return states, qs
}

// priorBits is the mean bits, per kind, of a reader that ignores the state:
// the training answer frequency of each (kind, subject), add-one smoothed
// over the question's choices.
func priorBits(tr, ev []*trajectory.Question) map[string]float64 {
	count := map[string]map[string]float64{}
	for _, q := range tr {
		k := q.Kind + "\x00" + q.Subject
		if count[k] == nil {
			count[k] = map[string]float64{}
		}
		count[k][q.Answer]++
	}
	sum, n := map[string]float64{}, map[string]float64{}
	for _, q := range ev {
		c := count[q.Kind+"\x00"+q.Subject]
		tot := float64(len(q.Choices))
		for _, v := range c {
			tot += v
		}
		b := -math.Log2((c[q.Answer] + 1) / tot)
		for _, k := range []string{q.Kind, "all"} {
			sum[k] += b
			n[k]++
		}
	}
	keys := make([]string, 0, len(sum))
	for k := range sum {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := map[string]float64{}
	for _, k := range keys {
		out[k] = sum[k] / n[k]
	}
	return out
}
