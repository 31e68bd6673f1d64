package master

import (
	"net/http"
	"time"

	mmaster "github.com/mesos/mesos-go/api/v1/lib/master"

	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/auth"
	"github.com/allot-sched/allot/internal/loglevel"
)

// The operator calls that need the request itself, or no master state:
// the logging level (Mesos's glog verbosity, internal/loglevel), the
// sandbox files on the agents (operatorfiles.go) and GET_OPERATIONS.

// operatorRequestCall answers the calls above; handled is false for every
// other call, which operatorCallAs answers.
func (m *Master) operatorRequestCall(r *http.Request, call *mmaster.Call) (resp *mmaster.Response, handled bool, err error) {
	switch call.Type {
	case mmaster.Call_GET_LOGGING_LEVEL:
		return &mmaster.Response{Type: mmaster.Response_GET_LOGGING_LEVEL,
			GetLoggingLevel: &mmaster.Response_GetLoggingLevel{Level: m.logLevel().Level()}}, true, nil
	case mmaster.Call_SET_LOGGING_LEVEL:
		return nil, true, m.setLoggingLevel(auth.SubjectFrom(r.Context()), call.SetLoggingLevel)
	case mmaster.Call_LIST_FILES, mmaster.Call_READ_FILE:
		resp, err := m.operatorFiles(r, call)
		return resp, true, err
	case mmaster.Call_GET_OPERATIONS:
		// No offer operation in allot has an id or a status yet.
		return &mmaster.Response{Type: mmaster.Response_GET_OPERATIONS, GetOperations: &mmaster.Response_GetOperations{}}, true, nil
	}
	return nil, false, nil
}

// embeddedLevel is the level of the masters built without
// Config.LogLevel (tests, programs that embed a master): recorded, and no
// logger changed, as the process's global level is not theirs to move.
var embeddedLevel = loglevel.Recorded()

// logLevel is the master's verbosity control.
func (m *Master) logLevel() *loglevel.Control {
	if m.cfg.LogLevel != nil {
		return m.cfg.LogLevel
	}
	return embeddedLevel
}

// setLoggingLevel applies SET_LOGGING_LEVEL: set_log_level authorizes it,
// and the level reverts to the master's own after the duration.
func (m *Master) setLoggingLevel(who auth.Subject, c *mmaster.Call_SetLoggingLevel) error {
	if c == nil {
		return api.Errorf(http.StatusBadRequest, "SET_LOGGING_LEVEL call without set_logging_level")
	}
	d := time.Duration(c.Duration.Nanoseconds)
	if d <= 0 {
		return api.Errorf(http.StatusBadRequest, "SET_LOGGING_LEVEL: duration must be positive, got %v", d)
	}
	if err := m.authorize(who, auth.SetLogLevel, "", false); err != nil {
		return err
	}
	m.logLevel().Set(c.Level, d)
	m.log.Info().Uint32("level", c.Level).Dur("duration", d).Str("principal", who.Principal).Msg("logging level set")
	return nil
}
