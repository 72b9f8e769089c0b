package store

import (
	"context"
	"time"

	"github.com/openvitals/openvitals/internal/model"
)

type profileItem struct {
	PK, SK, Type string
	model.Profile
}

func profileKey(w model.Website, p model.Profile) profileItem {
	return profileItem{PK: websitePK(w.Account, w.ID), SK: profileSK(p.ID), Type: "profile", Profile: p}
}

// CreateProfile stores a new test profile; p.ID must be set (its secrets are sealed for it)
// and p.Created and p.Updated are set.
func (s *Store) CreateProfile(ctx context.Context, w model.Website, p *model.Profile) error {
	p.Created = s.now()
	p.Updated = p.Created
	return s.putItem(ctx, profileKey(w, *p), false, "profile "+p.ID)
}

// UpdateProfile replaces an existing test profile and sets p.Updated.
func (s *Store) UpdateProfile(ctx context.Context, w model.Website, p *model.Profile) error {
	p.Updated = s.now()
	return s.putItem(ctx, profileKey(w, *p), true, "profile "+p.ID)
}

// Profile returns one test profile.
func (s *Store) Profile(ctx context.Context, w model.Website, id string) (model.Profile, error) {
	var it profileItem
	err := s.getItem(ctx, websitePK(w.Account, w.ID), profileSK(id), "profile "+id, &it)
	return it.Profile, err
}

// Profiles lists a website's test profiles, oldest first.
func (s *Store) Profiles(ctx context.Context, w model.Website) ([]model.Profile, error) {
	return websiteItems(ctx, s, w, profileSKPrefix, "profiles", func(it profileItem) model.Profile { return it.Profile },
		func(p model.Profile) time.Time { return p.Created }, false)
}

// DeleteProfile removes a test profile.
func (s *Store) DeleteProfile(ctx context.Context, w model.Website, id string) error {
	return s.deleteItem(ctx, websitePK(w.Account, w.ID), profileSK(id), "profile "+id)
}
