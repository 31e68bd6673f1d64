package operator

// Roles is GET /roles, as Mesos's /roles endpoint answers it: every role
// with a weight, a quota, a reservation or a framework, and their
// ancestors.
type Roles struct {
	Roles []Role `json:"roles"`
}

// Role is one role of GET /roles. Resources are scalar name -> amount;
// Allocated and Reserved count the role's descendants too.
type Role struct {
	Allocated  map[string]float64 `json:"allocated"`
	Frameworks []string           `json:"frameworks"`
	Name       string             `json:"name"`
	Quota      RoleQuota          `json:"quota"`
	Reserved   map[string]float64 `json:"reserved"`
	// Resources is Allocated under Mesos's older name.
	Resources map[string]float64 `json:"resources"`
	Weight    float64            `json:"weight"`
}

// RoleQuota is a role's quota: what it is guaranteed and what it may not
// exceed (a resource absent from Limit has no limit).
type RoleQuota struct {
	Guarantee map[string]float64 `json:"guarantee"`
	Limit     map[string]float64 `json:"limit"`
	Role      string             `json:"role"`
}
