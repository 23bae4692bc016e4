package tty

import (
	"slices"
	"strings"
	"testing"
)

func TestSendArgs(t *testing.T) {
	for _, c := range []struct {
		a    Action
		want []string
	}{
		{Key("h"), []string{"-l", "--", "h"}},
		{Key(">"), []string{"-l", "--", ">"}},
		{Key(";"), []string{"-l", "--", `\;`}},
		{Key("-"), []string{"-l", "--", "-"}},
		{Key("Escape"), []string{"Escape"}},
		{Key("Space"), []string{"Space"}},
		{Key("ArrowUp"), []string{"Up"}},
		{Key("Backspace"), []string{"BSpace"}},
		{Key("Ctrl+r"), []string{"C-r"}},
		{Type("hello world "), []string{"-l", "--", "hello world "}},
		{Type("a;"), []string{"-l", "--", `a\;`}},
		{Enter(), []string{"Enter"}},
	} {
		got, err := c.a.sendArgs()
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%v: got %q, %v; want %q", c.a, got, err, c.want)
		}
		if err := c.a.Check(); err != nil {
			t.Errorf("%v: Check: %v", c.a, err)
		}
	}
}

func TestActionCheck(t *testing.T) {
	for _, a := range []Action{
		Key(""), Key("hj"), Key("Ctrl+1"), Key("Bogus"), Key("\x01"),
		Type(""), Type(strings.Repeat("x", MaxText+1)),
		{Kind: "click"},
	} {
		if err := a.Check(); err == nil || !strings.HasPrefix(err.Error(), "record tty: ") {
			t.Errorf("%+v: Check = %v, want a record tty error", a, err)
		}
	}
	for _, k := range NamedKeys() {
		if err := Key(k).Check(); err != nil {
			t.Errorf("named key %s: %v", k, err)
		}
	}
}
