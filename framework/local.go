package framework

import (
	"fmt"
	"sync"
)

// localBackend runs executors inside the driver's process. They still talk
// to the driver and each other over loopback HTTP, so local mode exercises
// the same paths as a cluster.
type localBackend struct {
	c *Context
	// mu guards next, execs, want and stopd. It is never held while calling
	// the driver (see backend).
	mu    sync.Mutex
	next  int
	execs map[string]*Executor
	want  int
	stopd bool
}

func newLocalBackend(c *Context) *localBackend {
	return &localBackend{c: c, execs: map[string]*Executor{}}
}

func (b *localBackend) known(id string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, ok := b.execs[id]
	return ok
}

func (b *localBackend) setTarget(n int) {
	b.mu.Lock()
	b.want = n
	var start []string
	for len(b.execs)+len(start) < n && !b.stopd {
		b.next++
		start = append(start, fmt.Sprintf("local-%d", b.next))
	}
	for _, id := range start {
		b.execs[id] = nil // reserved: known() accepts its registration
	}
	b.mu.Unlock()
	for _, id := range start {
		go func(id string) {
			cfg := b.c.cfg
			e, err := StartExecutor(ExecutorConfig{ID: id, Driver: b.c.url, Cores: cfg.Cores, BlockMem: int64(cfg.BlockMemMB) << 20})
			b.mu.Lock()
			if err != nil {
				delete(b.execs, id)
				b.mu.Unlock()
				b.c.fail(fmt.Errorf("starting local executor %s: %w", id, err))
				return
			}
			if b.stopd {
				b.mu.Unlock()
				e.Stop()
				return
			}
			b.execs[id] = e
			b.mu.Unlock()
		}(id)
	}
}

func (b *localBackend) release(id string) {
	b.mu.Lock()
	e := b.execs[id]
	delete(b.execs, id)
	b.mu.Unlock()
	if e != nil {
		e.Stop()
	}
}

func (b *localBackend) stop() {
	b.mu.Lock()
	b.stopd = true
	execs := b.execs
	b.execs = map[string]*Executor{}
	b.mu.Unlock()
	for _, e := range execs {
		if e != nil {
			e.Stop()
		}
	}
}
