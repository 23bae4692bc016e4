package reader

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/memowm/memowm/screen"
	"github.com/memowm/memowm/trajectory"
)

// textRange is the values a synthetic screen draws its answers (and their
// distractors) from, inclusive. The training and held-out ranges do not
// overlap, so every held-out answer is a value never seen as an answer (nor
// as a distractor) in training.
type textRange struct {
	turn, hp, gold, cursorX [2]int
}

var (
	textTrainRange = textRange{turn: [2]int{1, 499}, hp: [2]int{1, 99}, gold: [2]int{0, 499}, cursorX: [2]int{0, 39}}
	textHeldRange  = textRange{turn: [2]int{500, 999}, hp: [2]int{100, 199}, gold: [2]int{500, 999}, cursorX: [2]int{40, 79}}
)

const (
	textW, textH = 80, 24
	textChoices  = 8
)

var textMessages = []string{
	"You hit the newt.", "The jackal bites!", "You see here a scroll labeled FOOBIE BLETCH.",
	"Welcome to the Dungeons of Doom.", "There is a staircase down here.", "You feel hungry.",
	"The door opens.", "You kill the grid bug!", "Really attack the shopkeeper?", "",
}

const textJunk = "#.-|+@%^&*()[]{}<>=~abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// textValues are the facts a synthetic screen shows.
type textValues struct {
	turn, hp, maxHP, gold, cursorX, dlvl int
}

func drawIn(rng *rand.Rand, r [2]int) int { return r[0] + rng.IntN(r[1]-r[0]+1) }

// textScreen draws an 80x24 screen: a message on row 0, random junk on rows
// 1..21, an attributes line on row 22 and the status line on row 23 (blank
// when blankStatus), the cursor at a random row on an '@'.
func textScreen(rng *rand.Rand, rg textRange, blankStatus bool) (screen.Text, textValues) {
	v := textValues{turn: drawIn(rng, rg.turn), hp: drawIn(rng, rg.hp), gold: drawIn(rng, rg.gold),
		cursorX: drawIn(rng, rg.cursorX), dlvl: 1 + rng.IntN(50)}
	v.maxHP = v.hp + rng.IntN(min(30, rg.hp[1]-v.hp)+1)
	rows := make([]string, textH)
	rows[0] = textMessages[rng.IntN(len(textMessages))]
	cy := 1 + rng.IntN(textH-3)
	for y := 1; y < textH-2; y++ {
		b := make([]byte, textW)
		for x := range b {
			b[x] = ' '
			if rng.IntN(4) == 0 {
				b[x] = textJunk[rng.IntN(len(textJunk))]
			}
		}
		if y == cy {
			b[v.cursorX] = '@'
		}
		rows[y] = strings.TrimRight(string(b), " ")
	}
	rows[textH-2] = fmt.Sprintf("Agent the Stripling St:%d Dx:%d Co:%d In:%d Wi:%d Ch:%d Neutral",
		3+rng.IntN(16), 3+rng.IntN(16), 3+rng.IntN(16), 3+rng.IntN(16), 3+rng.IntN(16), 3+rng.IntN(16))
	if !blankStatus {
		rows[textH-1] = fmt.Sprintf("Dlvl:%d $:%d HP:%d(%d) T:%d", v.dlvl, v.gold, v.hp, v.maxHP, v.turn)
	}
	return screen.Text{Rows: rows, CursorX: v.cursorX, CursorY: cy, HasCursor: true}, v
}

// textQuestion asks a question of kind whose answer is ans: ans and
// textChoices-1 distinct distractors from r (and the extra ones first, when
// they differ from ans), shuffled.
func textQuestion(rng *rand.Rand, ep int64, step int, kind string, ans int, r [2]int, extra ...int) *trajectory.Question {
	seen := map[int]bool{ans: true}
	vals := []int{ans}
	for _, e := range extra {
		if !seen[e] {
			seen[e] = true
			vals = append(vals, e)
		}
	}
	for len(vals) < textChoices {
		if d := drawIn(rng, r); !seen[d] {
			seen[d] = true
			vals = append(vals, d)
		}
	}
	rng.Shuffle(len(vals), func(a, b int) { vals[a], vals[b] = vals[b], vals[a] })
	q := &trajectory.Question{Episode: ep, Step: step, Kind: kind, Subject: "status:" + kind,
		Text: "What is the " + kind + "?", Answer: strconv.Itoa(ans)}
	for _, x := range vals {
		q.Choices = append(q.Choices, strconv.Itoa(x))
	}
	return q
}

