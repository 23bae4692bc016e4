package recording

import (
	"fmt"
	"hash/fnv"
	"sort"

	"github.com/memowm/memowm/trajectory"
)

// The rule that turns facts into questions (see Questions).
const (
	// QuestionEvery: a key is asked about once per QuestionEvery of the
	// observations that have it (rounded up).
	QuestionEvery = 5
	// MaxQuestionsPerKey caps the questions about one key in one episode.
	MaxQuestionsPerKey = 64
	// MaxChoices caps a question's choices: the answer and up to
	// MaxChoices-1 other values.
	MaxChoices = 32
	// MaxAnswer is the longest value asked about, in bytes; longer values
	// (free text) are neither asked nor offered as choices.
	MaxAnswer = 40
)

// Questions returns the questions about every episode's facts, episode by
// episode (see EpisodeQuestions).
func Questions(eps []*trajectory.Episode, seed uint64) []trajectory.Question {
	var qs []trajectory.Question
	for _, ep := range eps {
		qs = append(qs, EpisodeQuestions(ep, seed)...)
	}
	return qs
}

// EpisodeQuestions asks about ep's facts (flat JSON objects, one per
// observation; see FactValues). The rule:
//
//   - The keys are taken in sorted order. A key's values are those of the
//     observations that have it, as strings, leaving out values longer than
//     MaxAnswer bytes. A key with fewer than 2 distinct values is not asked
//     about: there is nothing to remember.
//   - A key present (with a short value) at n observations is asked about at
//     min(ceil(n/QuestionEvery), MaxQuestionsPerKey) of them, distinct, drawn
//     uniformly by SplitMix64 seeded from (seed, episode id, key); step 0 may
//     be drawn.
//   - The question at step t is "What is KEY?" with Kind and Subject KEY, the
//     answer the value at t, and the choices the key's distinct values in the
//     episode, sorted; past MaxChoices, the answer and MaxChoices-1 others
//     drawn by the same generator, sorted.
//
// Observations with no facts or facts that do not decode are skipped. The
// questions are sorted by step, then key; the result depends only on the
// facts, the id and the seed.
func EpisodeQuestions(ep *trajectory.Episode, seed uint64) []trajectory.Question {
	vals := make([]map[string]string, len(ep.Facts))
	keySet := map[string]bool{}
	for t, b := range ep.Facts {
		if len(b) == 0 {
			continue
		}
		m, err := FactValues(b)
		if err != nil {
			continue
		}
		vals[t] = m
		for k := range m {
			keySet[k] = true
		}
	}
	keys := make([]string, 0, len(keySet))
	for k := range keySet {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var qs []trajectory.Question
	for _, k := range keys {
		var steps []int
		distinct := map[string]bool{}
		for t, m := range vals {
			if v, ok := m[k]; ok && len(v) <= MaxAnswer {
				steps = append(steps, t)
				distinct[v] = true
			}
		}
		if len(distinct) < 2 {
			continue
		}
		all := make([]string, 0, len(distinct))
		for v := range distinct {
			all = append(all, v)
		}
		sort.Strings(all)
		rng := &splitmix{s: mix(seed) ^ mix(uint64(ep.ID)+0x51) ^ hashString(k)}
		m := min((len(steps)+QuestionEvery-1)/QuestionEvery, MaxQuestionsPerKey)
		pick(rng, steps, m)
		chosen := steps[:m]
		sort.Ints(chosen)
		for _, t := range chosen {
			ans := vals[t][k]
			qs = append(qs, trajectory.Question{Episode: ep.ID, Step: t, Kind: k, Subject: k,
				Text: fmt.Sprintf("What is %s?", k), Answer: ans, Choices: choices(rng, all, ans)})
		}
	}
	sort.SliceStable(qs, func(a, b int) bool { return qs[a].Step < qs[b].Step })
	return qs
}

// choices returns all (sorted) when it is short enough, else ans and
// MaxChoices-1 other values of all drawn by rng, sorted.
func choices(rng *splitmix, all []string, ans string) []string {
	if len(all) <= MaxChoices {
		return all
	}
	others := make([]string, 0, len(all)-1)
	for _, v := range all {
		if v != ans {
			others = append(others, v)
		}
	}
	pick(rng, others, MaxChoices-1)
	out := append([]string{ans}, others[:MaxChoices-1]...)
	sort.Strings(out)
	return out
}

// pick moves m elements of s drawn uniformly without replacement to s[:m]
// (a partial Fisher-Yates shuffle).
func pick[T any](rng *splitmix, s []T, m int) {
	for i := 0; i < m && i < len(s)-1; i++ {
		j := i + int(rng.below(uint64(len(s)-i)))
		s[i], s[j] = s[j], s[i]
	}
}

func hashString(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

// mix is SplitMix64's finaliser.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// splitmix is SplitMix64's generator: fixed forever, unlike math/rand's
// helpers, so questions never change with the Go version.
type splitmix struct{ s uint64 }

func (r *splitmix) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	return mix(r.s - 0x9e3779b97f4a7c15)
}

// below returns a value in [0, n) by rejection (no modulo bias).
func (r *splitmix) below(n uint64) uint64 {
	limit := -n % n // 2^64 mod n
	for {
		v := r.next()
		if v >= limit {
			return v % n
		}
	}
}
