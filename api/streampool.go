package api

import (
	"math/bits"
	"sync"
)

// Frame is a reusable buffer for one encoded frame, for a producer that
// sends many large frames (the master's OFFERS events: one per framework
// per allocation cycle, megabytes a cycle at 10,000 agents). Take one with
// NewFrame, append the encoded frame to B and give it to Stream.SendFrame,
// which puts it back in the pool once the frame is written. A fresh buffer
// per frame cost an allocation, its zeroing and the first touch of new
// memory every time (BenchmarkMasterOfferPath, docs/scale.md).
type Frame struct {
	B []byte
}

// Frames are pooled by capacity in powers of two, from 512 B to 4 MiB; a
// larger frame is allocated for its one use. sync.Pool lets the garbage
// collector drop buffers that go unused for two cycles, so a burst does
// not keep its buffers for the life of the process.
const (
	minFrameClass = 9
	maxFrameClass = 22
)

var framePools [maxFrameClass - minFrameClass + 1]sync.Pool

// NewFrame returns an empty frame with room for at least n bytes.
func NewFrame(n int) *Frame {
	c := minFrameClass
	if n > 1<<minFrameClass {
		c = bits.Len(uint(n - 1)) // n <= 1<<c
	}
	if c > maxFrameClass {
		return &Frame{B: make([]byte, 0, n)}
	}
	if f, _ := framePools[c-minFrameClass].Get().(*Frame); f != nil {
		return f
	}
	return &Frame{B: make([]byte, 0, 1<<c)}
}

// release puts f back in the pool of the largest class its capacity
// covers (B may have grown past the class it came from). Nothing may use f
// afterwards.
func (f *Frame) release() {
	c := bits.Len(uint(cap(f.B))) - 1 // 1<<c <= cap
	if c < minFrameClass || c > maxFrameClass {
		return
	}
	f.B = f.B[:0]
	framePools[c-minFrameClass].Put(f)
}

// SendFrame queues f's bytes, like SendRaw, and hands f over: the stream
// puts it back in the pool after writing it, or at once if the stream is
// closed or full. The caller must not use f afterwards.
func (s *Stream) SendFrame(f *Frame) bool {
	return s.send(f.B, f)
}

// releaseIfPooled releases f unless it is nil (a frame from SendRaw).
func (f *Frame) releaseIfPooled() {
	if f != nil {
		f.release()
	}
}
