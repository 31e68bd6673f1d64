package limits

import "sync"

// Streams counts open subscription streams per key (a principal) against a
// cap. Safe for concurrent use.
type Streams struct {
	max int // <= 0: no cap
	// onChange, if set, is told a key's new count (a gauge); called with
	// the lock held so updates reach it in order.
	onChange func(key string, open int)

	mu   sync.Mutex
	open map[string]int
}

// NewStreams returns a counter allowing max open streams per key (<= 0:
// unlimited, still counted).
func NewStreams(max int, onChange func(key string, open int)) *Streams {
	return &Streams{max: max, onChange: onChange, open: map[string]int{}}
}

// Max is the cap (<= 0: none).
func (s *Streams) Max() int { return s.max }

// Acquire opens a stream for key if the cap allows; release (safe to call
// more than once) closes it. ok false: the key already has max open.
func (s *Streams) Acquire(key string) (release func(), ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.max > 0 && s.open[key] >= s.max {
		return func() {}, false
	}
	s.open[key]++
	s.changed(key)
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.open[key]--
			s.changed(key)
			if s.open[key] == 0 {
				delete(s.open, key) // keys come from clients: do not keep them
			}
		})
	}, true
}

// Open is how many streams key has open.
func (s *Streams) Open(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.open[key]
}

func (s *Streams) changed(key string) {
	if s.onChange != nil {
		s.onChange(key, s.open[key])
	}
}
