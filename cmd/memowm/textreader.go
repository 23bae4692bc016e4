package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/memowm/memowm/model"
	"github.com/memowm/memowm/opq"
	"github.com/memowm/memowm/reader"
	"github.com/memowm/memowm/screen"
)

// parseScreen reads a screen size "WxH" and returns its cell layout.
func parseScreen(s string) (screen.CellLayout, error) {
	var w, h int
	var rest string
	if n, _ := fmt.Sscanf(s, "%dx%d%s", &w, &h, &rest); n != 2 || w < 1 || h < 1 || strings.ContainsAny(s, " \t\r\n") {
		return screen.CellLayout{}, usagef("--screen %q: want columns x rows, e.g. 80x24", s)
	}
	l, err := screen.NewCellLayout(w, h)
	if err != nil {
		return screen.CellLayout{}, usagef("--screen %s: %v", s, err)
	}
	return l, nil
}

// heldOut is a reader's evaluation on a held-out file (nil: none asked).
type heldOut struct {
	path      string
	questions int
	episodes  int
	ev        reader.Evaluation
}

// heldOutEval evaluates rd on data, the questions of the trajectory file
// path (nothing when data is nil).
func heldOutEval(rd reader.Reader, path string, data *calibData) (*heldOut, error) {
	if data == nil {
		return nil, nil
	}
	ev, err := reader.Evaluate(rd, data.states, data.qs)
	if err != nil {
		return nil, err
	}
	return &heldOut{path: path, questions: len(data.qs), episodes: len(data.eps), ev: ev}, nil
}

// print prints the evaluation and adds it to the JSON summary.
func (h *heldOut) print(w io.Writer, sum map[string]any) {
	if h == nil {
		return
	}
	printEvaluation(w, fmt.Sprintf("held-out %s (%d questions, %d episodes)", h.path, h.questions, h.episodes), h.ev)
	sum["held_out"] = map[string]any{"eval": h.path, "questions": h.questions, "episodes": h.episodes, "evaluation": evaluationJSON(h.ev)}
}

// loadReaderFile reads a reader file, or the reader of a model bundle.
func loadReaderFile(path string) (reader.Builtin, error) {
	if !model.IsFile(path) {
		return reader.Load(path)
	}
	b, err := model.Load(path)
	if err != nil {
		return nil, err
	}
	if b.Reader == nil {
		return nil, fmt.Errorf("%s: the bundle has no reader (run fit --stage reader)", path)
	}
	return b.Reader, nil
}

// cellsQuantizer checks that q keeps the cells encoder's groups apart: the
// paper's shape, 16 dims a subspace, and no rotation (a rotation mixes the
// cells of a slot, and the text reader would decode noise).
func cellsQuantizer(q *opq.Quantizer, bundle string) error {
	sh, info := q.Shape(), q.Info()
	if sh.Slots != screen.Slots || sh.Dim != screen.Dim || q.SubDim() != screen.GroupDim {
		return usagef("the text reader reads %dx%d states of the cells encoder through %d-dim subspaces; %s's quantizer has %dx%d states and %d-dim subspaces",
			screen.Slots, screen.Dim, screen.GroupDim, bundle, sh.Slots, sh.Dim, q.SubDim())
	}
	if info.Rotation != opq.NoRotation || info.Rounds > 0 {
		return usagef("%s's quantizer rotates its states (%s rotation, %d OPQ rounds), which mixes the cells of a slot: the text reader needs one fitted with 'fit opq --rotation none'",
			bundle, info.Rotation, info.Rounds)
	}
	return nil
}
