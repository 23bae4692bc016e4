package sim

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/memowm/memowm/trajectory"
)

func smallConfig() Config {
	cfg := DefaultConfig()
	cfg.Shape.Dim = 16
	cfg.Episodes = 6
	return cfg
}

func TestEpisodeDeterministic(t *testing.T) {
	w1, _ := New(smallConfig())
	w2, _ := New(smallConfig())
	w2.Episode(3) // a different call history must not matter
	for i := 0; i < 4; i++ {
		e1, q1, s1 := w1.Episode(i)
		e2, q2, s2 := w2.Episode(i)
		if !reflect.DeepEqual(e1, e2) || !reflect.DeepEqual(q1, q2) || s1 != s2 {
			t.Fatalf("episode %d differs between two worlds of one config", i)
		}
	}
	cfg := smallConfig()
	cfg.Seed = 2
	w3, _ := New(cfg)
	e1, _, _ := w1.Episode(0)
	e3, _, _ := w3.Episode(0)
	if reflect.DeepEqual(e1.States, e3.States) {
		t.Fatal("seeds 1 and 2 gave the same episode")
	}
}

func TestEpisodesValid(t *testing.T) {
	cfg := smallConfig()
	w, _ := New(cfg)
	for i := 0; i < 20; i++ {
		ep, qs, _ := w.Episode(i)
		if ep.Len() != cfg.Steps+1 {
			t.Fatalf("episode %d has %d observations, want %d", i, ep.Len(), cfg.Steps+1)
		}
		if err := ep.Validate(w.Meta()); err != nil {
			t.Fatal(err)
		}
		if len(qs) == 0 {
			t.Fatalf("episode %d has no questions", i)
		}
		// Every answer is the fact of the observation it asks about.
		for _, q := range qs {
			if err := q.Validate(); err != nil {
				t.Fatal(err)
			}
			var f facts
			if err := json.Unmarshal(ep.Facts[q.Step], &f); err != nil {
				t.Fatal(err)
			}
			var want string
			switch q.Kind {
			case "page":
				want = f.Page
			case "typed":
				want = f.Inputs[strings.TrimPrefix(q.Subject, "field:")]
			case "checked":
				want = map[bool]string{false: "no", true: "yes"}[f.Checked[strings.TrimPrefix(q.Subject, "box:")]]
			case "selected":
				want = f.Selected
			default:
				t.Fatalf("unknown question kind %q", q.Kind)
			}
			if q.Answer != want {
				t.Fatalf("episode %d step %d %s: answer %q, facts say %q", i, q.Step, q.Kind, q.Answer, want)
			}
		}
	}
}

// TestStructure checks the properties the method relies on: unchanged screens
// encode to nearly equal states, the header's navigation never changes, and the
// default change rates lie in the range of real web browsing.
func TestStructure(t *testing.T) {
	cfg := smallConfig()
	w, _ := New(cfg)
	var st Stats
	for i := 0; i < 100; i++ {
		_, _, s := w.Episode(i)
		st.Merge(s)
	}
	if f := st.ChangedFrac(); f < 0.13 || f > 0.28 {
		t.Errorf("mean changed fraction %.3f outside web browsing's 13-28%%", f)
	}
	if st.LoadChangedFrac() < 3*st.OtherChangedFrac() {
		t.Errorf("page loads change %.3f of the screen, other steps %.3f: loads should change far more",
			st.LoadChangedFrac(), st.OtherChangedFrac())
	}

	quiet := cfg
	quiet.PageLoadRate, quiet.IdleRate, quiet.ClockRate, quiet.AdRate = 0, 1, 0, 0
	wq, _ := New(quiet)
	ep, _, s := wq.Episode(0)
	if s.PageLoads != 0 {
		t.Fatal("page loads with a zero page-load rate")
	}
	// Nav slots (1..4) are identical in content at every step: only jitter differs.
	d := cfg.Shape.Dim
	for tt := 1; tt < ep.Len(); tt++ {
		for i := slotNav0 * d; i < (slotNav0+numNav)*d; i++ {
			if diff := ep.States[tt][i] - ep.States[0][i]; diff > 1 || diff < -1 {
				t.Fatalf("nav slot value moved by %g at step %d", diff, tt)
			}
		}
	}
}

func TestConfigValidate(t *testing.T) {
	bad := []func(*Config){
		func(c *Config) { c.Steps = 0 },
		func(c *Config) { c.Episodes = -1 },
		func(c *Config) { c.Shape.Slots = 16 },
		func(c *Config) { c.Pages = 1 },
		func(c *Config) { c.ClockRate = 1.5 },
		func(c *Config) { c.PageLoadRate, c.IdleRate = 0.7, 0.7 },
		func(c *Config) { c.Noise = -1 },
	}
	for i, f := range bad {
		c := DefaultConfig()
		f(&c)
		if _, err := New(c); err == nil || !strings.HasPrefix(err.Error(), "sim: ") {
			t.Errorf("case %d: error %v, want a sim: error", i, err)
		}
	}
}

func TestWriteFileIdenticalBytes(t *testing.T) {
	for _, ext := range []string{".arrow", ".parquet"} {
		dir := t.TempDir()
		var files [2][]byte
		var qfiles [2][]byte
		for k := range files {
			p := filepath.Join(dir, []string{"a", "b"}[k]+ext)
			res, err := WriteFile(p, smallConfig(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.Episodes != 6 || res.Questions == 0 {
				t.Fatalf("%+v", res)
			}
			files[k], _ = os.ReadFile(p)
			qfiles[k], _ = os.ReadFile(trajectory.QuestionsPath(p))
		}
		if !bytes.Equal(files[0], files[1]) || !bytes.Equal(qfiles[0], qfiles[1]) {
			t.Fatalf("%s: the same seed gave different bytes", ext)
		}
		sum, err := trajectory.Summarize(filepath.Join(dir, "a"+ext))
		if err != nil {
			t.Fatal(err)
		}
		if sum.Episodes != 6 || sum.Observations != 6*21 || sum.WithFacts != 6*21 {
			t.Fatalf("%s: summary %+v", ext, sum)
		}
	}
}

// TestQuestionsPerKind: more questions per kind keep the episodes and the
// first round of questions, and every question names a real step.
func TestQuestionsPerKind(t *testing.T) {
	one := DefaultConfig()
	one.Episodes, one.Shape.Dim = 2, 16
	many := one
	many.Questions = 5
	w1, err := New(one)
	if err != nil {
		t.Fatal(err)
	}
	w5, err := New(many)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		e1, q1, _ := w1.Episode(i)
		e5, q5, _ := w5.Episode(i)
		if !reflect.DeepEqual(e1, e5) {
			t.Fatalf("episode %d changed with more questions", i)
		}
		if len(q5) < 3*len(q1) || !reflect.DeepEqual(q1, q5[:len(q1)]) {
			t.Fatalf("episode %d: %d questions with 1 per kind, %d with 5; the first round differs or is missing", i, len(q1), len(q5))
		}
		for _, q := range q5 {
			if q.Step < 0 || q.Step >= e5.Len() || q.Validate() != nil {
				t.Fatalf("bad question %+v", q)
			}
		}
	}
	bad := one
	bad.Questions = -1
	if bad.Validate() == nil {
		t.Fatal("negative questions accepted")
	}
}
