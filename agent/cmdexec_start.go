package agent

import (
	"fmt"
	"os"
)

// startFailure is a command task's message when its command could not
// start. exec reports a missing working directory as the program failing
// to start ("fork/exec /bin/sh: no such file or directory"), which sends
// the reader looking for /bin/sh; so the message names the sandbox, and
// says so when the sandbox is what is missing (a relative path read from
// another working directory).
func startFailure(sandbox string, err error) string {
	if sandbox != "" {
		if _, serr := os.Stat(sandbox); serr != nil {
			wd, _ := os.Getwd()
			return fmt.Sprintf("failed to start command: sandbox %s (seen from %s) is not there: %v (exec said: %v)", sandbox, wd, serr, err)
		}
	}
	return fmt.Sprintf("failed to start command in sandbox %s: %v", sandbox, err)
}
