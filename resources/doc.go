// Package resources owns allot's resource arithmetic: scalars (cpus, mem,
// disk, gpus, the advisory bandwidths disk_bw and net_bw, and any other named
// scalar), ranges (ports), parsing of the Mesos text form
// ("cpus:24;mem:4096;ports:[31000-32000]") and conversion to and from
// mesos-go's mesos.Resource lists.
//
// Scalars are fixed point with three decimals, as in Mesos, so that sums and
// comparisons never drift: 0.1+0.2 is exactly 0.3 and a thousand recoveries of
// a tenth of a cpu give back exactly what was allocated. The well-known
// scalars live in a fixed array so that the allocator's hot paths touch no
// maps and allocate nothing; other named scalars go to a small sorted slice
// that is nil in the common case.
//
// disk_bw and net_bw are advisory: an agent advertises them and time-aware
// policies pack against them, but they are never reserved, so Reservable
// drops them and fairness shares ignore them.
//
// Outside the allocator an agent's resources are also kept exactly, as a
// mesos.Resources list with their reservations (static, dynamic, refined,
// with principal and labels) and persistent volumes: ParseByRole reads
// static reservations ("cpus(ads):4"), Convert and Conversion.Apply carry
// out the speculative operations (RESERVE, UNRESERVE, CREATE, DESTROY,
// GROW_VOLUME, SHRINK_VOLUME), Checkpointed and ApplyCheckpointed split and
// rejoin what an agent checkpoints, Take carves an offer out of a
// reservation pool, and Quantities gives the allocator its view: quantities
// by the innermost reservation role.
package resources
