package recording

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/memowm/memowm/trajectory"
)

// factsEpisode builds an episode of n observations whose facts come from f.
func factsEpisode(id int64, n int, f func(t int) string) *trajectory.Episode {
	ep := &trajectory.Episode{ID: id}
	for t := 0; t < n; t++ {
		ep.Facts = append(ep.Facts, []byte(f(t)))
	}
	return ep
}

func TestQuestionsRule(t *testing.T) {
	long := strings.Repeat("z", MaxAnswer+1)
	ep := factsEpisode(3, 23, func(t int) string {
		title := fmt.Sprintf("page %d", t%3)
		if t%2 == 0 {
			title = long // free text: never asked, never a choice
		}
		return fmt.Sprintf(`{"const": "same", "counter": %d, "flag": %v, "title": %q, "wide": "v%d"}`, t, t%4 == 0, title, t)
	})
	ep.Facts[5] = nil                     // no facts here
	ep.Facts[6] = []byte(`{"flag": true`) // damaged: skipped
	qs := EpisodeQuestions(ep, 1)
	per := map[string][]trajectory.Question{}
	for _, q := range qs {
		if err := q.Validate(); err != nil {
			t.Fatal(err)
		}
		if q.Episode != 3 || q.Kind != q.Subject || q.Text != "What is "+q.Kind+"?" {
			t.Errorf("question %+v", q)
		}
		vals, _ := FactValues(ep.Facts[q.Step])
		if vals[q.Kind] != q.Answer {
			t.Errorf("step %d %s: answer %q, facts %q", q.Step, q.Kind, q.Answer, vals[q.Kind])
		}
		if !sort.StringsAreSorted(q.Choices) || len(q.Choices) > MaxChoices {
			t.Errorf("choices %v", q.Choices)
		}
		per[q.Kind] = append(per[q.Kind], q)
	}
	// 21 observations have facts; title is short on the 10 odd ones of them.
	if len(per["const"]) != 0 {
		t.Error("a key with one value was asked about")
	}
	for key, n := range map[string]int{"counter": 5, "flag": 5, "wide": 5, "title": 2} {
		if len(per[key]) != n {
			t.Errorf("%s: %d questions, want %d (ceil(count/%d))", key, len(per[key]), n, QuestionEvery)
		}
	}
	if got := per["flag"][0].Choices; !reflect.DeepEqual(got, []string{"false", "true"}) {
		t.Errorf("flag choices %v", got)
	}
	if got := per["title"][0].Choices; !reflect.DeepEqual(got, []string{"page 0", "page 1", "page 2"}) {
		t.Errorf("title choices %v (long values must be left out)", got)
	}
	for _, q := range per["title"] {
		if q.Step%2 == 0 {
			t.Errorf("title asked at step %d, where it is free text", q.Step)
		}
	}
	if got := per["counter"][0].Choices; len(got) != 21 {
		t.Errorf("counter has %d choices, want its 21 values", len(got))
	}
	for i := 1; i < len(qs); i++ {
		if qs[i].Step < qs[i-1].Step {
			t.Fatal("questions are not sorted by step")
		}
	}
	if !reflect.DeepEqual(qs, EpisodeQuestions(ep, 1)) {
		t.Error("the same seed gave other questions")
	}
	if reflect.DeepEqual(qs, EpisodeQuestions(ep, 2)) {
		t.Error("another seed gave the same questions")
	}
	if got := Questions([]*trajectory.Episode{ep, ep}, 1); len(got) != 2*len(qs) {
		t.Errorf("Questions of two episodes: %d", len(got))
	}
}

func TestQuestionsCaps(t *testing.T) {
	ep := factsEpisode(0, 1000, func(t int) string { return fmt.Sprintf(`{"n": %d}`, t) })
	qs := EpisodeQuestions(ep, 7)
	if len(qs) != MaxQuestionsPerKey {
		t.Fatalf("%d questions, want the cap %d", len(qs), MaxQuestionsPerKey)
	}
	steps := map[int]bool{}
	for _, q := range qs {
		if len(q.Choices) != MaxChoices {
			t.Fatalf("%d choices, want %d", len(q.Choices), MaxChoices)
		}
		if err := q.Validate(); err != nil {
			t.Fatal(err)
		}
		if steps[q.Step] {
			t.Fatalf("step %d asked twice", q.Step)
		}
		steps[q.Step] = true
	}
	if reflect.DeepEqual(qs[0].Choices, qs[1].Choices) {
		t.Error("the other choices are not drawn per question")
	}
	if qs := EpisodeQuestions(&trajectory.Episode{}, 1); len(qs) != 0 {
		t.Error("questions without facts")
	}
}
