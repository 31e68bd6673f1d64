package imagestore

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
)

// keychain answers a registry's credentials from a docker config's
// "auths" (what `docker login` writes): "auth" (base64 user:password),
// "username"/"password", or an "identitytoken". A registry it does not
// name is asked anonymously (and may then hand out a bearer token).
type keychain struct {
	auths map[string]authn.AuthConfig // by registry host
}

type dockerConfig struct {
	Auths map[string]struct {
		Auth          string `json:"auth"`
		Username      string `json:"username"`
		Password      string `json:"password"`
		IdentityToken string `json:"identitytoken"`
		RegistryToken string `json:"registrytoken"`
	} `json:"auths"`
}

// loadKeychain reads src: a docker config file's path, or its JSON when
// src starts with "{" (as Mesos's --docker_config takes either).
func loadKeychain(src string) (*keychain, error) {
	kc := &keychain{auths: map[string]authn.AuthConfig{}}
	src = strings.TrimSpace(src)
	if src == "" {
		return kc, nil
	}
	b := []byte(src)
	if !strings.HasPrefix(src, "{") {
		var err error
		if b, err = os.ReadFile(strings.TrimPrefix(src, "file://")); err != nil {
			return nil, fmt.Errorf("docker config: %w", err)
		}
	}
	var dc dockerConfig
	if err := json.Unmarshal(b, &dc); err != nil {
		return nil, fmt.Errorf("docker config: not a docker config.json: %w", err)
	}
	for key, e := range dc.Auths {
		ac := authn.AuthConfig{Username: e.Username, Password: e.Password, IdentityToken: e.IdentityToken, RegistryToken: e.RegistryToken}
		if e.Auth != "" {
			raw, err := base64.StdEncoding.DecodeString(e.Auth)
			user, pass, ok := strings.Cut(string(raw), ":")
			if err != nil || !ok {
				return nil, fmt.Errorf("docker config: the auth of %q is not base64 of user:password", key)
			}
			ac.Username, ac.Password = user, pass
		}
		kc.auths[registryHost(key)] = ac
	}
	return kc, nil
}

// registryHost is the host a config key names: keys are written as
// "host[:port]", "https://host/v1/" or Docker Hub's legacy
// "https://index.docker.io/v1/".
func registryHost(key string) string {
	key = strings.TrimPrefix(strings.TrimPrefix(key, "https://"), "http://")
	key, _, _ = strings.Cut(key, "/")
	if key == "docker.io" || key == "registry-1.docker.io" {
		return "index.docker.io"
	}
	return key
}

// Resolve implements authn.Keychain.
func (k *keychain) Resolve(r authn.Resource) (authn.Authenticator, error) {
	if ac, ok := k.auths[registryHost(r.RegistryStr())]; ok {
		return authn.FromConfig(ac), nil
	}
	return authn.Anonymous, nil
}
