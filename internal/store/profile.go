package store

import (
	"context"
	"time"

	"github.com/openvitals/openvitals/internal/model"
)

var profileKind = websiteKind[model.Profile]{sk: profileSK, typ: "profile", name: "profile", plural: "profiles",
	id: func(p model.Profile) string { return p.ID }, created: func(p model.Profile) time.Time { return p.Created }}

// CreateProfile stores a new test profile; p.ID must be set (its secrets are sealed for it)
// and p.Created and p.Updated are set.
func (s *Store) CreateProfile(ctx context.Context, w model.Website, p *model.Profile) error {
	p.Created = s.now()
	p.Updated = p.Created
	return profileKind.put(ctx, s, w, *p, putNew)
}

// UpdateProfile replaces an existing test profile and sets p.Updated.
func (s *Store) UpdateProfile(ctx context.Context, w model.Website, p *model.Profile) error {
	p.Updated = s.now()
	return profileKind.put(ctx, s, w, *p, putExisting)
}

// Profile returns one test profile.
func (s *Store) Profile(ctx context.Context, w model.Website, id string) (model.Profile, error) {
	return profileKind.get(ctx, s, w, id)
}

// Profiles lists a website's test profiles, oldest first.
func (s *Store) Profiles(ctx context.Context, w model.Website) ([]model.Profile, error) {
	return profileKind.list(ctx, s, w)
}

// DeleteProfile removes a test profile.
func (s *Store) DeleteProfile(ctx context.Context, w model.Website, id string) error {
	return profileKind.delete(ctx, s, w, id)
}
