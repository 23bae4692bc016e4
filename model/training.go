package model

import (
	"errors"
	"fmt"
	"strings"

	"github.com/memowm/memowm/worldmodel"
)

// Training records how far a bundle's world model was trained, so that a
// half-trained model is never taken for a trained one. It is stored in the
// bundle's JSON header ("training"); bundles written before it have none
// (Bundle.Training is nil) and keep their bytes and hash. Its time and host
// are not in the header but in the provenance sidecar (see Seconds).
type Training struct {
	// Steps is the number of optimizer steps the weights have had (0: the
	// random initialisation).
	Steps int `json:"steps"`
	// TargetSteps is the number of steps the run was configured for (after
	// a resume, the resumed run's target).
	TargetSteps int `json:"target_steps"`
	// Interrupted is set when the run stopped before it finished (a signal,
	// an error): the weights are a snapshot of an unfinished run.
	Interrupted bool `json:"interrupted,omitempty"`
	// StoppedEarly is set when the run kept the weights of its best
	// held-out evaluation, at Steps, before its target: it stopped on a
	// plateau of the held-out loss (or its last steps did worse). Such a
	// run is finished.
	StoppedEarly bool `json:"stopped_early,omitempty"`
	// RanSteps is the number of steps the run took when it differs from
	// Steps (a run that stopped early kept an earlier step's weights).
	RanSteps int `json:"ran_steps,omitempty"`
	// Imported is the SHA-256 (hex) of the safetensors file the weights
	// were imported from ('memowm weights import'): trained elsewhere, how
	// far is not memowm's to say; such weights count as finished.
	Imported string `json:"imported,omitempty"`
	// PriorSteps is the number of optimizer steps the weights had before
	// this run, from earlier runs it continued ('memowm fit --stage wm
	// --model B' starts from B's trained world model with a fresh optimizer
	// and schedule): the weights have had PriorSteps + Steps steps in all.
	PriorSteps int `json:"prior_steps,omitempty"`
	// Init names how the first run's weights were initialised: "" for the
	// preset's fan-in draw, worldmodel.InitScaledResidual for 'fit
	// --scaled-init'. A run that continues a bundle keeps its record.
	Init string `json:"init,omitempty"`
	// LR is the peak learning rate of the run this record describes (0:
	// not recorded, as in bundles written before it was, and in imported
	// ones). A run that continues a bundle records its own rate.
	LR float64 `json:"lr,omitempty"`
	// Seconds is the wall-clock time this run spent training (steps,
	// held-out evaluations, checkpoints; over its resumes), and
	// PriorSeconds that of the earlier runs it continued when they all
	// recorded theirs. 0: not recorded (bundles written before, imported
	// weights, an earlier run without the record, a bundle read from a
	// stream or without its sidecar). They are not part of the bundle's
	// bytes: Save writes them to the provenance sidecar (ProvenancePath)
	// and Load reads them back. Bundles written before the sidecar hold
	// them in their header, and keep them there.
	Seconds      float64 `json:"seconds,omitempty"`
	PriorSeconds float64 `json:"prior_seconds,omitempty"`
	// Host is the name of the machine that ran (the end of) the run, kept
	// in the provenance sidecar like Seconds ("": not recorded).
	Host string `json:"-"`
}

// TotalSeconds is the wall-clock training time of the weights over this run
// and the earlier ones it continued, and whether it is known (every run
// recorded its time).
func (t *Training) TotalSeconds() (float64, bool) {
	if t == nil || t.Seconds <= 0 || t.PriorSteps > 0 && t.PriorSeconds <= 0 {
		return 0, false
	}
	return t.Seconds + t.PriorSeconds, true
}

// TotalSteps is the number of optimizer steps the weights have had in all,
// over this run and the earlier ones it continued (0 for nil or imported).
func (t *Training) TotalSteps() int {
	if t == nil {
		return 0
	}
	return t.PriorSteps + t.Steps
}

// Errors of CheckTrained.
var (
	// ErrUntrained: the bundle records that its world model is not fully
	// trained (random initialisation, an interrupted run, fewer steps than
	// its target).
	ErrUntrained = errors.New("model: the world model is not fully trained")
	// ErrTrainingUnknown: the bundle does not record its training (written
	// before bundles did).
	ErrTrainingUnknown = errors.New("model: the bundle does not record how far its world model was trained")
)

// Complete reports whether t records a finished run: at least one step, all
// of its target or stopped early on its held-out loss, not interrupted. A
// nil Training is not complete.
func (t *Training) Complete() bool {
	return t != nil && (t.Imported != "" || !t.Interrupted && (t.Steps > 0 || t.keptStart()) && (t.Steps >= t.TargetSteps || t.StoppedEarly))
}

// keptStart reports whether the run continued trained weights and ended
// holding them: no held-out evaluation of the run beat its starting point.
func (t *Training) keptStart() bool {
	return t.StoppedEarly && t.Steps == 0 && t.PriorSteps > 0
}

