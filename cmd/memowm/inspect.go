package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/memowm/memowm/codec"
	"github.com/memowm/memowm/model"
	"github.com/memowm/memowm/opq"
	"github.com/memowm/memowm/trajectory"
)

func runInspect(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("inspect", "FILE [--json]",
		"Reads a trajectory file (.arrow, .parquet, or a .npy export) once, streaming,\n"+
			"validates it and shows what it holds; or shows how a quantizer file (from\n"+
			"'memowm fit opq') was fit.", stdout)
	asJSON := fs.Bool("json", false, "print one JSON object for machines")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want exactly one FILE, got %d arguments", len(pos))
	}
	switch {
	case opq.IsFile(pos[0]):
		return inspectOPQ(pos[0], *asJSON, stdout)
	case codec.IsFile(pos[0]):
		return inspectMemory(pos[0], *asJSON, stdout)
	case model.IsFile(pos[0]):
		return inspectBundle(pos[0], *asJSON, stdout)
	}
	if err := notByMagic(pos[0]); err != nil {
		return err
	}
	sum, err := trajectory.Summarize(pos[0], trajOpts()...)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(sum)
	}
	printSummary(stdout, sum)
	return nil
}

func printSummary(w io.Writer, s *trajectory.Summary) {
	fmt.Fprintf(w, "file          %s (%s, %s)\n", s.Path, s.Format, humanBytes(s.SizeBytes))
	if s.Content == trajectory.States.String() {
		fmt.Fprintf(w, "content       states, %d slots x %d float32\n", s.Shape.Slots, s.Shape.Dim)
	} else {
		fmt.Fprintf(w, "content       codes, %d uint8 per observation\n", s.Shape.Codes)
	}
	fmt.Fprintf(w, "episodes      %d\n", s.Episodes)
	fmt.Fprintf(w, "observations  %d (%d transitions; %d..%d per episode)\n", s.Observations, s.Transitions, s.MinObs, s.MaxObs)
	if s.Checksummed {
		fmt.Fprintf(w, "checksums     every episode matches its writer's CRC-32C\n")
	} else {
		fmt.Fprintf(w, "checksums     none: damage that still decodes cannot be detected (written by another tool or an older memowm)\n")
	}
	if s.Format == trajectory.NumPy.String() && !s.NPYActions {
		fmt.Fprintf(w, "actions       none (%s is missing: an export from before memowm wrote it)\n", filepath.Base(trajectory.ActionsPath(s.Path)))
		return
	}
	if s.Format == trajectory.NumPy.String() {
		fmt.Fprintf(w, "actions       in %s (episode, step, type, has_pos, x, y, has_delta, dx, dy, payload length, payload bytes: float64)\n", filepath.Base(trajectory.ActionsPath(s.Path)))
		printActionMix(w, s)
		return
	}
	fmt.Fprintf(w, "facts         %d observations\n", s.WithFacts)
	if s.Questions >= 0 {
		fmt.Fprintf(w, "questions     %d (%s)\n", s.Questions, trajectory.QuestionsPath(s.Path))
	} else {
		fmt.Fprintf(w, "questions     none\n")
	}
	printActionMix(w, s)
}

func printActionMix(w io.Writer, s *trajectory.Summary) {
	var parts []string
	for _, name := range trajectory.ActionTypeNames() {
		if n := s.Actions[name]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d (%.1f%%)", name, n, 100*float64(n)/float64(max(s.Transitions, 1))))
		}
	}
	fmt.Fprintf(w, "action mix    %s\n", wrap(parts, 14, 88))
}

// wrap joins parts with ", " into lines of at most width, indenting
// continuation lines by indent spaces.
func wrap(parts []string, indent, width int) string {
	var b strings.Builder
	col := indent
	for i, p := range parts {
		if i > 0 {
			b.WriteString(",")
			col++
			if col+1+len(p) > width {
				b.WriteString("\n" + strings.Repeat(" ", indent))
				col = indent
			} else {
				b.WriteString(" ")
				col++
			}
		}
		b.WriteString(p)
		col += len(p)
	}
	if len(parts) == 0 {
		return "none"
	}
	return b.String()
}

// notByMagic explains a file named like one of memowm's own formats (.mwm,
// .mwb, .opq) that does not start with that format's magic: empty, cut
// short, damaged at its start, or not written by memowm.
func notByMagic(path string) error {
	what := map[string]string{".mwm": "a memory file", ".mwb": "a model bundle", ".opq": "a quantizer file"}[strings.ToLower(filepath.Ext(path))]
	if what == "" {
		return nil
	}
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if st.Size() == 0 {
		return fmt.Errorf("%s is named like %s but is empty (0 bytes)", path, what)
	}
	return fmt.Errorf("%s is named like %s but does not start with its magic bytes (%s): damaged at its start, or not written by memowm", path, what, humanBytes(st.Size()))
}
