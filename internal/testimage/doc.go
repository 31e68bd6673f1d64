// Package testimage is what tests of container images share: a registry
// (go-containerregistry's in-process one) on loopback that counts the
// blobs it serves and can demand basic auth, and a tiny image built from
// Debian's busybox-static (/bin/busybox) with a marker file and an
// /etc/os-release of its own, so a test can tell the image's files from the
// host's. A host without /bin/busybox skips the test saying so.
package testimage
