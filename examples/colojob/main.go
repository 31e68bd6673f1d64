// Command colojob is the co-location bandit's live test workload: jobs of
// two types that stress different resources of one machine,
// each a framework of its own that names its type with the FrameworkInfo
// label allot.job_type and declares its tasks with REQUEST, so the
// master's --sorter bandit can order and learn them.
//
//	colojob submit --master 127.0.0.1:5050 --type cpu --tasks 1 --units 40
//	colojob work --kind cpu|disk --units N [--min D]   (what each task runs)
//
// A cpu task hashes a buffer units times 10 MB (CPU-bound, no I/O). A disk
// task writes, then reads back, units MB with direct I/O (O_DIRECT, so the
// page cache does not absorb it and the CPU waits: I/O wait) in a
// temporary directory under its sandbox, and removes it. The work is a
// fixed amount, not a fixed time, so contention shows as a longer run.
//
// submit prints one JSON line when its tasks are done:
// {"name":..,"type":..,"submitted":unix_s,"started":unix_s,"finished":unix_s}.
package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"
	"unsafe"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/allot-sched/allot/examples/internal/exampleutil"
	"github.com/allot-sched/allot/framework/sched"
)

// jobTypeLabel is master.JobTypeLabel; a framework does not import master.
const jobTypeLabel = "allot.job_type"

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: colojob submit|work [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "work":
		err = work(os.Args[2:])
	case "submit":
		err = submit(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q (submit or work)", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "colojob:", err)
		os.Exit(1)
	}
}

func work(args []string) error {
	fs := flag.NewFlagSet("work", flag.ExitOnError)
	kind := fs.String("kind", "cpu", "cpu or disk")
	units := fs.Int("units", 10, "cpu: hash units x 10 MB; disk: write and read units MB with O_DIRECT")
	minimum := fs.Duration("min", 0, "repeat the work until at least this long has passed (tests pace co-locations with it)")
	fs.Parse(args)
	start := time.Now()
	for {
		if err := workOnce(*kind, *units); err != nil {
			return err
		}
		if time.Since(start) >= *minimum {
			return nil
		}
	}
}

func workOnce(kind string, units int) error {
	switch kind {
	case "cpu":
		burn(units)
		return nil
	case "disk":
		dir := os.Getenv("MESOS_SANDBOX")
		if dir == "" {
			dir = os.TempDir()
		}
		return directIO(dir, units)
	}
	return fmt.Errorf("work: --kind %q, want cpu or disk", kind)
}

// burn hashes a 1 MB buffer 10*units times.
func burn(units int) {
	buf := make([]byte, 1<<20)
	sum := sha256.Sum256(buf)
	for i := 0; i < 10*units; i++ {
		copy(buf, sum[:])
		sum = sha256.Sum256(buf)
	}
}

const (
	directBlock = 1 << 20 // bytes per write/read
	directAlign = 4096    // O_DIRECT wants aligned buffers, offsets and sizes
)