// textSet is synthetic data: states[i] answers qs[i] (the questions of one
// screen share its state).
type textSet struct {
	states [][]float32
	qs     []*trajectory.Question
	texts  []screen.Text // one per screen
}

// textData draws n screens from values rg, with episodes of 4 screens
// numbered from ep0, and asks the given kinds about each (all four when
// kinds is empty).
func textData(t testing.TB, n int, seed uint64, rg textRange, ep0 int64, blankStatus bool, kinds ...string) textSet {
	if len(kinds) == 0 {
		kinds = []string{"turn", "hp", "gold", "cursor_x"}
	}
	rng := rand.New(rand.NewPCG(seed, 0x7465787464617461))
	var d textSet
	for i := range n {
		txt, v := textScreen(rng, rg, blankStatus)
		st, err := screen.EncodeCells(nil, txt, textW, textH)
		if err != nil {
			t.Fatal(err)
		}
		d.texts = append(d.texts, txt)
		ep, step := ep0+int64(i/4), i%4
		for _, k := range kinds {
			var q *trajectory.Question
			switch k {
			case "turn":
				q = textQuestion(rng, ep, step, k, v.turn, rg.turn)
			case "hp":
				q = textQuestion(rng, ep, step, k, v.hp, rg.hp, v.maxHP)
			case "gold":
				q = textQuestion(rng, ep, step, k, v.gold, rg.gold)
			case "cursor_x":
				q = textQuestion(rng, ep, step, k, v.cursorX, rg.cursorX)
			}
			d.states = append(d.states, st)
			d.qs = append(d.qs, q)
		}
	}
	return d
}

// testTextConfig is DefaultTextConfig with a smaller table.
func testTextConfig() TextConfig {
	c := DefaultTextConfig()
	c.WeightBits = 16
	c.Epochs = 6
	return c
}

var trainedText struct {
	once sync.Once
	r    *TextReader
	rep  Report
	err  error
}

// trainedTextReader trains a reader once on 240 training screens (960
// questions) and shares it between the tests.
func trainedTextReader(t testing.TB) (*TextReader, Report) {
	trainedText.once.Do(func() {
		d := textData(t, 240, 1, textTrainRange, 0, false)
		trainedText.r, trainedText.rep, trainedText.err = TrainText(d.states, d.qs, testTextConfig(), nil)
	})
	if trainedText.err != nil {
		t.Fatal(trainedText.err)
	}
	return trainedText.r, trainedText.rep
}

func kindStats(ev Evaluation, kind string) KindStats {
	for _, k := range ev.Kinds {
		if k.Kind == kind {
			return k
		}
	}
	return KindStats{}
}

// TestTextReadsUnseenValues: a reader trained on turns 1..499 (and so on)
// reads turns 500..999 from held-out screens, and reads nothing once the
// status line is blank, so it reads the screen rather than memorising.
func TestTextReadsUnseenValues(t *testing.T) {
	r, rep := trainedTextReader(t)
	if rep.TrainQuestions == 0 || rep.Params != 1<<16 || r.NumParams() != 1<<16 || rep.Epochs < 1 {
		t.Fatalf("report %+v, %d params", rep, r.NumParams())
	}
	t.Logf("trained: %d train / %d val questions, %d epochs (best %d), train %.3f bits, val %.3f bits, %v",
		rep.TrainQuestions, rep.ValQuestions, rep.Epochs, rep.BestEpoch, rep.TrainBits, rep.ValBits, rep.Duration)
	held := textData(t, 80, 2, textHeldRange, 10000, false)
	ev, err := Evaluate(r, held.states, held.qs)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"turn", "hp", "gold", "cursor_x"} {
		s := kindStats(ev, k)
		t.Logf("held-out %-8s n=%d accuracy %.3f (chance %.3f), %.3f bits (chance %.3f)",
			k, s.N, s.Accuracy, s.ChanceAccuracy, s.MeanBits, s.ChanceBits)
		if s.N != 80 || s.ChanceAccuracy != 1.0/textChoices {
			t.Fatalf("%s: %+v", k, s)
		}
		if s.Accuracy < 0.9 || !(s.MeanBits < 0.5*s.ChanceBits) {
			t.Errorf("%s: accuracy %.3f, %.3f bits on values never seen as answers; want >= 0.9 and under half of chance's %.3f bits",
				k, s.Accuracy, s.MeanBits, s.ChanceBits)
		}
	}
	// Control: the same kind of screens without a status line.
	blank := textData(t, 80, 3, textHeldRange, 20000, true, "turn")
	ev, err = Evaluate(r, blank.states, blank.qs)
	if err != nil {
		t.Fatal(err)
	}
	s := kindStats(ev, "turn")
	t.Logf("blank status line: turn accuracy %.3f (chance %.3f), %.3f bits", s.Accuracy, s.ChanceAccuracy, s.MeanBits)
	if s.Accuracy >= 0.3 || s.MeanBits < 0.8*s.ChanceBits {
		t.Errorf("blank status line: turn accuracy %.3f, %.3f bits; want near chance (%.3f, %.3f bits)",
			s.Accuracy, s.MeanBits, s.ChanceAccuracy, s.ChanceBits)
	}
}

