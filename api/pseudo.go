package api

import (
	"fmt"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// The wire signals a framework adds to a REQUEST call beside its per-task
// demand (the application demand, the job size) share one shape: a SET
// pseudo-resource of a name of their own, at most once per call. These
// are the parts they share; each signal decodes its items its own way.

// splitPseudo takes the pseudo-resource name out of a REQUEST's
// resources: what decode makes of it (the zero T when there is none) and
// the other resources, in order. decode's error is returned as it is, so
// it says which resource and key is at fault, for a 400.
func splitPseudo[T any](list []mesos.Resource, name string, decode func(*mesos.Resource) (T, error)) (T, []mesos.Resource, error) {
	var (
		found T
		seen  bool
		rest  []mesos.Resource
	)
	for i := range list {
		res := &list[i]
		if res.Name != name {
			rest = append(rest, *res)
			continue
		}
		if seen {
			var zero T
			return zero, nil, fmt.Errorf("resource %q appears more than once", name)
		}
		m, err := decode(res)
		if err != nil {
			var zero T
			return zero, nil, err
		}
		found, seen = m, true
	}
	return found, rest, nil
}

// setItems is a pseudo-resource's items; it must be of type SET.
func setItems(res *mesos.Resource) ([]string, error) {
	if res.GetType() != mesos.SET {
		return nil, fmt.Errorf("must be of type SET, not %v", res.GetType())
	}
	return res.GetSet().GetItem(), nil
}