// EndedEarly reports whether the run stopped on its held-out plateau before
// its target steps. StoppedEarly alone also holds for a run that ran them
// all and kept an earlier evaluation's weights.
func (t *Training) EndedEarly() bool {
	return t != nil && t.StoppedEarly && t.RanSteps < t.TargetSteps
}

func (t *Training) String() string {
	s := t.run()
	if t != nil && t.PriorSteps > 0 {
		s += fmt.Sprintf(", after %d steps of earlier runs (%d in all)", t.PriorSteps, t.TotalSteps())
	}
	if t != nil && t.Init != "" {
		s += fmt.Sprintf(", from the %s initialisation", t.Init)
	}
	return s
}

// run describes this run alone.
func (t *Training) run() string {
	switch {
	case t == nil:
		return "training not recorded"
	case t.Imported != "":
		return fmt.Sprintf("imported from safetensors sha256 %.12s (trained elsewhere)", t.Imported)
	case t.keptStart():
		return fmt.Sprintf("kept its starting weights: no held-out evaluation beat them (ran %d of %d steps)", t.RanSteps, t.TargetSteps)
	case t.Steps == 0 && !t.Interrupted:
		return "untrained (random initialisation)"
	case t.Interrupted && t.Steps < t.TargetSteps:
		return fmt.Sprintf("interrupted at step %d of %d (partly trained)", t.Steps, t.TargetSteps)
	case t.Interrupted:
		return fmt.Sprintf("interrupted at step %d of %d", t.Steps, t.TargetSteps)
	case t.EndedEarly():
		return fmt.Sprintf("stopped early: the weights of step %d (best held-out loss; ran %d of %d steps)", t.Steps, max(t.RanSteps, t.Steps), t.TargetSteps)
	case t.StoppedEarly:
		// The whole schedule ran; its last evaluations did worse.
		return fmt.Sprintf("trained %d steps, keeping the weights of step %d (best held-out loss)", t.RanSteps, t.Steps)
	case t.Steps < t.TargetSteps:
		return fmt.Sprintf("trained %d of %d steps (partly trained)", t.Steps, t.TargetSteps)
	}
	return fmt.Sprintf("trained %d of %d steps", t.Steps, t.TargetSteps)
}

// check reports whether a recorded Training is well formed.
func (t *Training) check() error {
	if t == nil {
		return nil
	}
	if t.Steps < 0 || t.TargetSteps < 0 || t.PriorSteps < 0 || t.Steps > t.TargetSteps || t.RanSteps < 0 || t.RanSteps > t.TargetSteps || (t.RanSteps > 0 && t.RanSteps < t.Steps) {
		return fmt.Errorf("model: training of %d steps (%d run) of a %d-step run is impossible", t.Steps, t.RanSteps, t.TargetSteps)
	}
	if t.Imported != "" && (len(t.Imported) != 64 || strings.Trim(t.Imported, "0123456789abcdef") != "" || t.Steps != 0 || t.TargetSteps != 0 || t.PriorSteps != 0 || t.Interrupted || t.StoppedEarly || t.Init != "" || t.LR != 0 || t.Seconds != 0 || t.PriorSeconds != 0) {
		return fmt.Errorf("model: an imported training record holds a SHA-256 in hex and nothing else")
	}
	if !(t.Seconds >= 0 && t.Seconds < 1e12 && t.PriorSeconds >= 0 && t.PriorSeconds < 1e12) || t.PriorSeconds > 0 && t.PriorSteps == 0 {
		return fmt.Errorf("model: a training run of %g s after %g s of %d earlier steps is impossible", t.Seconds, t.PriorSeconds, t.PriorSteps)
	}
	if len(t.Host) > 255 || t.Imported != "" && t.Host != "" {
		return fmt.Errorf("model: a training record names host %.40q", t.Host)
	}
	if !(t.LR >= 0 && t.LR < 1) {
		return fmt.Errorf("model: a training run at peak learning rate %g is impossible", t.LR)
	}
	if !worldmodel.KnownInit(t.Init) {
		return fmt.Errorf("model: initialisation %q is not one this build knows", t.Init)
	}
	if t.StoppedEarly && (t.Interrupted || t.Steps == 0 && (t.PriorSteps == 0 || t.RanSteps == 0)) {
		return fmt.Errorf("model: a training run recorded as stopped early must have steps (or continue earlier ones) and not be interrupted")
	}
	return nil
}

// CheckTrained returns nil when b records a finished training run; an error
// wrapping ErrUntrained that says how far it went when the run did not
// finish (or never started); and one wrapping ErrTrainingUnknown when b does
// not record its training.
func (b *Bundle) CheckTrained() error {
	switch {
	case b.Training == nil:
		return ErrTrainingUnknown
	case !b.Training.Complete():
		return fmt.Errorf("%w: %v", ErrUntrained, b.Training)
	}
	return nil
}
