package agent

import (
	"errors"

	"github.com/allot-sched/allot/agent/nslaunch"
)

// imageSpec fills the image part of ex's container Spec.
func (a *Agent) imageSpec(ex *executor, s *nslaunch.Spec) error {
	if ex.container.GetMesos().GetImage() == nil {
		return nil
	}
	return errors.New("container images are not supported yet")
}

// releaseImage frees container cid's rootfs.
func (a *Agent) releaseImage(cid string) {}
