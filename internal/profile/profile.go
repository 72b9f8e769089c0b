// Package profile seals and opens the secrets of test profiles (see model.Profile): the API
// seals them as they are given, and the audit worker opens them for the audit that uses them.
// Nothing else ever sees them in the clear.
package profile

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/model/step"
)

// Sealer seals a profile's secrets.
type Sealer interface {
	Seal(ctx context.Context, plaintext, aad []byte) ([]byte, error)
}

// Opener opens them.
type Opener interface {
	Open(ctx context.Context, sealed, aad []byte) ([]byte, error)
}

// Seal seals secrets into p.Secrets, bound to the website and to p.ID (set it first).
func Seal(ctx context.Context, keys Sealer, w model.Website, p *model.Profile, secrets model.ProfileSecrets) error {
	plain, err := json.Marshal(secrets)
	if err != nil {
		return err
	}
	sealed, err := keys.Seal(ctx, plain, model.ProfileAAD(w, p.ID))
	if err != nil {
		return fmt.Errorf("seal profile secrets: %w", err)
	}
	p.Secrets = sealed
	return nil
}

// Open returns a profile's secrets; a profile without any has none.
func Open(ctx context.Context, keys Opener, w model.Website, p model.Profile) (model.ProfileSecrets, error) {
	var out model.ProfileSecrets
	if len(p.Secrets) == 0 {
		return out, nil
	}
	plain, err := keys.Open(ctx, p.Secrets, model.ProfileAAD(w, p.ID))
	if err != nil {
		return out, fmt.Errorf("open profile %s: %w", p.ID, err)
	}
	if err := json.Unmarshal(plain, &out); err != nil {
		return out, fmt.Errorf("open profile %s: %w", p.ID, err)
	}
	return out, nil
}

// Login returns the profile's login steps with the values typed by them put back.
func Login(p model.Profile, secrets model.ProfileSecrets) []step.Step {
	out := make([]step.Step, len(p.Login))
	for i, st := range p.Login {
		if v, ok := secrets.Typed[i]; ok {
			st.Value = v
		}
		out[i] = st
	}
	return out
}
