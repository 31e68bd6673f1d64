package shortid

import (
	"fmt"
	"sort"
	"strings"
)

// MinLen is the shortest short form: long enough to read as an id and to
// stay unique as more frameworks and agents come.
const MinLen = 8

// Short is id's shortest suffix of at least MinLen characters that no other
// id of all ends with (all may include id itself). An id of at most
// 2*MinLen characters (a name a framework chose, "web-1", "uipg-alpha") is
// shown whole: cutting a few characters off it saves nothing and hides
// the part a person reads. An id no suffix of which is unique (one id is
// the end of another) is returned whole too.
func Short(id string, all []string) string {
	if len(id) <= 2*MinLen {
		return id
	}
	for n := MinLen; n < len(id); n++ {
		suf := id[len(id)-n:]
		unique := true
		for _, o := range all {
			if o != id && strings.HasSuffix(o, suf) {
				unique = false
				break
			}
		}
		if unique {
			return suf
		}
	}
	return id
}

// Resolve finds the id of known that s names: the id itself, else the one
// id s is a suffix of (a short form), else the one id s is a prefix of. An
// ambiguous s is an error that lists the candidates; kind ("task",
// "agent") names what was looked for. ok is false, with a nil error, when
// nothing matches, so that the caller can suggest the closest id itself.
func Resolve(kind, s string, known []string) (id string, ok bool, err error) {
	if s == "" {
		return "", false, fmt.Errorf("empty %s id", kind)
	}
	var suffixed, prefixed []string
	for _, k := range known {
		if k == s {
			return k, true, nil
		}
		if strings.HasSuffix(k, s) {
			suffixed = append(suffixed, k)
		}
		if strings.HasPrefix(k, s) {
			prefixed = append(prefixed, k)
		}
	}
	for _, cands := range [][]string{suffixed, prefixed} {
		switch len(cands) {
		case 0:
			continue
		case 1:
			return cands[0], true, nil
		default:
			sort.Strings(cands)
			return "", false, fmt.Errorf("%s %q is ambiguous: it could be %s", kind, s, strings.Join(cands, ", "))
		}
	}
	return "", false, nil
}
