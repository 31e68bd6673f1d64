package main

import (
	"bytes"
	"strings"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	mmaster "github.com/mesos/mesos-go/api/v1/lib/master"
)

func TestDynamicResources(t *testing.T) {
	list, err := dynamicResources("cpus(eng):2;disk(eng/ml):100", "ops")
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 {
		t.Fatalf("resources %v", list)
	}
	for _, r := range list {
		ri := r.Reservations[0]
		if ri.GetType() != mesos.Resource_ReservationInfo_DYNAMIC || ri.GetPrincipal() != "ops" || len(r.Reservations) != 1 {
			t.Errorf("reservation %v", r)
		}
	}
	if _, err := dynamicResources("cpus:2", ""); err == nil || !strings.Contains(err.Error(), "has no role") {
		t.Errorf("unreserved resources: %v", err)
	}
}

func TestPrintVolumes(t *testing.T) {
	v, _ := dynamicResources("disk(eng):64", "ops")
	rw := mesos.RW
	v[0].Disk = &mesos.Resource_DiskInfo{Persistence: &mesos.Resource_DiskInfo_Persistence{ID: "v1"}, Volume: &mesos.Volume{ContainerPath: "data", Mode: &rw}}
	id := "A1"
	agents := &mmaster.Response_GetAgents{Agents: []mmaster.Response_GetAgents_Agent{{AgentInfo: mesos.AgentInfo{ID: &mesos.AgentID{Value: id}}, TotalResources: v}}}
	var out bytes.Buffer
	if err := printVolumes(&out, false, idPrinter{}, agents); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "A1     eng   v1  64         data") {
		t.Errorf("table:\n%s", out.String())
	}
	if _, ok := findVolume(agents, "A1", "eng", "v1"); !ok {
		t.Error("findVolume missed v1")
	}
}
