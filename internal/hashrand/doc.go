// Package hashrand draws random numbers that are pure functions of a seed
// and a key, so that one job gets the same draw in every run and every
// policy's simulation of it, whatever order jobs are read or visited in.
// The simulator's per-job rate noise and the noisy job-size predictor both
// need that; a shared math/rand source would tie a job's draw to how many
// draws came before it.
package hashrand
