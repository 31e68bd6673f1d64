package master

import (
	"encoding/json"
	"net/http"
	"sort"
	"strconv"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"

	"github.com/allot-sched/allot/allocator"
	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/api/operator"
	"github.com/allot-sched/allot/auth"
	"github.com/allot-sched/allot/resources"
)

// Inverse offers: the allocator's give-back requests (allocator/reclaim.go,
// on with Config.Reclaim) sent as Mesos INVERSE_OFFERS, their answers
// (ACCEPT_INVERSE_OFFERS, DECLINE_INVERSE_OFFERS) and the pressure figure
// operators read at /pressure and in /state.
//
// The allocator decides afresh every cycle from its state and keeps no
// memory of what was asked; the table here is what makes that a
// conversation. One inverse offer is outstanding per (framework, agent) at
// a time: a decision already outstanding is not sent again; one the
// allocator no longer makes (the starving framework got room, or left) is
// rescinded with RESCIND_INVERSE_OFFER; an answer removes it and, with
// the answer's filters (Mesos's refuse_seconds, 5 s when absent), keeps
// the pair quiet for that long, so a framework that accepted has time to
// release and one that declined is not asked again at once. Inverse
// offers are leader-local, like offers: a new leader's allocator decides
// them again.

// inverseOffer is one outstanding inverse offer.
type inverseOffer struct {
	id, fw, agent string
	res           resources.Resources
	reason        string
	sent          time.Time
}

// inverseTable is the master's inverse offers, guarded by m.mu.
type inverseTable struct {
	byID  map[string]*inverseOffer
	byKey map[string]*inverseOffer // inverseKey(fw, agent)
	quiet map[string]time.Time     // inverseKey -> no new inverse offer before
}

func inverseKey(fw, agent string) string { return fw + "\x00" + agent }

func (t *inverseTable) init() {
	if t.byID == nil {
		t.byID, t.byKey, t.quiet = map[string]*inverseOffer{}, map[string]*inverseOffer{}, map[string]time.Time{}
	}
}

func (t *inverseTable) remove(io *inverseOffer) {
	delete(t.byID, io.id)
	delete(t.byKey, inverseKey(io.fw, io.agent))
}

// sendInverseOffersLocked reconciles the table with this cycle's
// decisions: new ones go out (one INVERSE_OFFERS event per framework),
// outstanding ones no longer decided are rescinded. Caller holds m.mu.
func (m *Master) sendInverseOffersLocked(decided []allocator.InverseOffer) {
	t := &m.inverse
	if len(decided) == 0 && len(t.byID) == 0 {
		return
	}
	t.init()
	now := m.clock.Now()
	for k, until := range t.quiet {
		if !now.Before(until) {
			delete(t.quiet, k)
		}
	}
	live := map[string]bool{}
	byFw := map[string][]mesos.InverseOffer{}
	for _, d := range decided {
		key := inverseKey(d.Framework, d.Agent)
		live[key] = true
		if t.byKey[key] != nil || !t.quiet[key].IsZero() {
			continue
		}
		fw, a := m.frameworks[d.Framework], m.agents[d.Agent]
		if fw == nil || fw.stream == nil || a == nil {
			continue
		}
		m.seq++
		io := &inverseOffer{id: m.id + "-I" + strconv.FormatUint(m.seq, 10), fw: fw.id, agent: a.rec.Id, res: d.Resources, reason: d.Reason, sent: now}
		t.byID[io.id], t.byKey[key] = io, io
		byFw[fw.id] = append(byFw[fw.id], mesos.InverseOffer{OfferID: mesos.OfferID{Value: io.id}, FrameworkID: mesos.FrameworkID{Value: fw.id},
			AgentID: &mesos.AgentID{Value: a.rec.Id}, Unavailability: m.inverseUnavailabilityLocked(a),
			Resources: resources.ToMesos(io.res, "", "")})
		m.log.Info().Str("framework_id", fw.id).Str("agent_id", a.rec.Id).Str("resources", io.res.String()).Str("reason", io.reason).Msg("inverse offer")
	}
	for _, id := range sortedKeys(t.byID) {
		if io := t.byID[id]; !live[inverseKey(io.fw, io.agent)] {
			t.remove(io)
			m.sendFrameworkLocked(m.frameworks[io.fw], &schedEvent{Type: scheduler.Event_RESCIND_INVERSE_OFFER,
				RescindInverseOffer: &scheduler.Event_RescindInverseOffer{InverseOfferID: mesos.OfferID{Value: io.id}}})
		}
	}
	for _, fwID := range sortedKeys(byFw) {
		m.sendFrameworkLocked(m.frameworks[fwID], &schedEvent{Type: scheduler.Event_INVERSE_OFFERS,
			InverseOffers: &scheduler.Event_InverseOffers{InverseOffers: byFw[fwID]}})
	}
}

