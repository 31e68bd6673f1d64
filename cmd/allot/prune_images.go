package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	magent "github.com/mesos/mesos-go/api/v1/lib/agent"
)

func init() {
	register(command{name: "prune-images", summary: "remove an agent's cached container images that no live container uses: prune-images AGENT [--exclude IMAGE]...", run: runPruneImages})
}

// imageList is a repeatable --exclude.
type imageList []string

func (l *imageList) String() string { return strings.Join(*l, ",") }
func (l *imageList) Set(v string) error {
	if strings.TrimSpace(v) == "" {
		return fmt.Errorf("an empty image name")
	}
	*l = append(*l, v)
	return nil
}

// runPruneImages sends Mesos's PRUNE_IMAGES agent call to the agent the
// master names (the master's operator API has no such call): the agent
// removes every cached image and layer no live container uses, but the
// excluded images.
func runPruneImages(args []string, stdout, stderr io.Writer) error {
	fs, c := newCLIFlags("prune-images", "AGENT [--exclude IMAGE]... [flags]", "Remove from AGENT's image store every container image and layer that no live container\nuses (Mesos's PRUNE_IMAGES agent call), but the images named by --exclude (as tasks name\nthem, e.g. busybox:1.36). The agent is reached at the address the master's /state gives;\nthe call needs the prune_images ACL there. The agent id's short form will do.", stderr)
	var exclude imageList
	fs.Var(&exclude, "exclude", "keep this `IMAGE` (repeat for more)")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("usage: allot prune-images AGENT [--exclude IMAGE]... (allot agents lists the ids)")
	}
	st, err := c.state()
	if err != nil {
		return err
	}
	id, err := resolveID(kindAgent, pos[0], knownIDs(st, kindAgent))
	if err != nil {
		return err
	}
	addr, err := agentAddr(st, id) // task_gpus.go
	if err != nil {
		return err
	}
	pc := &magent.Call_PruneImages{ExcludedImages: []mesos.Image{}}
	for _, name := range exclude {
		pc.ExcludedImages = append(pc.ExcludedImages, mesos.Image{Type: mesos.Image_DOCKER.Enum(), Docker: &mesos.Image_Docker{Name: name}})
	}
	body, err := json.Marshal(&magent.Call{Type: magent.Call_PRUNE_IMAGES, PruneImages: pc})
	if err != nil {
		return err
	}
	if _, err := call(c.client(), addr, http.MethodPost, "/api/v1", body); err != nil {
		return fmt.Errorf("agent %s at %s: %w", id, addr, err)
	}
	if c.json {
		return printJSON(stdout, map[string]any{"agent_id": id, "address": addr, "excluded": []string(exclude), "pruned": true})
	}
	fmt.Fprintf(stdout, "agent %s: images no live container uses pruned", id)
	if len(exclude) > 0 {
		fmt.Fprintf(stdout, " (kept %s)", strings.Join(exclude, ", "))
	}
	fmt.Fprintln(stdout)
	return nil
}
