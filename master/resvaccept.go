package master

// Reservation and volume operations in ACCEPT (RESERVE, UNRESERVE, CREATE,
// DESTROY, GROW_VOLUME, SHRINK_VOLUME). They are planned with the rest of
// the call against what the offers hold, exactly for reserved resources and
// by quantity for unreserved ones, and carried out before its launches.
// What an operation converts goes back to the allocator in its new form,
// to be offered again; a LAUNCH in the same ACCEPT uses only what the
// offers held before (docs/roles.md says so: Mesos would let it use the
// converted resources at once). A task that uses reserved resources or a
// volume must find them, exactly, in the offers.

import (
	"fmt"
	"net/http"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/resources"
)

// acceptResv is an ACCEPT's reservation state while it is planned.
type acceptResv struct {
	m  *Master
	fw *framework
	a  *agentState
	// offered is the exact reserved resources the offers hold that no
	// operation or task of the call has taken yet.
	offered mesos.Resources
	ops     []plannedOp
	// failed are operations with an id that were invalid: each gets
	// OPERATION_ERROR, and the rest of the call goes on, as in Mesos.
	failed []opFeedback
}

// plannedOp is a validated operation and what it converts.
type plannedOp struct {
	op   *mesos.Offer_Operation
	conv resources.Conversion
}

// opFeedback is an operation's outcome for its framework.
type opFeedback struct {
	op    *mesos.Offer_Operation
	id    string
	state mesos.OperationState
	msg   string
	conv  mesos.Resources
}

func (m *Master) newAcceptResv(fw *framework, p *acceptPlan) *acceptResv {
	r := &acceptResv{m: m, fw: fw, a: p.agent}
	for _, o := range p.offers {
		r.offered = append(r.offered, o.exact...)
	}
	return r
}

// isResourceOperation reports whether t is an operation acceptResv plans.
func isResourceOperation(t mesos.Offer_Operation_Type) bool {
	switch t {
	case mesos.Offer_Operation_RESERVE, mesos.Offer_Operation_UNRESERVE, mesos.Offer_Operation_CREATE,
		mesos.Offer_Operation_DESTROY, mesos.Offer_Operation_GROW_VOLUME, mesos.Offer_Operation_SHRINK_VOLUME:
		return true
	}
	return false
}

// resourceOperation plans one reservation or volume operation of the
// call, taking what it consumes from the offers. An invalid operation is
// dropped and the rest of the call goes on, as Mesos's master drops it:
// with OPERATION_ERROR where it has an id, silently (but logged) where the
// framework gave it none. Under m.mu.
func (c *taskChecker) resourceOperation(op *mesos.Offer_Operation) {
	conv, err := c.resv.plan(op, c.remaining)
	if err != nil {
		if op.ID == nil {
			c.resv.m.log.Warn().Str("framework_id", c.fw.id).Str("operation", op.GetType().String()).Err(err).Msg("dropping an invalid operation")
			return
		}
		c.resv.failed = append(c.resv.failed, opFeedback{id: op.ID.Value, state: mesos.OPERATION_ERROR, msg: err.Error(), op: op})
		return
	}
	c.remaining = c.remaining.Sub(mesosQuantity(conv.Consumed))
	c.resv.ops = append(c.resv.ops, plannedOp{op: op, conv: conv})
}

// plan validates op for the framework against the offers: its reserved
// part must be in them exactly, its unreserved part by quantity in what of
// remaining is unreserved.
func (r *acceptResv) plan(op *mesos.Offer_Operation, remaining resources.Resources) (resources.Conversion, error) {
	name := op.Type.String()
	if err := r.frameworkMay(op, name); err != nil {
		return resources.Conversion{}, err
	}
	conv, err := resources.Convert(r.a.resv.total, op)
	if err != nil {
		return conv, err
	}
	var reserved, unreserved mesos.Resources
	for _, c := range conv.Consumed {
		if c.ReservationRole() == resources.Unreserved {
			unreserved = append(unreserved, c)
		} else {
			reserved = append(reserved, c)
		}
	}
	if err := resources.Holds(r.offered, reserved); err != nil {
		return conv, fmt.Errorf("%s: %v in the offers", name, err)
	}
	free := remaining.Sub(mesosQuantity(r.offered))
	if need := mesosQuantity(unreserved); !free.Contains(need) {
		return conv, fmt.Errorf("%s: needs %s unreserved but the offers hold %s", name, need, free)
	}
	r.offered = r.offered.Minus(reserved...)
	return conv, nil
}

