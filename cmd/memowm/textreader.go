package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/memowm/memowm/model"
	"github.com/memowm/memowm/reader"
	"github.com/memowm/memowm/screen"
)

// parseScreen reads a screen size "WxH".
func parseScreen(s string) (w, h int, err error) {
	var rest string
	if n, _ := fmt.Sscanf(s, "%dx%d%s", &w, &h, &rest); n != 2 || w < 1 || h < 1 {
		return 0, 0, usagef("--screen %q: want columns x rows, e.g. 80x24", s)
	}
	return w, h, nil
}

// fitTextReader is 'fit --stage reader --text': trains the text reader on
// data (complete quantised states of the cells encoder) and stores it in b.
func fitTextReader(b *model.Bundle, data *calibData, sf *stageFlags, size, evalPath string, epochs int, seed uint64, fs *flag.FlagSet, stdout, stderr io.Writer) error {
	w, h, err := parseScreen(size)
	if err != nil {
		return err
	}
	cfg := reader.DefaultTextConfig()
	if cfg.Layout, err = screen.NewCellLayout(w, h); err != nil {
		return usagef("--screen %s: %v", size, err)
	}
	if sh := b.OPQ.Shape(); sh.Slots != screen.Slots || sh.Dim != screen.Dim {
		return usagef("the text reader reads %dx%d states of the cells encoder; %s's quantizer has %dx%d", screen.Slots, screen.Dim, *sf.bundle, sh.Slots, sh.Dim)
	}
	cfg.Seed = seed
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "epochs" {
			cfg.Epochs = epochs
		}
	})
	tr, rep, err := reader.TrainText(data.states, data.qs, cfg, func(p reader.TrainProgress) {
		if !*sf.quiet {
			fmt.Fprintf(stderr, "fit reader: epoch %d/%d: train %.3f bits, validation %.3f bits, accuracy %.1f%% (%.1f s)\n",
				p.Epoch, p.Epochs, p.TrainBits, p.ValBits, 100*p.ValAccuracy, p.Elapsed.Seconds())
		}
	})
	if err != nil {
		return err
	}
	b.Reader = tr
	held, err := heldOutEval(b, tr, evalPath)
	if err != nil {
		return err
	}
	if err := b.Save(*sf.out); err != nil {
		return err
	}
	text := sf.text(stdout)
	fmt.Fprintf(text, "reader: text reader %s for %dx%d screens (%d weights), trained on %d questions (%d episodes) in %.1f s, best epoch %d of %d\n",
		tr.Name(), w, h, rep.Params, rep.TrainQuestions, rep.TrainEpisodes, rep.Duration.Seconds(), rep.BestEpoch, rep.Epochs)
	printEvaluation(text, fmt.Sprintf("validation (%d questions, %d episodes)", rep.ValQuestions, rep.ValEpisodes), rep.Val)
	sum := map[string]any{"stage": "reader", "reader": tr.Name(), "kind": "text", "screen": size, "params": rep.Params,
		"train_questions": rep.TrainQuestions, "train_episodes": rep.TrainEpisodes, "seconds": rep.Duration.Seconds(),
		"best_epoch": rep.BestEpoch, "epochs": rep.Epochs, "validation_questions": rep.ValQuestions,
		"validation_episodes": rep.ValEpisodes, "validation": evaluationJSON(rep.Val)}
	held.print(text, sum)
	return sf.finish(stdout, b, sum)
}

// heldOut is a reader's evaluation on a held-out file (nil: none asked).
type heldOut struct {
	path      string
	questions int
	episodes  int
	ev        reader.Evaluation
}

// heldOutEval evaluates rd on the questions of the trajectory file at path
// (nothing when path is empty), read through b's quantizer.
func heldOutEval(b *model.Bundle, rd reader.Reader, path string) (*heldOut, error) {
	if path == "" {
		return nil, nil
	}
	data, err := loadCalib(b, path)
	if err != nil {
		return nil, err
	}
	if len(data.qs) == 0 {
		return nil, fmt.Errorf("--eval %s: no questions to evaluate on", path)
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
	sum["held_out"] = map[string]any{"file": h.path, "questions": h.questions, "episodes": h.episodes, "evaluation": evaluationJSON(h.ev)}
}
