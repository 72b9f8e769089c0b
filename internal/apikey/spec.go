package apikey

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/store"
)

// Grant is one account:role:key entry of OPENVITALS_KEYS.
type Grant struct {
	Account string
	Role    model.Role
	Key     string
}

var accountName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// ValidAccount tells whether name can name an account: 1 to 64 lower-case letters, digits,
// '-' or '_', starting with a letter or digit.
func ValidAccount(name string) bool { return accountName.MatchString(name) }

// ParseGrants reads a comma-separated list of account:role:key entries.
func ParseGrants(list string) ([]Grant, error) {
	var grants []Grant
	for i, entry := range strings.Split(list, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		parts := strings.SplitN(entry, ":", 3)
		if len(parts) != 3 {
			return nil, fmt.Errorf("entry %d: want account:role:key", i+1)
		}
		g := Grant{Account: parts[0], Role: model.Role(parts[1]), Key: parts[2]}
		switch {
		case !ValidAccount(g.Account):
			return nil, fmt.Errorf("entry %d: account %q: use 1 to 64 of a-z, 0-9, '-' and '_'", i+1, g.Account)
		case !g.Role.Valid():
			return nil, fmt.Errorf("entry %d: role %q: want admin or viewer", i+1, g.Role)
		case len(g.Key) < MinLength:
			return nil, fmt.Errorf("entry %d: key shorter than %d characters", i+1, MinLength)
		case strings.ContainsAny(g.Key, " \t\r\n"):
			return nil, fmt.Errorf("entry %d: key contains white space", i+1)
		}
		grants = append(grants, g)
	}
	return grants, nil
}

// Provision creates a grant's account if it is new and stores the hash of its key.
func Provision(ctx context.Context, st *store.Store, g Grant, name string) error {
	if err := st.EnsureAccount(ctx, g.Account); err != nil {
		return err
	}
	return st.PutAPIKey(ctx, model.APIKey{Hash: Hash(g.Key), Account: g.Account, Role: g.Role, Name: name})
}