func sameBits(t *testing.T, what string, a, b []float64) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%s: %d results, want %d", what, len(a), len(b))
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			t.Fatalf("%s: entry %d: %v, want %v", what, i, a[i], b[i])
		}
	}
}

// TestTextExact: a batch equals its questions one by one, Predict is the
// argmax of Probs, Bits is -log2 of the answer's probability, BitsEdits
// equals Bits of the edited states, and nothing depends on GOMAXPROCS.
func TestTextExact(t *testing.T) {
	r, _ := trainedTextReader(t)
	d := textData(t, 12, 4, textHeldRange, 30000, false)
	run := func() (bits []float64, pred []int) {
		bits, err := r.Bits(nil, d.states, d.qs)
		if err != nil {
			t.Fatal(err)
		}
		if pred, err = r.Predict(nil, d.states, d.qs); err != nil {
			t.Fatal(err)
		}
		return bits, pred
	}
	bits, pred := run()
	// A reused dst, longer and holding garbage, gives the same bits.
	dst := make([]float64, 3*len(d.qs))
	for i := range dst {
		dst[i] = -7
	}
	again, err := r.Bits(dst, d.states, d.qs)
	if err != nil {
		t.Fatal(err)
	}
	sameBits(t, "Bits into a reused dst", again, bits)
	// More states than questions: the extra states are ignored.
	extra, err := r.Bits(nil, d.states, d.qs[:5])
	if err != nil {
		t.Fatal(err)
	}
	sameBits(t, "Bits of a prefix", extra, bits[:5])
	for i, q := range d.qs {
		one, err := r.Bits(nil, d.states[i:i+1], d.qs[i:i+1])
		if err != nil {
			t.Fatal(err)
		}
		sameBits(t, fmt.Sprintf("question %d alone", i), one, bits[i:i+1])
		p1, err := r.Predict(nil, d.states[i:i+1], d.qs[i:i+1])
		if err != nil {
			t.Fatal(err)
		}
		probs, err := r.Probs(nil, d.states[i], q)
		if err != nil {
			t.Fatal(err)
		}
		if len(probs) != len(q.Choices) {
			t.Fatalf("question %d: %d probabilities for %d choices", i, len(probs), len(q.Choices))
		}
		sum := 0.0
		for _, p := range probs {
			if !(p >= 0 && p <= 1) {
				t.Fatalf("question %d: probability %v", i, p)
			}
			sum += p
		}
		if math.Abs(sum-1) > 1e-12 {
			t.Fatalf("question %d: probabilities sum to %v", i, sum)
		}
		if a := argmax(probs); a != pred[i] || p1[0] != pred[i] {
			t.Fatalf("question %d: Predict %d in the batch, %d alone, argmax of Probs %d", i, pred[i], p1[0], a)
		}
		ans, _ := answerIndex(q)
		if b := -math.Log2(max(probs[ans], math.SmallestNonzeroFloat64)); math.Float64bits(b) != math.Float64bits(bits[i]) {
			t.Fatalf("question %d: Bits %v, -log2 Probs[answer] %v", i, bits[i], b)
		}
	}
	// The reader is safe for concurrent use: goroutines sharing it agree.
	var wg sync.WaitGroup
	conc := make([][]float64, 4)
	for g := range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conc[g], _ = r.Bits(nil, d.states, d.qs)
		}()
	}
	wg.Wait()
	for g := range conc {
		sameBits(t, fmt.Sprintf("Bits in goroutine %d", g), conc[g], bits)
	}
	// GOMAXPROCS does not change a bit.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 4} {
		runtime.GOMAXPROCS(procs)
		b, p := run()
		sameBits(t, fmt.Sprintf("Bits at GOMAXPROCS %d", procs), b, bits)
		for i := range p {
			if p[i] != pred[i] {
				t.Fatalf("GOMAXPROCS %d: question %d predicted %d, want %d", procs, i, p[i], pred[i])
			}
		}
	}
}

