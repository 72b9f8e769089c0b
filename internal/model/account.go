package model

import "time"

// Role is what an API key may do.
type Role string

// The two roles: admin may do everything in its account, viewer only read.
const (
	RoleAdmin  Role = "admin"
	RoleViewer Role = "viewer"
)

// Valid tells whether r is a known role.
func (r Role) Valid() bool { return r == RoleAdmin || r == RoleViewer }

// APIKey is a stored API key. Only the hash of the secret is kept.
type APIKey struct {
	Hash    string
	Account string
	Role    Role
	Name    string
	Created time.Time
}
