package elastic

import "sort"

// bin is an executor during iSpark's packing: its load in absolute units
// (cores and MB used), the capacity eq. 3 allows it, and its block
// manager's cache as the moves decided so far leave it.
type bin struct {
	e        Executor
	cap      float64
	cpu, mem float64
	open     bool // stays (and may receive); decided
	cache    binCache
}

// binCache is a block manager's cache: what it holds and the room left
// (unlimited when the capacity is not known).
type binCache struct {
	unlimited bool
	free      int64
	held      []CachedPartition
}

// newBin sizes e. Its capacity is eq. 3's min(Theta, U_max) (capacity,
// the application's), but never below what it already carries: an
// executor past the capacity keeps its load (that is reprovisioning's
// concern) and only refuses more.
func (s ISpark) newBin(e Executor, capacity float64) *bin {
	b := &bin{e: e, cpu: e.CPUUtil * float64(cores(e)), mem: e.MemUtil * float64(memMB(e))}
	b.cap = max(capacity, s.factor(e.CPUUtil, e.MemUtil))
	b.cache = binCache{unlimited: e.CacheBytes <= 0, held: append([]CachedPartition(nil), e.Cache...)}
	if !b.cache.unlimited {
		b.cache.free = e.CacheBytes
		for _, p := range e.Cache {
			b.cache.free -= p.Bytes
		}
	}
	return b
}

// cores and memMB guard against a zero reservation (unknown sizes are
// taken as equal).
func cores(e Executor) int { return max(e.Cores, 1) }
func memMB(e Executor) int { return max(e.MemMB, 1) }

// utilWith is the bin's utilisation by the policy's factor with extra load.
func (b *bin) utilWith(s ISpark, cpu, mem float64) float64 {
	return s.factor((b.cpu+cpu)/float64(cores(b.e)), (b.mem+mem)/float64(memMB(b.e)))
}

// fits says whether p finds room, evicting done partitions if allowed.
func (c *binCache) fits(p CachedPartition, evict bool) bool {
	if c.unlimited || c.free >= p.Bytes {
		return true
	}
	if !evict {
		return false
	}
	room := c.free
	for _, h := range c.held {
		if h.Done {
			room += h.Bytes
		}
	}
	return room >= p.Bytes
}

// admit takes p, first evicting done partitions (lowest partition id
// first, the mirror of keeping the highest) until it fits, and returns
// what it evicted. The caller checked fits.
func (c *binCache) admit(p CachedPartition) []Partition {
	var evicted []Partition
	if !c.unlimited && c.free < p.Bytes {
		order := append([]CachedPartition(nil), c.held...)
		sort.SliceStable(order, func(i, j int) bool { return lessPart(order[i].Partition, order[j].Partition) })
		gone := map[Partition]bool{}
		for _, h := range order {
			if c.free >= p.Bytes {
				break
			}
			if h.Done {
				gone[h.Partition] = true
				c.free += h.Bytes
				evicted = append(evicted, h.Partition)
			}
		}
		kept := c.held[:0:0]
		for _, h := range c.held {
			if !gone[h.Partition] {
				kept = append(kept, h)
			}
		}
		c.held = kept
	}
	c.held = append(c.held, p)
	if !c.unlimited {
		c.free -= p.Bytes
	}
	return evicted
}

func lessPart(a, b Partition) bool {
	if a.Part != b.Part {
		return a.Part < b.Part
	}
	return a.Node < b.Node
}

// handoffOrder is the order a giver ships its partitions (Section III-C):
// those an unfinished stage reads (VIP) first, then the highest partition
// ids, since Spark schedules tasks in ascending partition order. Done
// partitions are not shipped: a receiver would evict them first anyway.
func handoffOrder(cache []CachedPartition) (ship []CachedPartition, done []Partition) {
	for _, p := range cache {
		if p.Done && !p.VIP {
			done = append(done, p.Partition)
			continue
		}
		ship = append(ship, p)
	}
	sort.SliceStable(ship, func(i, j int) bool {
		if ship[i].VIP != ship[j].VIP {
			return ship[i].VIP
		}
		return lessPart(ship[j].Partition, ship[i].Partition)
	})
	return ship, done
}

// placeCache finds room for giver's partitions: on the receiver first,
// evicting its done partitions if need be, then on another staying
// executor (id order) the same way. Partitions that fit nowhere are dropped, unless a stage
// still reads them: then the giver cannot go (ok false) and nothing
// changes. On success the bins' caches take the moves.
func placeCache(giver, to *bin, bins []*bin) (moves []Move, dropped []Partition, ok bool) {
	targets := []*bin{to}
	for _, b := range bins {
		if b.open && b != to && b != giver {
			targets = append(targets, b)
		}
	}
	trial := make([]binCache, len(targets))
	for i, t := range targets {
		trial[i] = t.cache
		trial[i].held = append([]CachedPartition(nil), t.cache.held...)
	}
	ship, dropped := handoffOrder(giver.e.Cache)
	index := map[string]int{}
	for _, p := range ship {
		i := placeOne(trial, p)
		if i < 0 {
			if p.VIP {
				return nil, nil, false
			}
			dropped = append(dropped, p.Partition)
			continue
		}
		evicted := trial[i].admit(p)
		k, seen := index[targets[i].e.ID]
		if !seen {
			k = len(moves)
			index[targets[i].e.ID] = k
			moves = append(moves, Move{From: giver.e.ID, To: targets[i].e.ID})
		}
		moves[k].Partitions = append(moves[k].Partitions, p.Partition)
		moves[k].Evict = append(moves[k].Evict, evicted...)
	}
	for i, t := range targets {
		t.cache = trial[i]
	}
	return moves, dropped, true
}

// placeOne is the first target (the receiver comes first) with room for
// p, evicting its done partitions if that is what it takes; -1 if none.
func placeOne(caches []binCache, p CachedPartition) int {
	for i := range caches {
		if caches[i].fits(p, true) {
			return i
		}
	}
	return -1
}
