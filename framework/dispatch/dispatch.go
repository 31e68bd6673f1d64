package dispatch

import (
	"sort"
	"time"
)

// Slot is an executor's capacity for tasks.
type Slot struct {
	Exec, Host string
	Cores      int
	Running    int // tasks running on it, including those placed earlier in this round
}

// Free says whether the executor can take a task now.
func (s Slot) Free() bool { return s.Running < s.Cores }

// Task is a task waiting for a slot.
type Task struct {
	ID                        int64
	Stage, Partition, Attempt int
	QueuedAt                  time.Time // when it (this attempt) started waiting
	// Preferred is the executor holding a cached partition the task reads,
	// or "".
	Preferred string
}

// Dispatcher places one pending task.
type Dispatcher interface {
	// Choose returns the index in slots of the executor to run t on now,
	// or -1 to keep t waiting. slots are in Order; the caller counts a
	// chosen task in the slot's Running before asking about the next.
	Choose(now time.Time, t Task, slots []Slot) int
}

// Order sorts slots least loaded first, then by executor id: the order in
// which the driver fills executors.
func Order(slots []Slot) {
	sort.Slice(slots, func(i, j int) bool {
		return slots[i].Running < slots[j].Running || slots[i].Running == slots[j].Running && slots[i].Exec < slots[j].Exec
	})
}

// LocalityWait runs a task on the executor holding its cached data when
// that executor has a free core; while it has none, the task waits up to
// Wait from when it was queued, then takes the first free slot. A task with
// no preference, or whose preferred executor is gone, takes the first free
// slot at once.
type LocalityWait struct {
	Wait time.Duration
}

var _ Dispatcher = LocalityWait{}

// Choose implements Dispatcher.
func (l LocalityWait) Choose(now time.Time, t Task, slots []Slot) int {
	if t.Preferred != "" {
		if i := Index(slots, t.Preferred); i >= 0 {
			if slots[i].Free() {
				return i
			}
			if now.Sub(t.QueuedAt) < l.Wait {
				return -1 // wait a little for the executor holding the data
			}
		}
	}
	return FirstFree(slots)
}

// Index is the position of executor id in slots, or -1.
func Index(slots []Slot, id string) int {
	for i := range slots {
		if slots[i].Exec == id {
			return i
		}
	}
	return -1
}

// FirstFree is the first slot with a free core, or -1.
func FirstFree(slots []Slot) int {
	for i := range slots {
		if slots[i].Free() {
			return i
		}
	}
	return -1
}
