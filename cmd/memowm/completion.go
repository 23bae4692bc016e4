package main

import (
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
)

// runCompletion prints a completion script for bash or zsh: verbs, then
// each verb's flags (taken from the verbs' own flag sets, so the script
// never lists a flag that does not exist).
func runCompletion(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("completion", "bash|zsh", "Prints a shell completion script. Install it with\n"+
		"  memowm completion bash > /etc/bash_completion.d/memowm   (or: source <(memowm completion bash))\n"+
		"  memowm completion zsh > \"${fpath[1]}/_memowm\"", stdout)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || pos[0] != "bash" && pos[0] != "zsh" {
		return usagef("want bash or zsh")
	}
	names, flags := completionWords()
	var cases, subCases strings.Builder
	for _, n := range names {
		fmt.Fprintf(&cases, "    %s) flags=%q ;;\n", n, strings.Join(flags[n], " "))
		if subs := subVerbs[n]; subs != nil {
			fmt.Fprintf(&subCases, "      %s) COMPREPLY=($(compgen -W %q -- \"$cur\")); return ;;\n", n, strings.Join(subs, " "))
		}
	}
	script := fmt.Sprintf(`# memowm completion for bash (memowm completion bash)
_memowm() {
  local cur verb flags
  cur="${COMP_WORDS[COMP_CWORD]}"
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W %q -- "$cur"))
    return
  fi
  verb="${COMP_WORDS[1]}"
  if [ "${COMP_WORDS[COMP_CWORD-1]}" = "--stage" ]; then
    COMPREPLY=($(compgen -W %q -- "$cur"))
    return
  fi
  if [ "$COMP_CWORD" -eq 2 ] && [[ "$cur" != -* ]]; then
    case "$verb" in
%s    esac
  fi
  case "$verb" in
%s    *) flags="" ;;
  esac
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$flags" -- "$cur"))
  else
    COMPREPLY=($(compgen -f -- "$cur"))
  fi
}
complete -o filenames -F _memowm memowm
`, strings.Join(names, " "), strings.Join(fitStages, " "), subCases.String(), cases.String())
	if pos[0] == "zsh" {
		script = "#compdef memowm\n# memowm completion for zsh (memowm completion zsh), through bash's\nautoload -U +X bashcompinit && bashcompinit\n" + script
	}
	_, err = io.WriteString(stdout, script)
	return err
}

// subVerbs are the sub-verbs of the verbs that have them and list their
// flags under each sub-verb's -h: the script completes the sub-verb, and a
// verb's flags are those of all its sub-verbs.
var subVerbs = map[string][]string{"weights": weightsSubVerbs, "record": {"web", "tty"}, "model": {"info", "init", "int8"}, "fit": {"opq"}, "gpu": gpuSubVerbs}

// fitStages are the values of fit's --stage, whose flags fit's completion
// lists besides those of a whole bundle's fit.
var fitStages = []string{"opq", "wm", "reader", "risk", "lambda", "all"}

// helpVariants are the argument prefixes whose -h lists a verb's flags:
// each sub-verb, and each of fit's stages.
func helpVariants(verb string) [][]string {
	var out [][]string
	for _, sub := range subVerbs[verb] {
		out = append(out, []string{sub})
	}
	if verb == "fit" {
		for _, st := range fitStages {
			out = append(out, []string{"--stage", st})
		}
	}
	return out
}

// helpSeen, when set, receives every flag set whose -h is parsed
// (completionWords reads the verbs' flags that way).
var helpSeen func(fs *flag.FlagSet)

// completionWords returns the verbs and each verb's flags (--name), read
// from the flag set each verb's -h parses (into a discarded writer).
func completionWords() ([]string, map[string][]string) {
	flags := map[string][]string{}
	var names []string
	for _, v := range verbs {
		names = append(names, v.name)
		set := map[string]bool{}
		helpSeen = func(fs *flag.FlagSet) { fs.VisitAll(func(f *flag.Flag) { set["--"+f.Name] = true }) }
		v.run([]string{"-h"}, io.Discard, io.Discard)
		for _, pre := range helpVariants(v.name) {
			v.run(append(pre, "-h"), io.Discard, io.Discard)
		}
		helpSeen = nil
		if v.name == "fit" {
			set["--stage"] = true
		}
		for f := range set {
			flags[v.name] = append(flags[v.name], f)
		}
		sort.Strings(flags[v.name])
	}
	return names, flags
}
