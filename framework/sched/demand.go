package sched

import (
	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

func demandRequest(d Demand) mesos.Request {
	res := append([]mesos.Resource(nil), d.Resources...)
	if d.Tasks > 0 {
		res = append(res, Scalar("tasks", float64(d.Tasks)))
	}
	return mesos.Request{Resources: res}
}

// Scalar builds a scalar resource.
func Scalar(name string, v float64) mesos.Resource {
	return mesos.Resource{Name: name, Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: v}}
}

// ScalarOf sums the named scalar over an offer's resources (all roles).
func ScalarOf(list []mesos.Resource, name string) float64 {
	var v float64
	for _, r := range list {
		if r.Name == name && r.GetType() == mesos.SCALAR {
			v += r.GetScalar().GetValue()
		}
	}
	return v
}
