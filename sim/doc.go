// Package sim is allot's experiment harness and (in later work) its
// discrete-event simulator. It drives the real allocator exactly as the
// master does, so what it reports is what a master with the same flags
// would do.
package sim
