package operator

import (
	"reflect"
	"sort"
	"strings"
	"testing"
)

// jsonNames lists the JSON names of v's fields in declaration order.
func jsonNames(v any) []string {
	var names []string
	typ := reflect.TypeOf(v)
	for i := 0; i < typ.NumField(); i++ {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		names = append(names, name)
	}
	return names
}

// State's and Allocator's fields keep the order of their JSON names: the
// master wrote /state from maps, whose keys encoding/json sorts, and
// clients that compare documents byte for byte must see the same order.
func TestStateFieldsInJSONNameOrder(t *testing.T) {
	for _, v := range []any{State{}, Allocator{}} {
		if names := jsonNames(v); !sort.StringsAreSorted(names) {
			t.Errorf("%T's JSON names %v are not in sorted order", v, names)
		}
	}
}