// statusSlots returns the slots that hold the cells of row y, columns
// [x0, x1).
func statusSlots(t *testing.T, r *TextReader, y, x0, x1 int) []int {
	var slots []int
	for x := x0; x < x1; x++ {
		g, _, _ := r.Arch().Layout.Cell(x, y)
		if s := g * screen.GroupDim / screen.Dim; len(slots) == 0 || slots[len(slots)-1] != s {
			slots = append(slots, s)
		}
	}
	return slots
}

// TestTextBitsEdits: BitsEdits equals Bits of the edited states, bit for
// bit, for edits that take whole slots from other screens: the message, the
// junk, the status line and slot 31 (the cursor groups), from screens with
// and without a cursor, and an all-zero slot.
func TestTextBitsEdits(t *testing.T) {
	r, _ := trainedTextReader(t)
	d := textData(t, 4, 5, textHeldRange, 40000, false)
	noCursor := d.texts[3]
	noCursor.HasCursor = false
	nc, err := screen.EncodeCells(nil, noCursor, textW, textH)
	if err != nil {
		t.Fatal(err)
	}
	donors := [][]float32{d.states[4], d.states[8], nc, make([]float32, screen.Slots*screen.Dim)}
	slots := []int{0, 5, 13, 21, 31}
	slots = append(slots, statusSlots(t, r, textH-1, 0, textW)...)
	var edits []SlotEdit
	for _, s := range slots {
		for _, dn := range donors {
			edits = append(edits, SlotEdit{Slot: s, Values: dn[s*screen.Dim : (s+1)*screen.Dim]})
		}
	}
	base := d.states[0]
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, q := range d.qs[:4] { // the four questions of screen 0
		edited := make([][]float32, len(edits))
		qs := make([]*trajectory.Question, len(edits))
		for k, e := range edits {
			edited[k] = append([]float32(nil), base...)
			copy(edited[k][e.Slot*screen.Dim:], e.Values)
			qs[k] = q
		}
		want, err := r.Bits(nil, edited, qs)
		if err != nil {
			t.Fatal(err)
		}
		baseBits, err := r.Bits(nil, [][]float32{base}, []*trajectory.Question{q})
		if err != nil {
			t.Fatal(err)
		}
		changed := 0
		for _, b := range want {
			if b != baseBits[0] {
				changed++
			}
		}
		if changed == 0 {
			t.Fatalf("%s: no edit changes the bits: the test edits nothing the reader reads", q.Kind)
		}
		for _, procs := range []int{1, 4} {
			runtime.GOMAXPROCS(procs)
			got, err := r.BitsEdits(nil, base, q, edits)
			if err != nil {
				t.Fatal(err)
			}
			sameBits(t, fmt.Sprintf("%s: BitsEdits at GOMAXPROCS %d", q.Kind, procs), got, want)
		}
		// An edit that puts back the base's own slot 31 gives the base's bits.
		own, err := r.BitsEdits(nil, base, q, []SlotEdit{{Slot: 31, Values: base[31*screen.Dim:]}})
		if err != nil {
			t.Fatal(err)
		}
		sameBits(t, q.Kind+": identity edit", own, baseBits)
		// No edits: no results.
		if none, err := r.BitsEdits(nil, base, q, nil); err != nil || len(none) != 0 {
			t.Fatalf("%s: no edits gave %v, %v", q.Kind, none, err)
		}
	}
}

