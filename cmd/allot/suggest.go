package main

import (
	"fmt"
	"sort"
)

// unknownCommand is the one line a mistyped verb gets: the nearest verb
// when one is close enough to be a typo, else where the list is. The full
// usage would bury the answer.
func unknownCommand(name string) string {
	if s := suggestCommand(name); s != "" {
		return fmt.Sprintf("allot: unknown command %s; did you mean %s?", name, s)
	}
	return fmt.Sprintf("allot: unknown command %s (allot help lists the commands)", name)
}

// suggestCommand is the registered verb nearest name, if it is a typo's
// distance away: at most 2 edits, and fewer than half of name's letters
// (so "x" suggests nothing), or name is a prefix of exactly one verb.
func suggestCommand(name string) string {
	names := commandNames()
	best, bestD := "", -1
	var prefixed []string
	for _, n := range names {
		if len(name) >= 2 && len(n) > len(name) && n[:len(name)] == name {
			prefixed = append(prefixed, n)
		}
		if d := editDistance(name, n); bestD < 0 || d < bestD {
			best, bestD = n, d
		}
	}
	if bestD >= 0 && bestD <= 2 && 2*bestD < len(name) {
		return best
	}
	if len(prefixed) == 1 {
		return prefixed[0]
	}
	return ""
}

// commandNames lists the registered verbs, sorted.
func commandNames() []string {
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
