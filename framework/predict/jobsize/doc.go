// Package jobsize predicts the size of a MapReduce job before it runs, as
// FSPY does (Liu, Zeng, Piao, "High-Responsive Scheduling with MapReduce
// Performance Prediction on Hadoop YARN"; papers/fspy-size-based-yarn.md,
// section III.A). It is pure (standard library only, no clock, no I/O):
// the scheduler, the master or the simulator feeds it features and
// outcomes and asks for sizes.
//
// A job's size is memory x time, MB x s (eq. 5):
//
//	S = R_m x SE_m + R_r x SE_r
//
// where R_m, R_r are the memory of a map and a reduce container and SE_m,
// SE_r the total execution time of all the job's map and of all its reduce
// tasks. Regression predicts SE_m and SE_r with the paper's linear models
// (eq. 6 for maps; eq. 7 for reduces, whose printed form repeats eq. 6, so
// we rebuild it from the text, see ReduceTerms), fitted by generalized least
// squares and refitted after every finished job. The features are a job's
// configuration (task counts, input size) and the counters of a probe, a
// small sample of the job run first, extrapolated to the whole job by
// eq. 8 (JobFeatures.WithProbe).
//
// Oracle (the true sizes) and Noisy (another predictor's sizes times a
// seeded log-normal error) stand in for the regression in experiments. All
// three are Predictors.
package jobsize
