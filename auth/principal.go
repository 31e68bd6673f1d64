package auth

import "context"

type principalKey struct{}

// WithPrincipal returns a context that carries the authenticated principal
// of the request it belongs to.
func WithPrincipal(ctx context.Context, principal string) context.Context {
	return context.WithValue(ctx, principalKey{}, principal)
}

// PrincipalFrom returns the principal an authenticator stored in ctx, and
// whether there was one. An unauthenticated request has none.
func PrincipalFrom(ctx context.Context) (string, bool) {
	p, ok := ctx.Value(principalKey{}).(string)
	return p, ok
}
