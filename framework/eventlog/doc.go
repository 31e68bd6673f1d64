// Package eventlog is the schema of the framework runtime's event log, with a
// Writer and a Reader for it.
//
// An event log is one JSON object per line, written as things happen by the
// driver (framework.Context), one file per application run. Every line has
// "event" (its kind) and "time" (unix seconds, fractional). Each kind is one
// struct here; the field names, their JSON types and which fields may be
// absent are exactly what the runtime has written since the log existed, so
// older logs read with this package, and readers that decode lines as plain
// JSON objects (the examples' tests, ad hoc scripts) keep working.
//
// Struct fields are declared in the byte order of their JSON names: the
// runtime used to marshal maps, whose keys encoding/json sorts, so declaring
// them in that order keeps every line byte-identical to what the old code
// wrote (the tests check this against logs the old code produced).
//
// Prophet's predictor reads stage start/end (StageCompleted) and per-stage
// executor peaks (ExecutorStage); iSpark reads utilisation (ExecutorSample)
// and per-stage means; the simulator replays jobs from stages and tasks.
package eventlog
