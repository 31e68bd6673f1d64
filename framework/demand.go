package framework

import (
	"fmt"
	"os"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/allot-sched/allot/api"
	predict "github.com/allot-sched/allot/framework/predict/profile"
)

// loadDemandModel reads Config.DemandModel ("" for none). A configured
// model that cannot be read is a configuration error; a model that does not
// know the application is not (see predictedDemand).
func loadDemandModel(path string) (*predict.Model, error) {
	if path == "" {
		return nil, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("demand model: %w", err)
	}
	return predict.UnmarshalModel(b)
}

// predictedDemand is the AppDemand pseudo-resource Prophet's sorter reads
// from the REQUEST: cfg.Executors executors, each reserving what the
// backend launches (the executor's cores and memory plus the executor
// process's own share, so the sorter's cpu/mem fit matches the offers the
// backend accepts), following the profile the model predicts for cfg's
// cores and declared input size. ok is false, with the reason, when the
// model has nothing for this application or setting: the application then
// runs undeclared, and its log is what the next training learns from.
func predictedDemand(m *predict.Model, cfg Config) (res mesos.Resource, ok bool, why string) {
	if m == nil {
		return mesos.Resource{}, false, "no model"
	}
	d, err := m.Predict(cfg.App, predict.Setting{Cores: cfg.Cores, InputBytes: cfg.InputBytes, Executors: cfg.Executors, MemMB: cfg.MemMB})
	if err != nil {
		return mesos.Resource{}, false, err.Error()
	}
	d.Executors = max(cfg.Executors, 1)
	d.Cpus, d.Mem = float64(cfg.Cores)+executorCPUs, float64(cfg.MemMB)+executorMem
	if err := d.Validate(); err != nil {
		return mesos.Resource{}, false, err.Error()
	}
	res, err = api.AppDemandResource(api.AppDemandFromProfile(d))
	if err != nil {
		return mesos.Resource{}, false, err.Error()
	}
	return res, true, fmt.Sprintf("E=%d, %d stages, life %v", d.Executors, len(d.Profile.Stages), d.Profile.Life())
}
