package auth

import (
	"context"
	"testing"
)

func TestPrincipalContext(t *testing.T) {
	tests := []struct {
		name string
		ctx  context.Context
		want string
		ok   bool
	}{
		{"none", context.Background(), "", false},
		{"set", WithPrincipal(context.Background(), "alice"), "alice", true},
		{"empty principal is still set", WithPrincipal(context.Background(), ""), "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := PrincipalFrom(tt.ctx)
			if got != tt.want || ok != tt.ok {
				t.Fatalf("PrincipalFrom = %q, %v; want %q, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}