// inverseAnswerLocked applies ACCEPT_INVERSE_OFFERS or
// DECLINE_INVERSE_OFFERS. Ids that are not (or no longer) fw's outstanding
// inverse offers are ignored, as Mesos does: a rescind may cross the
// answer. Accepting changes no books: the framework gives the resources
// back by ending its tasks, and the allocator stops asking once the
// starving framework has room. Caller holds m.mu.
func (m *Master) inverseAnswerLocked(fw *framework, call *scheduler.Call) error {
	var ids []mesos.OfferID
	var filters *mesos.Filters
	switch {
	case call.Type == scheduler.Call_ACCEPT_INVERSE_OFFERS && call.AcceptInverseOffers != nil:
		ids, filters = call.AcceptInverseOffers.InverseOfferIDs, call.AcceptInverseOffers.Filters
	case call.Type == scheduler.Call_DECLINE_INVERSE_OFFERS && call.DeclineInverseOffers != nil:
		ids, filters = call.DeclineInverseOffers.InverseOfferIDs, call.DeclineInverseOffers.Filters
	default:
		return api.Errorf(http.StatusBadRequest, "%s call without its inverse_offer_ids", call.Type)
	}
	t := &m.inverse
	t.init()
	quiet := time.Duration(filterOf(filters).RefuseSeconds * float64(time.Second))
	now := m.clock.Now()
	for _, id := range ids {
		io := t.byID[id.Value]
		if io == nil || io.fw != fw.id {
			continue
		}
		t.remove(io)
		m.noteInverseAnswerLocked(io, call.Type)
		if quiet > 0 {
			t.quiet[inverseKey(io.fw, io.agent)] = now.Add(quiet)
		}
		m.log.Info().Str("framework_id", fw.id).Str("agent_id", io.agent).Str("inverse_offer_id", io.id).
			Str("answer", call.Type.String()).Msg("inverse offer answered")
	}
	m.triggerAllocation()
	return nil
}

// pressureLocked reads the allocator's pressure and the outstanding
// inverse offers. Caller holds m.mu.
func (m *Master) pressureLocked() operator.Pressure {
	doc := operator.Pressure{Reclaim: m.allocCfg.Reclaim, Starving: []operator.Starving{}, InverseOffers: []operator.InverseOffer{}}
	for _, s := range m.alloc.Pressure() {
		e := operator.Starving{FrameworkID: s.Framework, Role: s.Role, Share: s.Share, FairShare: s.FairShare, Reason: s.Reason}
		if s.Need != (resources.Vector{}) {
			e.Need = stateScalars(resources.Resources{Scalars: s.Need})
		}
		doc.Starving = append(doc.Starving, e)
	}
	ios := make([]*inverseOffer, 0, len(m.inverse.byID))
	for _, io := range m.inverse.byID {
		ios = append(ios, io)
	}
	sort.Slice(ios, func(i, j int) bool { return ios[i].id < ios[j].id })
	for _, io := range ios {
		doc.InverseOffers = append(doc.InverseOffers, operator.InverseOffer{ID: io.id, FrameworkID: io.fw, AgentID: io.agent,
			Resources: stateScalars(io.res), Reason: io.reason, Sent: float64(io.sent.UnixNano()) / 1e9})
	}
	return doc
}

// handlePressure serves GET /pressure (and /master/pressure), without
// the frameworks the caller may not view.
func (m *Master) handlePressure(w http.ResponseWriter, r *http.Request) {
	m.mu.Lock()
	doc := m.visiblePressureLocked(auth.SubjectFrom(r.Context()), m.pressureLocked())
	m.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(doc)
}
