package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"time"
)

func init() {
	register(command{name: "completion", summary: "print a shell completion script: allot completion bash|zsh|fish", run: runCompletion})
}

// completionSkip are verbs whose flags completion does not ask for: the
// executor runs at once whatever its arguments, the container launcher
// reads a spec it is handed, and completion is here.
var completionSkip = map[string]bool{"executor": true, "container-launch": true, "completion": true}

// subverbs are the second words of the verbs that take one.
var subverbs = map[string][]string{
	"operator":   {"raft", "snapshot", "policy", "sorter"},
	"completion": {"bash", "zsh", "fish"},
}

func runCompletion(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("completion", "bash|zsh|fish", "Print a completion script for the shell, for verbs and their flags. Load it with\n  bash: source <(allot completion bash)       (or save it in /etc/bash_completion.d/allot)\n  zsh:  source <(allot completion zsh)        (or save it as _allot in a directory of $fpath)\n  fish: allot completion fish | source        (or save it in ~/.config/fish/completions/allot.fish)", stderr)
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("usage: allot completion bash|zsh|fish")
	}
	verbs := completionVerbs()
	switch pos[0] {
	case "bash":
		return writeBash(stdout, verbs)
	case "zsh":
		return writeZsh(stdout, verbs)
	case "fish":
		return writeFish(stdout, verbs)
	}
	return usagef("unknown shell %q: want bash, zsh or fish", pos[0])
}

// completionVerb is what a script completes for one verb.
type completionVerb struct {
	name, summary string
	flags         []string // without dashes
	sub           []string
}

func completionVerbs() []completionVerb {
	var out []completionVerb
	for _, n := range commandNames() {
		v := completionVerb{name: n, summary: commands[n].summary, sub: subverbs[n]}
		if !completionSkip[n] {
			v.flags = verbFlags(commands[n])
		}
		out = append(out, v)
	}
	return out
}

// verbFlags asks a verb for its --help and reads the flag names from it
// (flag.PrintDefaults writes each as "  -name ..."). A verb that does not
// answer at once has none listed.
func verbFlags(c command) []string {
	var buf bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.run([]string{"--help"}, io.Discard, &buf)
	}()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		return nil
	}
	var flags []string
	for _, line := range strings.Split(buf.String(), "\n") {
		if rest, ok := strings.CutPrefix(line, "  -"); ok {
			if f := strings.Fields(rest); len(f) > 0 {
				flags = append(flags, f[0])
			}
		}
	}
	return flags
}

func dashed(flags []string) string {
	out := make([]string, len(flags))
	for i, f := range flags {
		out[i] = "--" + f
	}
	return strings.Join(out, " ")
}

func writeBash(w io.Writer, verbs []completionVerb) error {
	var names, cases strings.Builder
	for _, v := range verbs {
		names.WriteString(v.name + " ")
		fmt.Fprintf(&cases, "    %s) flags=%q; sub=%q ;;\n", v.name, dashed(v.flags), strings.Join(v.sub, " "))
	}
	_, err := fmt.Fprintf(w, `# bash completion for allot (allot completion bash)
_allot() {
  local cur=${COMP_WORDS[COMP_CWORD]} flags="" sub=""
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W %q -- "$cur"))
    return
  fi
  case ${COMP_WORDS[1]} in
%s  esac
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$flags" -- "$cur"))
  elif [ "$COMP_CWORD" -eq 2 ] && [ -n "$sub" ]; then
    COMPREPLY=($(compgen -W "$sub" -- "$cur"))
  fi
}
complete -o default -F _allot allot
`, strings.TrimSpace(names.String()), cases.String())
	return err
}

func writeZsh(w io.Writer, verbs []completionVerb) error {
	var names, cases strings.Builder
	for _, v := range verbs {
		fmt.Fprintf(&names, "    %s\n", zshQuote(v.name+":"+v.summary))
		fmt.Fprintf(&cases, "    %s) flags=(%s); sub=(%s) ;;\n", v.name, dashed(v.flags), strings.Join(v.sub, " "))
	}
	_, err := fmt.Fprintf(w, `#compdef allot
# zsh completion for allot (allot completion zsh)
_allot() {
  local -a verbs flags sub
  verbs=(
%s  )
  if (( CURRENT == 2 )); then
    _describe 'allot command' verbs
    return
  fi
  case $words[2] in
%s  esac
  if [[ $PREFIX == -* ]]; then
    compadd -- $flags
  elif (( CURRENT == 3 )) && (( $#sub )); then
    compadd -- $sub
  else
    _files
  fi
}
if [ "$funcstack[1]" = "_allot" ]; then
  _allot "$@"
else
  compdef _allot allot
fi
`, names.String(), cases.String())
	return err
}

// zshQuote single-quotes s for zsh, and escapes the colons _describe
// would read as the end of the name.
func zshQuote(s string) string {
	name, desc, _ := strings.Cut(s, ":")
	return "'" + strings.ReplaceAll(name+":"+strings.ReplaceAll(desc, ":", `\:`), "'", `'\''`) + "'"
}

func writeFish(w io.Writer, verbs []completionVerb) error {
	var b strings.Builder
	b.WriteString("# fish completion for allot (allot completion fish)\ncomplete -c allot -f\n")
	for _, v := range verbs {
		fmt.Fprintf(&b, "complete -c allot -n __fish_use_subcommand -a %s -d %s\n", v.name, fishQuote(v.summary))
		for _, s := range v.sub {
			fmt.Fprintf(&b, "complete -c allot -n '__fish_seen_subcommand_from %s' -a %s\n", v.name, s)
		}
		for _, f := range v.flags {
			fmt.Fprintf(&b, "complete -c allot -n '__fish_seen_subcommand_from %s' -l %s -F\n", v.name, f)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// fishQuote single-quotes s for fish (which escapes only \ and ').
func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}
