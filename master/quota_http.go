package master

import (
	"errors"
	"io"
	"net/http"
	"strings"

	mquota "github.com/mesos/mesos-go/api/v1/lib/quota"

	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/auth"
)

// Mesos's deprecated /quota endpoint (and /master/quota): GET answers the
// QuotaStatus, POST sets a role's quota from a QuotaRequest (as
// SET_QUOTA), DELETE /quota/<role> removes it (as REMOVE_QUOTA), each
// worded as Mesos words its HTTP answers.

// maxQuotaBody bounds a POST /quota body: a QuotaRequest is a role and a
// few resources.
const maxQuotaBody = 1 << 20

// handleQuotaGet serves GET /quota. Takes m.mu.
func (m *Master) handleQuotaGet(w http.ResponseWriter, r *http.Request) {
	st := m.quotaStatus(auth.SubjectFrom(r.Context()))
	b, err := api.JSON.Marshal(&st)
	if err != nil {
		api.WriteError(w, err)
		return
	}
	w.Header().Set("Content-Type", api.MediaJSON)
	w.Write(b)
}

// handleQuotaSet serves POST /quota. Takes m.quotaMu and m.mu.
func (m *Master) handleQuotaSet(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxQuotaBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			api.WriteError(w, api.Errorf(http.StatusRequestEntityTooLarge, "set quota request body exceeds the limit of %d bytes", mbe.Limit))
			return
		}
		api.WriteError(w, api.Errorf(http.StatusBadRequest, "reading set quota request: %v", err))
		return
	}
	var req mquota.QuotaRequest
	if err := api.JSON.Unmarshal(body, &req); err != nil {
		api.WriteError(w, api.Errorf(http.StatusBadRequest, "Failed to parse set quota request JSON '%s': %v", body, err))
		return
	}
	if err := m.setQuota(auth.SubjectFrom(r.Context()), req); err != nil {
		api.WriteError(w, err)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// handleQuotaRemove serves DELETE /quota/<role> (the role may hold
// slashes). Takes m.quotaMu and m.mu.
func (m *Master) handleQuotaRemove(w http.ResponseWriter, r *http.Request) {
	role := strings.TrimPrefix(strings.TrimPrefix(r.URL.Path, "/master"), "/quota/")
	if role == "" {
		api.WriteError(w, api.Errorf(http.StatusBadRequest, "Failed to parse remove quota request for path '%s': expected 3 tokens, found 2 tokens", r.URL.Path))
		return
	}
	qc := removeQuotaCall
	qc.prefix = "Failed to remove quota for path '" + r.URL.Path + "': "
	if err := m.removeQuota(auth.SubjectFrom(r.Context()), role, qc); err != nil {
		api.WriteError(w, err)
		return
	}
	w.WriteHeader(http.StatusOK)
}
