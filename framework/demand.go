package framework

import (
	"fmt"
	"os"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/allot-sched/allot/api"
	predict "github.com/allot-sched/allot/framework/predict/profile"
	"github.com/allot-sched/allot/profile"
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
	return demandResource(d, cfg)
}

// demandResource completes d with what the backend launches (E, and each
// executor's cpus and memory with the executor process's share) and turns
// it into the REQUEST's pseudo-resource; d is changed in place, so the
// caller holds the profile it declared.
func demandResource(d *profile.AppDemand, cfg Config) (res mesos.Resource, ok bool, why string) {
	d.Executors = max(cfg.Executors, 1)
	d.Cpus, d.Mem = float64(cfg.Cores)+executorCPUs, float64(cfg.MemMB)+executorMem
	if err := d.Validate(); err != nil {
		return mesos.Resource{}, false, err.Error()
	}
	res, err := api.AppDemandResource(api.AppDemandFromProfile(d))
	if err != nil {
		return mesos.Resource{}, false, err.Error()
	}
	return res, true, fmt.Sprintf("E=%d, %d stages, life %v", d.Executors, len(d.Profile.Stages), d.Profile.Life())
}

// declaredProfile is the executor profile the Mesos backend declares, and
// places and backs off by: Config.Profile if given, else the demand
// model's prediction; nil when there is none (why says so).
func declaredProfile(cfg Config) (res mesos.Resource, p *profile.Profile, why string, err error) {
	var d *profile.AppDemand
	switch {
	case cfg.Profile != nil:
		d = &profile.AppDemand{Profile: profile.Profile{Stages: append([]profile.Stage(nil), cfg.Profile.Stages...)}}
		why = "Config.Profile"
	case cfg.DemandModel != "":
		model, err := loadDemandModel(cfg.DemandModel)
		if err != nil {
			return mesos.Resource{}, nil, "", err
		}
		if d, err = model.Predict(cfg.App, predict.Setting{Cores: cfg.Cores, InputBytes: cfg.InputBytes, Executors: cfg.Executors, MemMB: cfg.MemMB}); err != nil {
			return mesos.Resource{}, nil, "demand model " + cfg.DemandModel + ": " + err.Error(), nil
		}
		why = "demand model " + cfg.DemandModel
	default:
		return mesos.Resource{}, nil, "no profile", nil
	}
	res, ok, how := demandResource(d, cfg)
	if !ok {
		return mesos.Resource{}, nil, why + ": " + how, nil
	}
	return res, &d.Profile, why + ": " + how, nil
}
