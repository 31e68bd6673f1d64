package master

import (
	"net/http"
	"sort"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"google.golang.org/protobuf/proto"

	"github.com/allot-sched/allot/allocator/policy"
	"github.com/allot-sched/allot/api"
)

// Job sizes for the size-based sorters (fsp, fspy): a framework declares
// its head job through FrameworkInfo labels or a REQUEST (api/jobsize.go
// has the keys); the master validates the declaration, answering 400
// with the key at fault before anything changes, and gives it to
// allocator.Observe.
//
// Which declaration counts. The latest one, from either source. Labels
// declare when they differ from the labels the master held for the
// framework before (a new framework: when present): a framework that
// re-subscribes after its own or the master's failover sends the same
// FrameworkInfo again, and that must neither undo a size a REQUEST
// declared since nor restart its job. Labels that disappear leave the
// declaration as it is (the allocator has no "no head job"; a finished
// framework tears down, which takes its job out).
//
// Failover. The latest declaration is replicated in the framework's
// registry record (FrameworkRecord.job_size). The virtual cluster itself
// is a policy model the leader replicates as POLICY_SET; a new leader
// restores it and then declares every recorded size again
// (redeclareJobSizesLocked). The same job with the same size changes
// nothing in the restored model (no second entry, no reset of the
// virtual work done); a declaration made after the last POLICY_SET
// reaches the model as it would have on the old leader.

// labelJobSize reads and validates the job size labels of info; call is
// the call's name for the 400.
func labelJobSize(call string, info *mesos.FrameworkInfo) (*api.JobSize, error) {
	js, err := api.JobSizeFromLabels(info.GetLabels())
	if err != nil {
		return nil, api.Errorf(http.StatusBadRequest, "%s: label %v", call, err)
	}
	return js, nil
}

// oldLabelJobSize is the declaration fw's current labels make (they were
// validated when accepted; a record from before they were read counts as
// none).
func oldLabelJobSize(fw *framework) *api.JobSize {
	if fw == nil {
		return nil
	}
	js, _ := api.JobSizeFromLabels(fw.info.GetLabels())
	return js
}

// labelsDeclareLocked declares js, the job size of fw's new labels,
// unless old (that of its previous labels) says the same. Caller holds
// m.mu.
func (m *Master) labelsDeclareLocked(fw *framework, old, js *api.JobSize) error {
	if js == nil || proto.Equal(old, js) {
		return nil
	}
	return m.declareJobSizeLocked(fw, js)
}

// declareJobSizeLocked gives js to the allocator for fw and keeps it as
// fw's declaration (replicated with the framework's record by the
// caller). A job without a name is named after the framework. Caller
// holds m.mu.
func (m *Master) declareJobSizeLocked(fw *framework, js *api.JobSize) error {
	js = proto.Clone(js).(*api.JobSize)
	if js.Job == "" {
		js.Job = fw.id
	}
	if err := m.alloc.Observe(allocJobSize(fw.id, js)); err != nil {
		return api.Errorf(http.StatusBadRequest, "job size: %v", err)
	}
	fw.jobSize = js
	return nil
}

func allocJobSize(id string, js *api.JobSize) policy.JobSize {
	return policy.JobSize{Framework: id, Job: js.GetJob(), Known: js.IsKnown(), Size: js.GetSizeMbS(), APB: js.GetApbMb(), AM: js.GetAmMb(),
		APBCPUs: js.GetApbCpus(), Probe: js.IsProbe()}
}

// redeclareJobSizesLocked gives the allocator every recovered
// framework's replicated declaration, in framework id order so that the
// jobs the restored model did not hold enter it in a fixed order. Runs
// after restorePoliciesLocked. Caller holds m.mu.
func (m *Master) redeclareJobSizesLocked() {
	ids := make([]string, 0, len(m.frameworks))
	for id, fw := range m.frameworks {
		if fw.jobSize != nil {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	for _, id := range ids {
		fw := m.frameworks[id]
		m.allocOK("set_job_size", m.alloc.Observe(allocJobSize(id, fw.jobSize)), "framework_id", id)
	}
}

// requestJobSizeLocked declares the job size a REQUEST carries and
// replicates it. Caller holds m.mu.
func (m *Master) requestJobSizeLocked(fw *framework, js *api.JobSize) error {
	if err := m.declareJobSizeLocked(fw, js); err != nil {
		return api.Errorf(http.StatusBadRequest, "REQUEST: %s: %v", api.JobSizeResourceName, err)
	}
	m.rep.propose(&api.Command{Type: api.CommandType_FRAMEWORK_UPSERT, Framework: m.frameworkRecordLocked(fw)})
	return nil
}
