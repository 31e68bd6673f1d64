package framework

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ExecutorConfig configures an executor process (or, in local mode, an
// in-process executor).
type ExecutorConfig struct {
	ID        string
	Driver    string // driver base URL, http://host:port
	Cores     int
	BlockMem  int64  // block manager memory limit, bytes
	Dir       string // spill directory
	Listen    string // host:port to listen on (default 127.0.0.1:0)
	Advertise string // host other processes reach us at (default: the listen host)
	// DriverTimeout: an executor whose heartbeats have failed this long
	// decides its driver is gone and stops (so no executor outlives its
	// application). Default 15s.
	DriverTimeout time.Duration
}

// Executor runs tasks sent by the driver over HTTP.
type Executor struct {
	id, url string
	cfg     ExecutorConfig
	blocks  *blockManager
	stats   usageCounters
	slots   chan struct{}
	srv     *http.Server
	client  *http.Client

	// mu guards running and active (task handlers write them, the
	// heartbeat reads and resets active). Nothing else is taken under it.
	mu      sync.Mutex
	running map[int64]int // task id -> stage
	active  map[int]bool  // stages with a task running since the last sample

	done     chan struct{}
	stopOnce sync.Once
	lost     chan struct{} // closed when the driver is considered gone
}

// StartExecutor listens, registers with the driver and starts heartbeats.
func StartExecutor(cfg ExecutorConfig) (*Executor, error) {
	if cfg.Cores <= 0 {
		cfg.Cores = 1
	}
	if cfg.BlockMem <= 0 {
		cfg.BlockMem = 256 << 20
	}
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:0"
	}
	if cfg.DriverTimeout == 0 {
		cfg.DriverTimeout = 15 * time.Second
	}
	if cfg.Dir == "" {
		d, err := os.MkdirTemp("", "allot-executor-")
		if err != nil {
			return nil, err
		}
		cfg.Dir = d
	}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("executor spill dir: %w", err)
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("executor listen on %s: %w", cfg.Listen, err)
	}
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	if cfg.Advertise != "" {
		host = cfg.Advertise
	} else if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	e := &Executor{id: cfg.ID, cfg: cfg, url: "http://" + net.JoinHostPort(host, port), slots: make(chan struct{}, cfg.Cores),
		running: map[int64]int{}, active: map[int]bool{}, done: make(chan struct{}), lost: make(chan struct{})}
	e.blocks = newBlockManager(cfg.BlockMem, cfg.Dir, &e.stats)
	e.client = &http.Client{Transport: &http.Transport{
		MaxIdleConnsPerHost: 64,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := (&net.Dialer{Timeout: 5 * time.Second}).DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return countingConn{c, &e.stats}, nil
		}}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /task", e.handleTask)
	mux.HandleFunc("GET /block/{name}", e.handleBlock)
	mux.HandleFunc("POST /fetch", e.handleFetch)
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") })
	e.srv = &http.Server{Handler: mux}
	go e.srv.Serve(countingListener{ln, &e.stats})
	if err := e.register(); err != nil {
		e.srv.Close()
		return nil, err
	}
	go e.heartbeats()
	return e, nil
}

// ID is the executor's id; URL where it serves tasks and blocks.
func (e *Executor) ID() string  { return e.id }
func (e *Executor) URL() string { return e.url }

// DriverLost is closed when the driver has not answered heartbeats for
// DriverTimeout.
func (e *Executor) DriverLost() <-chan struct{} { return e.lost }

// Stop closes the server; running tasks' connections break.
func (e *Executor) Stop() {
	e.stopOnce.Do(func() {
		close(e.done)
		e.srv.Close()
		os.RemoveAll(e.cfg.Dir)
	})
}

type registration struct {
	ID    string `json:"id"`
	URL   string `json:"url"`
	Cores int    `json:"cores"`
	PID   int    `json:"pid"`
	Host  string `json:"host"`
}

func (e *Executor) register() error {
	host, _ := os.Hostname()
	b, _ := json.Marshal(registration{ID: e.id, URL: e.url, Cores: e.cfg.Cores, PID: os.Getpid(), Host: host})
	var lastErr error
	for i := 0; i < 20; i++ {
		resp, err := e.client.Post(e.cfg.Driver+"/register", "application/json", bytes.NewReader(b))
		if err == nil {
			msg, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			return fmt.Errorf("driver %s refused executor %s: %s", e.cfg.Driver, e.id, strings.TrimSpace(string(msg)))
		}
		lastErr = err
		time.Sleep(time.Duration(50*(i+1)) * time.Millisecond) // the driver may still be starting its server
	}
	return fmt.Errorf("registering with driver %s: %w", e.cfg.Driver, lastErr)
}

type heartbeat struct {
	ID     string   `json:"id"`
	Sample Sample   `json:"sample"`
	Cached []string `json:"cached"`
	// Sizes are the bytes of each of Cached, in the same order (iSpark
	// weighs a handoff by them).
	Sizes []int64 `json:"sizes,omitempty"`
}

