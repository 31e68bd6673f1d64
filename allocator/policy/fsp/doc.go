// Package fsp is FSP's policy model (--sorter fsp, fspy): the virtual
// fair cluster that runs every declared job under processor sharing, so
// that a job's remaining virtual size says when fair sharing would finish
// it. The allocator forwards it events (policy.Model); its Refresh writes
// each framework's sorter.Virtual view, which the FSP criterion orders by.
package fsp
