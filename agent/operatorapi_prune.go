package agent

import (
	"errors"
	"fmt"
	"net/http"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	magent "github.com/mesos/mesos-go/api/v1/lib/agent"

	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/auth"
)

// pruneImages applies PRUNE_IMAGES (Mesos's agent call): every cached
// image and layer no live container uses is removed from the image store,
// but for prune_images.excluded_images. prune_images ACLs authorize it
// (Mesos's, object "images": ANY or NONE). As in Mesos, the answer is 200
// with no body, and an agent without an image store has nothing to prune.
func (a *Agent) pruneImages(who auth.Subject, c *magent.Call_PruneImages) error {
	var excluded []string
	if c != nil {
		for i, img := range c.ExcludedImages {
			ref, err := excludedImageRef(img)
			if err != nil {
				return api.Errorf(http.StatusBadRequest, "PRUNE_IMAGES: excluded_images[%d]: %v", i, err)
			}
			excluded = append(excluded, ref)
		}
	}
	if a.cfg.Authorizer != nil {
		if err := a.cfg.Authorizer.Authorize(who, auth.PruneImages, ""); err != nil {
			a.log.Warn().Bool("authenticated", who.Authenticated).Str("principal", who.Principal).Msg("authorization denied: PRUNE_IMAGES")
			return api.Errorf(http.StatusForbidden, "PRUNE_IMAGES: %v", err)
		}
	}
	if a.images.store == nil {
		a.log.Info().Str("principal", who.Principal).Str("why", a.images.missing).Msg("PRUNE_IMAGES: no image store on this agent; nothing to prune")
		return nil
	}
	p, err := a.images.store.Prune(excluded)
	if err != nil {
		return api.Errorf(http.StatusBadRequest, "PRUNE_IMAGES: %v", err)
	}
	a.log.Info().Str("principal", who.Principal).Strs("excluded", excluded).Int("images_removed", len(p.Images)).
		Int("layers_removed", p.Layers).Int64("bytes_freed", p.Bytes).Strs("images_kept", p.KeptImages).Msg("PRUNE_IMAGES")
	return nil
}

// excludedImageRef is the reference an excluded image names: a DOCKER
// image's docker.name (the only kind the store holds).
func excludedImageRef(img mesos.Image) (string, error) {
	if img.GetType() != mesos.Image_DOCKER {
		return "", fmt.Errorf("image of type %s: only DOCKER images are stored here", img.GetType())
	}
	if img.Docker == nil || img.Docker.Name == "" {
		return "", errors.New("a DOCKER image without docker.name")
	}
	return img.Docker.Name, nil
}