// heartbeats sends a utilisation sample every second; the driver answers
// 410 Gone when it has released this executor.
func (e *Executor) heartbeats() {
	prev := readProc(&e.stats)
	lastOK := time.Now()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-e.done:
			return
		case <-t.C:
		}
		cur := readProc(&e.stats)
		s := sampleBetween(prev, cur)
		prev = cur
		e.mu.Lock()
		s.Running = len(e.running)
		for st := range e.active {
			s.Stages = append(s.Stages, st)
		}
		e.active = map[int]bool{}
		for _, st := range e.running {
			e.active[st] = true
		}
		e.mu.Unlock()
		var cached []string
		s.BlockMem, s.BlockSpill, cached = e.blocks.snapshot()
		sizes := e.blocks.cachedSizes()
		hb := heartbeat{ID: e.id, Sample: s, Cached: cached, Sizes: make([]int64, len(cached))}
		for i, name := range cached {
			hb.Sizes[i] = sizes[name]
		}
		b, _ := json.Marshal(hb)
		resp, err := e.client.Post(e.cfg.Driver+"/heartbeat", "application/json", bytes.NewReader(b))
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusGone {
				e.signalLost()
				return
			}
			lastOK = time.Now()
		} else if time.Since(lastOK) > e.cfg.DriverTimeout {
			e.signalLost()
			return
		}
	}
}

func (e *Executor) signalLost() {
	select {
	case <-e.lost:
	default:
		close(e.lost)
	}
}

func (e *Executor) handleBlock(w http.ResponseWriter, r *http.Request) {
	b, ok := e.blocks.get(r.PathValue("name"))
	if !ok {
		http.Error(w, "no block "+r.PathValue("name"), http.StatusNotFound)
		return
	}
	w.Write(b)
}

func (e *Executor) fetch(base, name string) ([]byte, error) {
	resp, err := e.client.Get(base + "/block/" + name)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("block %s: %s", name, resp.Status)
	}
	return io.ReadAll(ioLimits().Net.Reader(resp.Body))
}

func (e *Executor) handleTask(w http.ResponseWriter, r *http.Request) {
	var spec taskSpec
	if err := json.NewDecoder(r.Body).Decode(&spec); err != nil {
		http.Error(w, "bad task: "+err.Error(), http.StatusBadRequest)
		return
	}
	select {
	case e.slots <- struct{}{}:
	case <-r.Context().Done():
		return
	}
	e.mu.Lock()
	e.running[spec.ID] = spec.Stage
	e.active[spec.Stage] = true
	e.mu.Unlock()
	res := e.run(&spec)
	e.mu.Lock()
	delete(e.running, spec.ID)
	e.mu.Unlock()
	<-e.slots
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(res)
}

// run executes a task on a locked OS thread, so that the thread's CPU time
// (getrusage RUSAGE_THREAD) is the task's own.
func (e *Executor) run(spec *taskSpec) *taskResult {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	res := &taskResult{Executor: e.id}
	cpu0, rq0 := threadCPU(), threadRunQueue()
	res.Metrics.Start = time.Now().UnixNano()
	tr := &taskRun{ex: e, spec: spec, nodes: map[int]*node{}, m: &res.Metrics, res: res}
	for _, n := range spec.Nodes {
		tr.nodes[n.ID] = n
	}
	err := e.runTask(tr)
	res.Metrics.End = time.Now().UnixNano()
	res.Metrics.CPUNanos = int64(threadCPU() - cpu0)
	if rq0 >= 0 {
		res.Metrics.RunQueueNanos = max(0, threadRunQueue()-rq0)
	}
	if err != nil {
		if ff, ok := err.(*fetchFail); ok {
			res.Fetch = ff
		}
		res.Error = err.Error()
	}
	return res
}

func (e *Executor) runTask(tr *taskRun) error {
	spec := tr.spec
	top := tr.nodes[spec.Top]
	if top == nil {
		return fmt.Errorf("task %d: top dataset %d not in its lineage", spec.ID, spec.Top)
	}
	if spec.Write != nil {
		return tr.writeShuffle(top)
	}
	var buf []byte
	var encErr error
	var count int64
	var out *os.File
	var bw *bytes.Buffer
	if spec.Action == "save" {
		var err error
		if out, err = os.Create(fmt.Sprintf("%s/part-%05d", spec.SavePath, spec.Partition)); err != nil {
			return fmt.Errorf("save: %w", err)
		}
		defer out.Close()
		bw = &bytes.Buffer{}
	}
	sampleEvery := int64(1)
	err := tr.compute(top, spec.Partition, func(v any) {
		count++
		switch spec.Action {
		case "collect":
			if encErr == nil {
				buf, encErr = appendRecord(buf, v)
			}
		case "sample":
			// Keys for a range partitioner: up to ~64 evenly spaced ones.
			if count%sampleEvery == 0 && encErr == nil {
				if kv, ok := v.(KV); ok {
					buf, encErr = appendRecord(buf, kv.Key)
				}
				if count >= 64*sampleEvery {
					sampleEvery *= 2
				}
			}
		case "save":
			if kv, ok := v.(KV); ok {
				fmt.Fprintf(bw, "%v\t%v\n", kv.Key, kv.Value)
			} else {
				fmt.Fprintf(bw, "%v\n", v)
			}
			if bw.Len() > 1<<20 {
				n, _ := out.Write(bw.Bytes())
				e.stats.fileBytes.Add(int64(n))
				ioLimits().Disk.Take(n)
				bw.Reset()
			}
		}
	})
	if err != nil {
		return err
	}
	if encErr != nil {
		return encErr
	}
	if out != nil {
		n, err := out.Write(bw.Bytes())
		e.stats.fileBytes.Add(int64(n))
		ioLimits().Disk.Take(n)
		if err != nil {
			return fmt.Errorf("save: %w", err)
		}
	}
	tr.res.Data, tr.res.Count = buf, count
	tr.m.RecordsOut = count
	return nil
}

func threadCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
