package model

import (
	"time"

	"github.com/openvitals/openvitals/internal/model/step"
)

// Test is a multistep test: a scripted browser journey through a website.
type Test struct {
	ID      string
	Alias   string
	Device  string // "desktop" or "mobile"
	Steps   []step.Step
	Created time.Time
}
