// Package imagestore is the agent's Docker/OCI image provisioner: it pulls
// images from registries speaking the OCI distribution API (through
// go-containerregistry: HTTPS, bearer-token and basic auth with credentials
// from a docker-config-style file), keeps their layers extracted in a
// content-addressed store under the agent's work dir that every container
// shares, and assembles each container's root filesystem from them:
// overlayfs where the kernel allows it, a copy otherwise (Backend says which
// and why).
//
// The store is bounded: after each pull, layers no live container uses are
// removed, least recently used first, until the store is under its cap.
// An image reference pulled once is served from the store without asking
// the registry again unless the task asks for a fresh pull (Mesos's
// Image.cached=false).
//
// Layout under Config.Dir (Mesos's docker store, under the agent's work
// dir):
//
//	layers/<hex>/        a layer's files, whiteouts in overlayfs form
//	                     (0/0 character devices, trusted.overlay.opaque)
//	images.json          reference -> manifest digest, layers, runtime config
//	staging/             layers being extracted (removed at start)
//
// and under each container's directory (Provision):
//
//	rootfs/              the assembled root filesystem (a mount point for overlay)
//	upper/, work/        overlayfs's writable layer
//	image.json           the layers it holds, for GC after an agent restart
package imagestore