// TestTextTrainDeterministic: TrainText twice with one config, at
// GOMAXPROCS 1 and 4, gives byte-identical files and one name; another seed
// gives another reader.
func TestTextTrainDeterministic(t *testing.T) {
	d := textData(t, 40, 6, textTrainRange, 0, false)
	cfg := testTextConfig()
	cfg.WeightBits, cfg.Epochs = 12, 3
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var files [][]byte
	var names []string
	for _, procs := range []int{1, 4} {
		runtime.GOMAXPROCS(procs)
		var epochs []int
		r, rep, err := TrainText(d.states, d.qs, cfg, func(p TrainProgress) { epochs = append(epochs, p.Epoch) })
		if err != nil {
			t.Fatal(err)
		}
		if len(epochs) != rep.Epochs || rep.BestEpoch < 1 || rep.BestEpoch > rep.Epochs {
			t.Fatalf("progress saw epochs %v, report %+v", epochs, rep)
		}
		files = append(files, probeBytes(t, r))
		names = append(names, r.Name())
	}
	if !bytes.Equal(files[0], files[1]) || names[0] != names[1] {
		t.Fatalf("two trainings differ: %s and %s", names[0], names[1])
	}
	if !strings.HasPrefix(names[0], "text-") || len(names[0]) != len("text-")+8 {
		t.Fatalf("name %q, want text- and 8 hex digits", names[0])
	}
	cfg.Seed = 2
	r, _, err := TrainText(d.states, d.qs, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Name() == names[0] {
		t.Fatal("another seed gives the same reader")
	}
}

// smallTextReader is an untrained text reader with every weight drawn, for
// the file tests.
func smallTextReader(bits int, seed uint64) *TextReader {
	l, _ := screen.NewCellLayout(textW, textH)
	rng := rand.New(rand.NewPCG(seed, 5))
	r := &TextReader{arch: TextArch{Layout: l, WeightBits: bits}, w: make([]float32, 1<<bits)}
	for i := range r.w {
		r.w[i] = float32(rng.NormFloat64())
	}
	r.setName()
	return r
}

// smallTextReaderBytes is the file of smallTextReader(8, 1), a FuzzRead seed.
func smallTextReaderBytes(t testing.TB) []byte { return probeBytes(t, smallTextReader(8, 1)) }

func TestTextFileRoundTrip(t *testing.T) {
	r, _ := trainedTextReader(t)
	b := probeBytes(t, r)
	if want := len(Magic) + 64 + 4<<16 + 4; len(b) != want {
		t.Fatalf("file of %d bytes, want %d", len(b), want)
	}
	if !bytes.Equal(b, probeBytes(t, r)) {
		t.Fatal("WriteTo twice differs")
	}
	rd := bytes.NewReader(append(append([]byte(nil), b...), "tail"...))
	got, err := Read(rd)
	if err != nil {
		t.Fatal(err)
	}
	tr, ok := got.(*TextReader)
	if !ok {
		t.Fatalf("Read returned %T, want *TextReader", got)
	}
	if rest, _ := io.ReadAll(rd); string(rest) != "tail" {
		t.Fatalf("Read left %q, want %q", rest, "tail")
	}
	if !bytes.Equal(probeBytes(t, tr), b) {
		t.Fatal("write, read, write is not byte-identical")
	}
	if tr.Name() != r.Name() || tr.Arch() != r.Arch() || tr.NumParams() != r.NumParams() {
		t.Fatalf("read %s %+v %d, wrote %s %+v %d", tr.Name(), tr.Arch(), tr.NumParams(), r.Name(), r.Arch(), r.NumParams())
	}
	if s, dm := tr.Shape(); s != screen.Slots || dm != screen.Dim {
		t.Fatalf("Shape %d x %d", s, dm)
	}
	d := textData(t, 8, 7, textHeldRange, 50000, false)
	sameBits(t, "Bits after reading", mustBits(tr, d.states, d.qs), mustBits(r, d.states, d.qs))

	path, l := saveLoad(t, r, b, "text.rdr")
	if _, ok := l.(*TextReader); !ok {
		t.Fatalf("Save/Load gave a %T", l)
	}
	if err := os.WriteFile(path, append(append([]byte(nil), b...), 0), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); !errors.Is(err, ErrFormat) {
		t.Fatalf("trailing byte: %v, want ErrFormat", err)
	}
	if err := r.Save(filepath.Join(t.TempDir(), "missing", "dir", "x.rdr")); err == nil || !strings.HasPrefix(err.Error(), "reader: ") {
		t.Fatalf("Save into a missing directory: %v", err)
	}
	if smallTextReader(8, 2).Name() == smallTextReader(8, 3).Name() {
		t.Fatal("two text readers share a name")
	}
}

// readNoPanic reads data, turning a panic into a test failure.
func readNoPanic(t *testing.T, name string, data []byte) (b Builtin, err error) {
	t.Helper()
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("%s: Read panicked: %v", name, p)
		}
	}()
	return Read(bytes.NewReader(data))
}

