package agent

import (
	"encoding/json"
	"net/http"
	"sort"
	"strings"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// The agent's metrics under Mesos's names (slave/...), as monitoring
// tools written for Mesos scrape them from /metrics/snapshot and as
// GET_METRICS reports them; and the same values as Prometheus gauges at
// /metrics (slave/tasks_running is allot_agent_tasks_running). They are
// read from the agent's live state at each scrape: the gauges Mesos keeps
// for what is running now, and Mesos's lifetime task counters
// (slave/tasks_finished, ..., taskcounters.go). Its other lifetime counters
// (slave/valid_status_updates, ...) are not kept.

// mesosMetrics reads the agent's slave/... metrics.
func (a *Agent) mesosMetrics() map[string]float64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := map[string]float64{"slave/uptime_secs": a.clock().Now().Sub(a.started).Seconds()}
	out["slave/registered"] = boolMetric(a.connected)
	var used limits
	tasks := map[string]float64{}
	var running, registering, terminating float64
	for _, ex := range a.executors {
		switch {
		case ex.exited:
			continue
		case ex.killing:
			terminating++
		case !ex.subscribed:
			registering++
		default:
			running++
		}
		l := executorLimits(ex)
		used.cpus += l.cpus
		used.memBytes += l.memBytes
		used.diskBytes += l.diskBytes
		for _, t := range ex.tasks {
			tasks[strings.ToLower(strings.TrimPrefix(t.state.String(), "TASK_"))]++
		}
	}
	out["slave/executors_running"], out["slave/executors_registering"], out["slave/executors_terminating"] = running, registering, terminating
	for _, s := range []string{"staging", "starting", "running", "killing"} {
		out["slave/tasks_"+s] = tasks[s]
	}
	out["slave/frameworks_active"] = float64(len(a.frameworks))
	a.ended.snapshot(out)
	a.imageMetrics(out) // container_image.go
	usedMB := map[string]float64{"cpus": used.cpus, "mem": float64(used.memBytes) / (1 << 20), "disk": float64(used.diskBytes) / (1 << 20)}
	for _, kind := range []string{"cpus", "mem", "disk", "gpus"} {
		total := a.total.Scalar(kind).Units()
		u := min(usedMB[kind], total)
		out["slave/"+kind+"_total"], out["slave/"+kind+"_used"] = total, u
		out["slave/"+kind+"_percent"] = 0
		if total > 0 {
			out["slave/"+kind+"_percent"] = u / total
		}
	}
	return out
}

func boolMetric(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// mesosMetricList is mesosMetrics as GET_METRICS lists it, by name.
func (a *Agent) mesosMetricList() []mesos.Metric {
	mm := a.mesosMetrics()
	names := make([]string, 0, len(mm))
	for k := range mm {
		names = append(names, k)
	}
	sort.Strings(names)
	out := make([]mesos.Metric, 0, len(names))
	for _, k := range names {
		v := mm[k]
		out = append(out, mesos.Metric{Name: k, Value: &v})
	}
	return out
}

// handleMetricsSnapshot serves /metrics/snapshot: one JSON object of
// metric name -> value, as Mesos's.
func (a *Agent) handleMetricsSnapshot(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(a.mesosMetrics())
}

// handlePrometheus serves /metrics from the agent's registry.
func (a *Agent) handlePrometheus(w http.ResponseWriter, r *http.Request) {
	reg := a.metrics
	if reg == nil { // an Agent built without New (tests)
		reg = a.newMetricsRegistry()
	}
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(w, r)
}

// newMetricsRegistry is a registry whose one collector reports
// mesosMetrics as allot_agent_* gauges.
func (a *Agent) newMetricsRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(metricsCollector{a})
	reg.MustRegister(cniCollector{a}) // container_network.go
	return reg
}

type metricsCollector struct{ a *Agent }

// Describe sends nothing: the collector is unchecked, its names come from
// mesosMetrics.
func (metricsCollector) Describe(chan<- *prometheus.Desc) {}

func (c metricsCollector) Collect(ch chan<- prometheus.Metric) {
	for name, v := range c.a.mesosMetrics() {
		prom := "allot_agent_" + strings.TrimPrefix(name, "slave/")
		d := prometheus.NewDesc(prom, "Mesos's "+name+".", nil, nil)
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v)
	}
}
