package framework

import (
	"container/list"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// blockManager holds an executor's blocks (cached partitions and shuffle
// outputs), each as encoded bytes. Blocks live in memory while their total
// stays under the limit; beyond it the least recently used are spilled to
// files in dir and read back from there on demand. An in-memory block read
// through eachRecord also keeps its decoded records (memBlock.memo), not
// counted against the limit.
type blockManager struct {
	// mu guards used, mem, lru, disk and spills; limit, dir and stats are
	// set at creation (stats is atomics). Spills to disk happen under it;
	// a spilled block is read back outside it (removed meanwhile, it reads
	// as missing and is recomputed).
	mu     sync.Mutex
	limit  int64
	used   int64
	dir    string
	mem    map[string]*list.Element // name -> element of lru (value *memBlock)
	lru    *list.List               // front = most recently used
	disk   map[string]int64         // spilled name -> size
	spills int64
	stats  *usageCounters
}

type memBlock struct {
	name string
	data []byte
	// memo is the block's decoded records once a read has decoded them and
	// found them all immutable (see shareable), guarded by the manager's
	// mu; memo says which. It lives and dies with the in-memory block: a
	// spill, a replacement or an eviction drops the memBlock and with it
	// the memo, so the encoded bytes stay the one copy that is counted
	// against the limit, served over HTTP, handed off and spilled.
	decoded []any
	memo    memoState
}

// memoState says whether a memBlock's decoded records are kept.
type memoState uint8

const (
	memoNone    memoState = iota // not read yet
	memoShared                   // decoded holds the records, shared by readers
	memoMutable                  // a record can be modified by its reader: decode every read
)

func newBlockManager(limit int64, dir string, stats *usageCounters) *blockManager {
	return &blockManager{limit: limit, dir: dir, mem: map[string]*list.Element{}, lru: list.New(), disk: map[string]int64{}, stats: stats}
}

func (m *blockManager) put(name string, data []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.removeLocked(name)
	m.mem[name] = m.lru.PushFront(&memBlock{name: name, data: data})
	m.used += int64(len(data))
	for m.used > m.limit && m.lru.Len() > 0 {
		e := m.lru.Back()
		b := e.Value.(*memBlock)
		// Spill errors (a full disk) leave the block in memory: over the
		// limit beats losing data that lineage would have to recompute.
		if err := os.WriteFile(m.path(b.name), b.data, 0o644); err != nil {
			break
		}
		m.stats.fileBytes.Add(int64(len(b.data)))
		ioLimits().Disk.Take(len(b.data))
		m.lru.Remove(e)
		delete(m.mem, b.name)
		m.used -= int64(len(b.data))
		m.disk[b.name] = int64(len(b.data))
		m.spills++
	}
}

func (m *blockManager) path(name string) string {
	return filepath.Join(m.dir, strings.ReplaceAll(name, "/", "_"))
}

func (m *blockManager) get(name string) ([]byte, bool) {
	m.mu.Lock()
	if e, ok := m.mem[name]; ok {
		m.lru.MoveToFront(e)
		m.mu.Unlock()
		return e.Value.(*memBlock).data, true
	}
	_, onDisk := m.disk[name]
	m.mu.Unlock()
	if !onDisk {
		return nil, false
	}
	b, err := os.ReadFile(m.path(name))
	if err != nil {
		return nil, false
	}
	m.stats.fileBytes.Add(int64(len(b)))
	ioLimits().Disk.Take(len(b))
	return b, true
}

// eachRecord calls emit for every record of the block and reports whether
// the block is held. An in-memory block is decoded once and its records
// are shared by later reads, as Spark's MEMORY_ONLY keeps a cached
// partition deserialized; records a reader could modify (slices) are
// decoded afresh each read instead, since a shared one modified by one
// task would change what every later task reads. A block on disk is
// decoded from the file each read.
func (m *blockManager) eachRecord(name string, emit func(any)) (bool, error) {
	m.mu.Lock()
	e, inMem := m.mem[name]
	var b *memBlock
	var memo memoState
	var decoded []any
	if inMem {
		m.lru.MoveToFront(e)
		b = e.Value.(*memBlock)
		memo, decoded = b.memo, b.decoded
	}
	m.mu.Unlock()
	if !inMem {
		data, ok := m.get(name)
		if !ok {
			return false, nil
		}
		return true, decodeAll(data, emit)
	}
	switch memo {
	case memoShared:
		for _, v := range decoded {
			emit(v)
		}
		return true, nil
	case memoMutable:
		return true, decodeAll(b.data, emit)
	}
	recs, shared, err := decodeShareable(b.data, emit)
	if err != nil {
		return true, err
	}
	m.mu.Lock()
	// Spilled, evicted or replaced meanwhile: the memBlock is gone and the
	// memo with it; a block read back or put again starts without one.
	if cur, ok := m.mem[name]; ok && cur == e {
		b.memo, b.decoded = memoMutable, nil
		if shared {
			b.memo, b.decoded = memoShared, recs
		}
	}
	m.mu.Unlock()
	return true, nil
}

// decodeShareable decodes b, calling emit for every record as decodeAll
// does, and returns the records too if every one is shareable.
func decodeShareable(b []byte, emit func(any)) (recs []any, shared bool, err error) {
	shared = true
	d := decoder{b: b}
	for d.more() {
		v, err := d.next()
		if err != nil {
			return nil, false, err
		}
		if shared && !shareable(v) {
			shared, recs = false, nil
		}
		if shared {
			recs = append(recs, v)
		}
		emit(v)
	}
	return recs, shared, nil
}

// shareable says whether a decoded record can be handed to many readers:
// true for values no reader can modify in place (scalars, strings and KVs
// of them), false for the codec's slices ([]any, []float64), whose
// elements a registered function may assign.
func shareable(v any) bool {
	switch x := v.(type) {
	case nil, string, int, int64, float64, bool:
		return true
	case KV:
		return shareable(x.Key) && shareable(x.Value)
	}
	return false
}

func (m *blockManager) removeLocked(name string) {
	if e, ok := m.mem[name]; ok {
		m.used -= int64(len(e.Value.(*memBlock).data))
		m.lru.Remove(e)
		delete(m.mem, name)
	}
	if _, ok := m.disk[name]; ok {
		os.Remove(m.path(name))
		delete(m.disk, name)
	}
}

// snapshot reports memory in use, bytes spilled to disk and the cached
// (rdd_) block names.
func (m *blockManager) snapshot() (memUsed, diskUsed int64, cached []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for name := range m.mem {
		if strings.HasPrefix(name, "rdd_") {
			cached = append(cached, name)
		}
	}
	for name, n := range m.disk {
		diskUsed += n
		if strings.HasPrefix(name, "rdd_") {
			cached = append(cached, name)
		}
	}
	return m.used, diskUsed, cached
}

// spill moves a block from memory to disk, where it stays readable: a
// receiver of a handoff makes room this way for the partitions it takes
// (iSpark evicts partitions whose reading stages are done first). A block
// on disk already, or not held, is left as it is.
func (m *blockManager) spill(name string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.mem[name]
	if !ok {
		return
	}
	b := e.Value.(*memBlock)
	if err := os.WriteFile(m.path(b.name), b.data, 0o644); err != nil {
		return
	}
	m.stats.fileBytes.Add(int64(len(b.data)))
	m.lru.Remove(e)
	delete(m.mem, name)
	m.used -= int64(len(b.data))
	m.disk[name] = int64(len(b.data))
	m.spills++
}

// has says whether the block is held, in memory or on disk.
func (m *blockManager) has(name string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, inMem := m.mem[name]
	_, onDisk := m.disk[name]
	return inMem || onDisk
}

// cachedSizes maps each cached (rdd_) block to its size in bytes.
func (m *blockManager) cachedSizes() map[string]int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]int64{}
	for name, e := range m.mem {
		if strings.HasPrefix(name, "rdd_") {
			out[name] = int64(len(e.Value.(*memBlock).data))
		}
	}
	for name, n := range m.disk {
		if strings.HasPrefix(name, "rdd_") {
			out[name] = n
		}
	}
	return out
}
