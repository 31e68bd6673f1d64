package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// runTailEvery is how often allot run asks the task's agent for what its
// stdout and stderr gained, as `allot logs --follow` asks the master.
const runTailEvery = 250 * time.Millisecond

// runTailTimeout bounds one read from the agent, so that a hung agent
// delays the output, and allot run's exit, by no more than this.
const runTailTimeout = 5 * time.Second

// envFlag is a repeatable K=V flag (--env).
type envFlag []string

func (e *envFlag) String() string { return strings.Join(*e, ",") }

func (e *envFlag) Set(v string) error {
	k, _, ok := strings.Cut(v, "=")
	if !ok || k == "" || strings.ContainsAny(k, " \t\n\x00") {
		return fmt.Errorf("%q: want K=V with a name K", v)
	}
	*e = append(*e, v)
	return nil
}

// sandboxTail prints a running task's stdout and stderr as the task
// writes them: it reads both files from the agent that runs the task
// (its /files/read, from an offset), not through the master, so that the
// output keeps coming while the masters fail over.
type sandboxTail struct {
	hc   *http.Client
	fw   string
	p    *runPlanner
	outs [2]io.Writer // stdout, stderr

	task string   // the task whose files off counts into
	off  [2]int64 // bytes printed of each

	once sync.Once
	quit chan struct{}
	done chan struct{}
}

// startSandboxTail follows p's current task until stop.
func startSandboxTail(hc *http.Client, fw string, p *runPlanner, stdout, stderr io.Writer) *sandboxTail {
	s := &sandboxTail{hc: hc, fw: fw, p: p, outs: [2]io.Writer{stdout, stderr}, quit: make(chan struct{}), done: make(chan struct{})}
	go s.follow()
	return s
}

func (s *sandboxTail) follow() {
	defer close(s.done)
	t := time.NewTicker(runTailEvery)
	defer t.Stop()
	for {
		select {
		case <-s.quit:
			s.pull() // what the task wrote last
			return
		case <-t.C:
			s.pull()
		}
	}
}

// stop ends the tail after one last pull; it may be called more than once.
func (s *sandboxTail) stop() {
	s.once.Do(func() { close(s.quit) })
	<-s.done
}

// pull prints what both files gained since the last pull.
func (s *sandboxTail) pull() {
	task, _, agentURL, launched := s.p.current()
	if !launched || agentURL == "" {
		return
	}
	if task != s.task { // a relaunch: new sandbox, new files
		s.task, s.off = task, [2]int64{}
	}
	for i, name := range []string{"stdout", "stderr"} {
		for s.read(agentURL, i, name) {
		}
	}
}

// read prints one page of file i from its offset; false when there is no
// more now (or the agent cannot say: the next pull asks again).
func (s *sandboxTail) read(agentURL string, i int, name string) bool {
	q := url.Values{"path": {fmt.Sprintf("/frameworks/%s/executors/%s/runs/latest/%s", s.fw, s.task, name)},
		"offset": {strconv.FormatInt(s.off[i], 10)}}
	resp, err := s.hc.Get(agentURL + "/files/read?" + q.Encode())
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false // 404 until the sandbox exists
	}
	var chunk struct {
		Data   string `json:"data"`
		Offset int64  `json:"offset"`
	}
	if json.NewDecoder(io.LimitReader(resp.Body, 8<<20)).Decode(&chunk) != nil || chunk.Data == "" {
		return false
	}
	io.WriteString(s.outs[i], chunk.Data)
	s.off[i] = chunk.Offset + int64(len(chunk.Data))
	return true
}