func TestTextFileDamage(t *testing.T) {
	b := smallTextReaderBytes(t)
	hdr := len(Magic)
	set32 := func(off int, v uint32) []byte {
		c := append([]byte(nil), b...)
		binary.LittleEndian.PutUint32(c[off:], v)
		return fixCRC(c)
	}
	flip := append([]byte(nil), b...)
	flip[len(flip)/2] ^= 0x01
	flipHdr := append([]byte(nil), b...)
	flipHdr[hdr+9] ^= 0x40 // the width, not resealed: the checksum catches it
	cases := map[string][]byte{
		"flipped weight byte": flip,
		"flipped header byte": flipHdr,
		"bad kind 0":          set32(hdr+4, 0),
		"bad kind 3":          set32(hdr+4, 3),
		"version":             set32(hdr, 2),
		"width 0":             set32(hdr+8, 0),
		"width 40":            set32(hdr+8, 40),  // a cell a group everywhere: no edge rows
		"width 120":           set32(hdr+8, 120), // four cells a group
		"huge width":          set32(hdr+8, 1<<31),
		"height 2000":         set32(hdr+12, 2000),
		"top 0":               set32(hdr+16, 0),
		"top 5":               set32(hdr+16, 5),
		"bottom 1":            set32(hdr+20, 1),
		"per group 2":         set32(hdr+24, 2),
		"per group 0":         set32(hdr+24, 0),
		"weight bits 7":       set32(hdr+28, 7),
		"weight bits 25":      set32(hdr+28, 25),
		"weight bits 2^32-1":  set32(hdr+28, math.MaxUint32),
		"weight bits 24":      set32(hdr+28, 24), // claims 64 MiB, holds 1 KiB
		"nan weight":          set32(hdr+64+4*17, math.Float32bits(float32(math.NaN()))),
		"inf weight":          set32(hdr+64, math.Float32bits(float32(math.Inf(-1)))),
		"bad magic":           append([]byte("NOTATEXT"), b[hdr:]...),
	}
	for name, c := range cases {
		_, err := readNoPanic(t, name, c)
		if !errors.Is(err, ErrFormat) || !strings.HasPrefix(err.Error(), "reader: ") {
			t.Errorf("%s: %v, want a \"reader: \" error wrapping ErrFormat", name, err)
		}
	}
	if _, err := Read(bytes.NewReader(flip)); err == nil || !strings.Contains(err.Error(), "checksum") {
		t.Errorf("flipped byte: %v, want a checksum error", err)
	}
	// The header of another size's layout is valid (the layout matches its
	// size), a damaged one is not.
	l, _ := screen.NewCellLayout(40, 10)
	other := set32(hdr+8, uint32(l.Width))
	binary.LittleEndian.PutUint32(other[hdr+12:], uint32(l.Height))
	binary.LittleEndian.PutUint32(other[hdr+16:], uint32(l.Top))
	binary.LittleEndian.PutUint32(other[hdr+20:], uint32(l.Bottom))
	binary.LittleEndian.PutUint32(other[hdr+24:], uint32(l.PerGroup))
	other = fixCRC(other)
	if got, err := readNoPanic(t, "40x10", other); err != nil || got.(*TextReader).Arch().Layout != l {
		t.Fatalf("a 40x10 header: %v", err)
	}
	binary.LittleEndian.PutUint32(other[hdr+16:], 1) // 40x10 fits a cell a group everywhere: Top is 0
	if _, err := readNoPanic(t, "40x10 top 1", fixCRC(other)); !errors.Is(err, ErrFormat) {
		t.Errorf("40x10 with a top row: %v, want ErrFormat", err)
	}
	for _, n := range []int{0, 3, hdr, hdr + 10, hdr + 64, hdr + 64 + 2, hdr + 64 + 4*100 + 1, len(b) - 4, len(b) - 1} {
		_, err := readNoPanic(t, fmt.Sprintf("cut at %d", n), b[:n])
		if !errors.Is(err, ErrFormat) || !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("cut at %d of %d: %v, want ErrFormat and io.ErrUnexpectedEOF", n, len(b), err)
		}
	}
	// Every single-byte change of the header's fields, resealed, is either
	// refused with ErrFormat or read as a reader that writes back the same
	// bytes. (The reserved bytes: TestTextFileReservedBytes.)
	for off := hdr; off < hdr+32; off++ {
		for _, x := range []byte{0x01, 0x80, 0xff} {
			c := append([]byte(nil), b...)
			c[off] ^= x
			c = fixCRC(c)
			got, err := readNoPanic(t, fmt.Sprintf("header byte %d ^ %#x", off, x), c)
			if err != nil {
				if !errors.Is(err, ErrFormat) {
					t.Errorf("header byte %d ^ %#x: %v, want ErrFormat", off, x, err)
				}
				continue
			}
			if out := probeBytes(t, got); !bytes.Equal(out, c[:len(out)]) {
				t.Errorf("header byte %d ^ %#x: accepted, but writes back other bytes", off, x)
			}
		}
	}
}