// frameworkMay applies Mesos's rules for a framework's operation: its
// reservations are for one of its roles with its principal, and the ACLs
// allow it.
func (r *acceptResv) frameworkMay(op *mesos.Offer_Operation, name string) error {
	if op.Type == mesos.Offer_Operation_RESERVE && op.Reserve != nil {
		roles := frameworkRoles(&r.fw.info)
		for _, res := range op.Reserve.Resources {
			n := len(res.Reservations)
			if n == 0 {
				continue // Convert names it
			}
			last := res.Reservations[n-1]
			if !containsString(roles, last.GetRole()) {
				return fmt.Errorf("%s: a reservation for role %q was attempted but the framework's roles are %v", name, last.GetRole(), roles)
			}
			if p := r.fw.info.GetPrincipal(); p != "" && last.GetPrincipal() != p {
				return fmt.Errorf("%s: a reservation with principal %q was attempted, which does not match the framework's principal %q", name, last.GetPrincipal(), p)
			}
		}
	}
	if err := r.m.authorizeOperation(r.fw.subject, op); err != nil {
		return fmt.Errorf("%s: %v", name, err)
	}
	return nil
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// checkTaskExact takes a task's reserved resources and volumes from the
// offers, exactly; its unreserved ones were checked by quantity.
func (r *acceptResv) checkTaskExact(t *mesos.TaskInfo) error {
	var want mesos.Resources
	for _, res := range t.Resources {
		if res.ReservationRole() != resources.Unreserved || res.IsPersistentVolume() {
			want = append(want, res)
		}
	}
	if len(want) == 0 {
		return nil
	}
	if err := resources.Holds(r.offered, want); err != nil {
		return api.Errorf(http.StatusBadRequest, "ACCEPT: task %q: %v in the offers", t.TaskID.Value, err)
	}
	r.offered = r.offered.Minus(want...)
	return nil
}

// mesosQuantity sums exact resources as quantities.
func mesosQuantity(list []mesos.Resource) resources.Resources {
	return resources.Total(byPool(list))
}

// applyAcceptOpsLocked carries out the call's operations: what each
// consumed goes back to the allocator from its pool, the agent's resources
// are converted, and operations with an id hear how it went. Caller holds
// m.mu.
func (m *Master) applyAcceptOpsLocked(fw *framework, p *acceptPlan) {
	r := p.resv
	if r == nil {
		return
	}
	id := p.agent.rec.Id
	for _, pl := range r.ops {
		m.recoverPooledLocked(fw.id, id, "", mesosQuantity(pl.conv.Consumed), byPool(pl.conv.Consumed), nil)
		fb := opFeedback{state: mesos.OPERATION_FINISHED, conv: pl.conv.Converted}
		if _, err := m.applyOperationLocked(p.agent, pl.op, pl.op.Type.String(), p.agent.resv.total, nil); err != nil {
			fb.state, fb.msg = mesos.OPERATION_FAILED, err.Error()
		}
		if pl.op.ID != nil {
			fb.id = pl.op.ID.Value
			m.operationStatusLocked(fw, id, pl.op, fb)
		}
	}
	for _, fb := range r.failed {
		m.operationStatusLocked(fw, id, fb.op, fb)
	}
}

// recoverRemainingLocked returns what an ACCEPT left of its offers: the
// exact reserved resources nothing took to their pools, the rest as
// unreserved. Caller holds m.mu.
func (m *Master) recoverRemainingLocked(fw *framework, p *acceptPlan) {
	var reserved map[string]resources.Resources
	if p.resv != nil {
		reserved = byPool(p.resv.offered)
	}
	m.recoverPooledLocked(fw.id, p.agent.rec.Id, p.role, p.remaining, reserved, p.filter)
}
