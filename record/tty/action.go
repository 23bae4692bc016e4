package tty

import (
	"fmt"
	"strings"
)

// Action kinds, the memowm action kinds a terminal recording uses.
const (
	KindKey        = "key"         // one key: Key is a character ("h") or a named key ("Escape")
	KindType       = "type"        // literal text: Text
	KindPressEnter = "press-enter" // the Enter key
)

// MaxText is the most bytes of an action's Text (the recording format's limit).
const MaxText = 40

// Action is one input to the program: a key, literal text or Enter.
type Action struct {
	Kind string
	Key  string // for KindKey
	Text string // for KindType
}

// Key returns the action that presses key k: a single character or a name
// from NamedKeys.
func Key(k string) Action { return Action{Kind: KindKey, Key: k} }

// Type returns the action that types text literally.
func Type(text string) Action { return Action{Kind: KindType, Text: text} }

// Enter returns the action that presses Enter.
func Enter() Action { return Action{Kind: KindPressEnter} }

// namedKeys maps the key names actions use (DOM KeyboardEvent.key names where
// there is one, "Space" for the space bar, "Ctrl+x" for control keys) to
// tmux's key names.
var namedKeys = map[string]string{
	"Escape":     "Escape",
	"Space":      "Space",
	"Tab":        "Tab",
	"Backspace":  "BSpace",
	"ArrowUp":    "Up",
	"ArrowDown":  "Down",
	"ArrowLeft":  "Left",
	"ArrowRight": "Right",
	"Home":       "Home",
	"End":        "End",
	"PageUp":     "PPage",
	"PageDown":   "NPage",
	"Delete":     "DC",
}

// NamedKeys returns the named keys an Action may press besides single
// characters and Ctrl+a .. Ctrl+z.
func NamedKeys() []string {
	out := make([]string, 0, len(namedKeys))
	for k := range namedKeys {
		out = append(out, k)
	}
	return out
}

// String is the action as a short human-readable token.
func (a Action) String() string {
	switch a.Kind {
	case KindKey:
		return a.Key
	case KindType:
		return fmt.Sprintf("%q", a.Text)
	case KindPressEnter:
		return "Enter"
	}
	return a.Kind
}

// Check reports whether a is a valid action.
func (a Action) Check() error {
	switch a.Kind {
	case KindKey:
		if _, err := a.sendArgs(); err != nil {
			return err
		}
	case KindType:
		if a.Text == "" || len(a.Text) > MaxText {
			return fmt.Errorf("record tty: typed text must be 1..%d bytes, got %d", MaxText, len(a.Text))
		}
	case KindPressEnter:
	default:
		return fmt.Errorf("record tty: unknown action kind %q", a.Kind)
	}
	return nil
}

// sendArgs returns the arguments of tmux send-keys (after -t TARGET) that
// perform a.
func (a Action) sendArgs() ([]string, error) {
	switch a.Kind {
	case KindPressEnter:
		return []string{"Enter"}, nil
	case KindType:
		return []string{"-l", "--", escapeSemicolon(a.Text)}, nil
	case KindKey:
		k := a.Key
		if t, ok := namedKeys[k]; ok {
			return []string{t}, nil
		}
		if c, ok := strings.CutPrefix(k, "Ctrl+"); ok && len(c) == 1 && c[0] >= 'a' && c[0] <= 'z' {
			return []string{"C-" + c}, nil
		}
		if len([]rune(k)) == 1 && k >= " " {
			return []string{"-l", "--", escapeSemicolon(k)}, nil
		}
		return nil, fmt.Errorf("record tty: unknown key %q", k)
	}
	return nil, fmt.Errorf("record tty: unknown action kind %q", a.Kind)
}

// escapeSemicolon protects a trailing ";", which tmux's command line reads as
// a command separator.
func escapeSemicolon(s string) string {
	if strings.HasSuffix(s, ";") {
		return s[:len(s)-1] + `\;`
	}
	return s
}