// TestTextFileReservedBytes: the header's 32 reserved bytes are zero, so a
// file with any of them set is foreign or damaged; reading it as a reader
// that writes back other bytes would break "write, read, write" and
// FuzzRead's round trip.
func TestTextFileReservedBytes(t *testing.T) {
	b := smallTextReaderBytes(t)
	for off := len(Magic) + 32; off < len(Magic)+64; off++ {
		c := append([]byte(nil), b...)
		c[off] = 1
		if _, err := readNoPanic(t, fmt.Sprintf("reserved byte %d", off), fixCRC(c)); !errors.Is(err, ErrFormat) {
			t.Errorf("reserved byte %d set: %v, want ErrFormat", off, err)
		}
	}
}

// textErr checks that err starts with "reader: " and wraps want.
func textErr(t *testing.T, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) || !strings.HasPrefix(err.Error(), "reader: ") {
		t.Errorf("%s: %v, want a \"reader: \" error wrapping %v", what, err, want)
	}
}

func TestTextErrors(t *testing.T) {
	d := textData(t, 8, 8, textTrainRange, 0, false)
	cfg := testTextConfig()
	cfg.WeightBits, cfg.Epochs = 10, 1
	train := func(states [][]float32, qs []*trajectory.Question, c TextConfig) error {
		r, _, err := TrainText(states, qs, c, nil)
		if err == nil && r == nil {
			t.Fatal("TrainText returned neither a reader nor an error")
		}
		return err
	}
	if err := train(d.states, d.qs, cfg); err != nil {
		t.Fatalf("valid data: %v", err)
	}
	textErr(t, "length mismatch", train(d.states[:len(d.states)-1], d.qs, cfg), ErrShape)
	textErr(t, "length mismatch (more states)", train(d.states, d.qs[:len(d.qs)-1], cfg), ErrShape)

	badQ := append([]*trajectory.Question(nil), d.qs...)
	q := *badQ[3]
	q.Answer = "not a choice"
	badQ[3] = &q
	textErr(t, "answer not among choices", train(d.states, badQ, cfg), ErrQuestion)
	noChoices := *d.qs[2]
	noChoices.Choices = nil
	badQ[3] = &noChoices
	textErr(t, "no choices", train(d.states, badQ, cfg), ErrQuestion)
	badQ[3] = nil
	textErr(t, "nil question", train(d.states, badQ, cfg), ErrQuestion)

	badS := append([][]float32(nil), d.states...)
	badS[5] = d.states[5][:len(d.states[5])-1]
	textErr(t, "short state", train(badS, d.qs, cfg), ErrShape)
	nan := append([]float32(nil), d.states[5]...)
	nan[1234] = float32(math.NaN())
	badS[5] = nan
	textErr(t, "NaN state", train(badS, d.qs, cfg), ErrShape)
	inf := append([]float32(nil), d.states[5]...)
	inf[99] = float32(math.Inf(1))
	badS[5] = inf
	textErr(t, "Inf state", train(badS, d.qs, cfg), ErrShape)

	badL, _ := screen.NewCellLayout(80, 24)
	badL.PerGroup = 2
	for name, mod := range map[string]func(*TextConfig){
		"epochs 0":          func(c *TextConfig) { c.Epochs = 0 },
		"lr 0":              func(c *TextConfig) { c.LR = 0 },
		"lr NaN":            func(c *TextConfig) { c.LR = math.NaN() },
		"lr Inf":            func(c *TextConfig) { c.LR = math.Inf(1) },
		"l2 -1":             func(c *TextConfig) { c.L2 = -1 },
		"val fraction 1":    func(c *TextConfig) { c.ValFraction = 1 },
		"val fraction -0.1": func(c *TextConfig) { c.ValFraction = -0.1 },
		"patience 0":        func(c *TextConfig) { c.Patience = 0 },
		"weight bits 3":     func(c *TextConfig) { c.WeightBits = 3 },
		"weight bits 25":    func(c *TextConfig) { c.WeightBits = 25 },
		"zero layout":       func(c *TextConfig) { c.Layout = screen.CellLayout{} },
		"damaged layout":    func(c *TextConfig) { c.Layout = badL },
		"zero config":       func(c *TextConfig) { *c = TextConfig{} },
	} {
		c := cfg
		mod(&c)
		textErr(t, name, train(d.states, d.qs, c), ErrConfig)
	}
	// Every episode held out: no training questions.
	c := cfg
	c.ValFraction = 0.999999
	textErr(t, "no training questions", train(d.states, d.qs, c), ErrConfig)
	textErr(t, "no questions", train(nil, nil, cfg), ErrConfig)

	r := smallTextReader(8, 4)
	_, err := r.Bits(nil, [][]float32{d.states[0][:100]}, d.qs[:1])
	textErr(t, "Bits of a short state", err, ErrShape)
	_, err = r.Bits(nil, d.states[:1], d.qs[:2])
	textErr(t, "Bits with fewer states than questions", err, ErrShape)
	_, err = r.Bits(nil, [][]float32{nan}, d.qs[:1])
	textErr(t, "Bits of a NaN state", err, ErrShape)
	_, err = r.Bits(nil, d.states[:1], []*trajectory.Question{&q})
	textErr(t, "Bits of a bad question", err, ErrQuestion)
	_, err = r.Predict(nil, [][]float32{d.states[0][:100]}, d.qs[:1])
	textErr(t, "Predict of a short state", err, ErrShape)
	_, err = r.Probs(nil, d.states[0][:100], d.qs[0])
	textErr(t, "Probs of a short state", err, ErrShape)
	_, err = r.Probs(nil, d.states[0], &q)
	textErr(t, "Probs of a bad question", err, ErrQuestion)

	slot := make([]float32, screen.Dim)
	for _, e := range []SlotEdit{{Slot: -1, Values: slot}, {Slot: screen.Slots, Values: slot}, {Slot: 3, Values: slot[:10]}} {
		_, err = r.BitsEdits(nil, d.states[0], d.qs[0], []SlotEdit{{Slot: 0, Values: slot}, e})
		textErr(t, fmt.Sprintf("BitsEdits slot %d with %d values", e.Slot, len(e.Values)), err, ErrShape)
	}
	nanSlot := append([]float32(nil), slot...)
	nanSlot[7] = float32(math.NaN())
	_, err = r.BitsEdits(nil, d.states[0], d.qs[0], []SlotEdit{{Slot: 2, Values: nanSlot}})
	textErr(t, "BitsEdits of a NaN slot", err, ErrShape)
	_, err = r.BitsEdits(nil, d.states[0][:7], d.qs[0], []SlotEdit{{Slot: 0, Values: slot}})
	textErr(t, "BitsEdits of a short base", err, ErrShape)
	_, err = r.BitsEdits(nil, d.states[0], &q, []SlotEdit{{Slot: 0, Values: slot}})
	textErr(t, "BitsEdits of a bad question", err, ErrQuestion)
}

func BenchmarkTextReaderBits(b *testing.B) {
	r, _ := trainedTextReader(b)
	d := textData(b, 16, 9, textHeldRange, 60000, false) // 64 questions
	dst := make([]float64, len(d.qs))
	b.ResetTimer()
	for range b.N {
		var err error
		if dst, err = r.Bits(dst, d.states, d.qs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(d.qs))/b.Elapsed().Seconds(), "questions/s")
}
