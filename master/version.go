package master

import (
	"encoding/json"
	"net/http"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// MesosVersion is the Mesos release whose HTTP APIs allot implements. It
// is what every field a Mesos client reads a version from reports (/version
// and GET_VERSION's version, MasterInfo.version, the agents' version in
// GET_AGENTS, /state's version): client libraries switch features on it,
// and one that read allot's own 0.x version took it for a pre-1.0 Mesos.
// allot's own Version goes beside it (versionInfo, handleVersion).
const MesosVersion = "1.11.0"

// versionInfo is GET_VERSION's answer: the Mesos API version in version,
// allot's own as git_tag "allot-<Version>" (Mesos's VersionInfo has no
// field of its own for it).
func versionInfo() mesos.VersionInfo {
	return mesos.VersionInfo{Version: MesosVersion, GitTag: strPtr("allot-" + Version)}
}

// handleVersion is GET /version: Mesos's document, with the Mesos API
// version in version and git_tag as GET_VERSION has them, and allot's own
// version in allot_version.
func handleVersion(w http.ResponseWriter, r *http.Request) {
	vi := versionInfo()
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]string{"version": vi.Version, "git_tag": vi.GetGitTag(), "allot_version": Version})
}