// directIO writes mb MB to a new file under a temporary directory in dir
// with O_DIRECT, syncs, reads it back the same way and removes it.
func directIO(dir string, mb int) error {
	tmp, err := os.MkdirTemp(dir, "colojob-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	path := filepath.Join(tmp, "data")
	raw := make([]byte, directBlock+directAlign)
	off := directAlign - int(uintptr(unsafe.Pointer(&raw[0]))&(directAlign-1))
	buf := raw[off%directAlign : off%directAlign+directBlock]
	for i := range buf {
		buf[i] = byte(i)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|syscall.O_DIRECT, 0o600)
	if err != nil {
		return fmt.Errorf("open %s with O_DIRECT: %w", path, err)
	}
	for i := 0; i < mb; i++ {
		if _, err := f.Write(buf); err != nil {
			f.Close()
			return fmt.Errorf("direct write: %w", err)
		}
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	f.Close()
	if f, err = os.OpenFile(path, os.O_RDONLY|syscall.O_DIRECT, 0); err != nil {
		return err
	}
	defer f.Close()
	for i := 0; i < mb; i++ {
		if _, err := f.Read(buf); err != nil {
			return fmt.Errorf("direct read: %w", err)
		}
	}
	return nil
}

func submit(args []string) error {
	fs := flag.NewFlagSet("submit", flag.ExitOnError)
	master := fs.String("master", "127.0.0.1:5050", "master host:port")
	typ := fs.String("type", "cpu", "job type (the allot.job_type label) and the kind of work: cpu or disk")
	tasks := fs.Int("tasks", 1, "tasks of one cpu each")
	units := fs.Int("units", 10, "work per task (see colojob work)")
	name := fs.String("name", "", "framework name (default colojob-TYPE)")
	minimum := fs.Duration("min", 0, "each task works at least this long (colojob work --min)")
	timeout := fs.Duration("timeout", 10*time.Minute, "give up after this long")
	fs.Parse(args)
	if *name == "" {
		*name = "colojob-" + *typ
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	p := &planner{tasks: *tasks, name: *name, done: make(chan error, 1), started: map[string]bool{},
		cmd: mesos.CommandInfo{Value: &self, Shell: new(bool),
			Arguments: []string{self, "work", "--kind", *typ, "--units", strconv.Itoa(*units), "--min", minimum.String()}}}
	role, host := "*", "localhost"
	info := mesos.FrameworkInfo{Name: *name, Role: &role, Hostname: &host,
		Labels: &mesos.Labels{Labels: []mesos.Label{{Key: jobTypeLabel, Value: typ}}}}
	cred, err := exampleutil.CredentialFromEnv()
	if err != nil {
		return err
	}
	cl, err := sched.New(sched.Config{Masters: []string{*master}, Framework: info, Credential: cred,
		Demand: &sched.Demand{Resources: taskResources(), Tasks: *tasks},
		Logf:   func(string, ...any) {}}, p)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	submitted := time.Now()
	go cl.Run(ctx)
	select {
	case err = <-p.done:
	case <-ctx.Done():
		err = errors.New("timed out")
	}
	cl.Teardown()
	if err != nil {
		return fmt.Errorf("%s: %w", *name, err)
	}
	return json.NewEncoder(os.Stdout).Encode(map[string]any{"name": *name, "type": *typ,
		"submitted": unixS(submitted), "started": unixS(p.first), "finished": unixS(time.Now())})
}

func unixS(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

func taskResources() []mesos.Resource {
	return []mesos.Resource{sched.Scalar("cpus", 1), sched.Scalar("mem", 64)}
}

// planner launches its tasks one cpu each on whatever fits and reports
// when all finished (or one failed).
type planner struct {
	mu       sync.Mutex
	cmd      mesos.CommandInfo
	name     string
	tasks    int // not yet launched
	finished int
	total    int
	started  map[string]bool // task id -> running (for reconciliation)
	first    time.Time
	done     chan error
}

var _ sched.Planner = (*planner)(nil)

func (p *planner) Offers(offers []mesos.Offer) []sched.Launch {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []sched.Launch
	for _, o := range offers {
		cpus, mem := sched.ScalarOf(o.Resources, "cpus"), sched.ScalarOf(o.Resources, "mem")
		var ts []mesos.TaskInfo
		for p.tasks > 0 && cpus >= 1 && mem >= 64 {
			id := fmt.Sprintf("%s-%d", p.name, p.total)
			ts = append(ts, mesos.TaskInfo{Name: id, TaskID: mesos.TaskID{Value: id}, AgentID: o.AgentID,
				Command: &p.cmd, Resources: taskResources()})
			p.started[id] = true
			p.tasks--
			p.total++
			cpus--
			mem -= 64
		}
		if len(ts) > 0 {
			if p.first.IsZero() {
				p.first = time.Now()
			}
			out = append(out, sched.Launch{Offer: o.ID, Tasks: ts})
		}
	}
	return out
}

func (p *planner) Update(st mesos.TaskStatus) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch st.GetState() {
	case mesos.TASK_FINISHED:
		if p.started[st.TaskID.Value] {
			delete(p.started, st.TaskID.Value)
			p.finished++
			if p.finished == p.total && p.tasks == 0 {
				p.done <- nil
			}
		}
	case mesos.TASK_FAILED, mesos.TASK_KILLED, mesos.TASK_LOST, mesos.TASK_ERROR, mesos.TASK_DROPPED:
		select {
		case p.done <- fmt.Errorf("task %s: %s %s", st.TaskID.Value, st.GetState(), st.GetMessage()):
		default:
		}
	}
}

func (p *planner) Wants() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.tasks > 0
}

func (p *planner) Tasks() map[string]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]string{}
	for id := range p.started {
		out[id] = ""
	}
	return out
}
