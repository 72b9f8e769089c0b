// Package quota holds the per-account limits: how many pages a website may have and how much
// on-demand work an account may queue a day. Defaults fit a small team; an operator changes
// them per account (cmd/keys limits). The counters are conditional updates in DynamoDB
// (internal/store), so a limit holds across any number of Lambda instances.
package quota

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/openvitals/openvitals/internal/model"
)

// Limit names one limit.
type Limit string

// The limits.
const (
	// PagesPerWebsite is how many pages one website may have (a size limit: 422 over it).
	PagesPerWebsite Limit = "pages_per_website"
	// AuditsPerDay is how many on-demand audits (one page on one device) an account may queue
	// per UTC day; the daily schedule's audits do not count.
	AuditsPerDay Limit = "audits_per_day"
	// RunsPerDay is how many on-demand multistep runs an account may queue per UTC day.
	RunsPerDay Limit = "runs_per_day"
	// BeaconsPerDay is how many real-user page views each website of an account may have
	// counted per UTC day (by the day they were collected). Views over it are not counted and
	// collect refuses more beacons until the next day.
	BeaconsPerDay Limit = "beacons_per_day"
)

// Limits are all the limits, in the order messages and the operator command list them.
var Limits = []Limit{PagesPerWebsite, AuditsPerDay, RunsPerDay, BeaconsPerDay}

// Defaults are the limits of an account the operator has not changed: a small team's
// website, a few dozen on-demand audits and runs an hour at most.
var Defaults = map[Limit]int{
	PagesPerWebsite: 500,
	AuditsPerDay:    500,
	RunsPerDay:      200,
	BeaconsPerDay:   500_000,
}

// Daily tells whether a limit counts per UTC day (else it is a size).
func (l Limit) Daily() bool { return l != PagesPerWebsite }

// Known tells whether l names a limit.
func (l Limit) Known() bool {
	_, ok := Defaults[l]
	return ok
}

// Of returns an account's value of a limit: its override, else the default.
func Of(overrides map[string]int, l Limit) int {
	if v, ok := overrides[string(l)]; ok {
		return v
	}
	return Defaults[l]
}

// ExceededError is a request refused because it would take an account over a limit.
type ExceededError struct {
	Limit Limit
	// Value is the limit; Used what was used before the request, Requested what it asked for.
	Value, Used, Requested int
	// Resets is when a daily limit starts again (zero for a size limit).
	Resets time.Time
	// At is when the request was refused, by the clock Resets is on.
	At time.Time
}

func (e *ExceededError) Error() string {
	left := max(0, e.Value-e.Used)
	if e.Limit.Daily() {
		return fmt.Sprintf("limit %s is %d a day: %d used today, %d left, this request needs %d; it resets at %s",
			e.Limit, e.Value, e.Used, left, e.Requested, e.Resets.UTC().Format(time.RFC3339))
	}
	return fmt.Sprintf("limit %s is %d: %d in use, room for %d more, this request adds %d", e.Limit, e.Value, e.Used, left, e.Requested)
}

// NextDay is when a daily limit counted on t's UTC day resets: the next UTC midnight.
func NextDay(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d+1, 0, 0, 0, 0, time.UTC)
}

// Counter is what the Keeper needs of the table.
type Counter interface {
	AccountLimits(ctx context.Context, account string) (map[string]int, error)
	Reserve(ctx context.Context, account, counter, day string, n, limit int) (int, error)
	Release(ctx context.Context, account, counter, day string, n int) error
	ReservePages(ctx context.Context, w model.Website, n, limit int) (int, error)
	ReleasePages(ctx context.Context, w model.Website, n int) error
	Used(ctx context.Context, account, counter, day string) (int, error)
}

// Keeper applies an account's limits.
type Keeper struct {
	st  Counter
	now func() time.Time
}

// NewKeeper returns a Keeper counting in st; now is the clock that says the day.
func NewKeeper(st Counter, now func() time.Time) *Keeper { return &Keeper{st: st, now: now} }

// Take reserves n of a daily limit for an account: all of them or, with *ExceededError,
// none. The work reserved and then not queued is given back with Return.
func (k *Keeper) Take(ctx context.Context, account string, l Limit, n int) error {
	if n <= 0 {
		return nil
	}
	overrides, err := k.st.AccountLimits(ctx, account)
	if err != nil {
		return err
	}
	limit := Of(overrides, l)
	now := k.now()
	used, err := k.st.Reserve(ctx, account, string(l), model.Day(now), n, limit)
	if errors.Is(err, model.ErrOverLimit) {
		return &ExceededError{Limit: l, Value: limit, Used: used, Requested: n, Resets: NextDay(now), At: now}
	}
	return err
}

// Return gives back n of what Take reserved today.
func (k *Keeper) Return(ctx context.Context, account string, l Limit, n int) error {
	if n <= 0 {
		return nil
	}
	return k.st.Release(ctx, account, string(l), model.Day(k.now()), n)
}

// TakePages makes room for n more pages on a website, or says with *ExceededError that they
// would not fit.
func (k *Keeper) TakePages(ctx context.Context, w model.Website, n int) error {
	overrides, err := k.st.AccountLimits(ctx, w.Account)
	if err != nil {
		return err
	}
	limit := Of(overrides, PagesPerWebsite)
	used, err := k.st.ReservePages(ctx, w, n, limit)
	if errors.Is(err, model.ErrOverLimit) {
		return &ExceededError{Limit: PagesPerWebsite, Value: limit, Used: used, Requested: n}
	}
	return err
}

// ReturnPages frees the room of n pages (deleted, or reserved and not created).
func (k *Keeper) ReturnPages(ctx context.Context, w model.Website, n int) error {
	return k.st.ReleasePages(ctx, w, n)
}

// beaconCounter names the counter of a website's page views of a day.
func beaconCounter(website string) string { return string(BeaconsPerDay) + "#" + website }

// TakeViews counts n page views of a website collected on a UTC day (yyyymmdd) against its
// daily limit and returns how many of them fit: n, fewer when the limit is reached on the way,
// 0 once it was reached.
func (k *Keeper) TakeViews(ctx context.Context, account, website, day string, n int) (int, error) {
	if n <= 0 {
		return 0, nil
	}
	overrides, err := k.st.AccountLimits(ctx, account)
	if err != nil {
		return 0, err
	}
	limit := Of(overrides, BeaconsPerDay)
	// Each refusal says what is used, so the next try asks for less: what is left.
	for want := n; ; {
		used, err := k.st.Reserve(ctx, account, beaconCounter(website), day, want, limit)
		if err == nil {
			return want, nil
		}
		if !errors.Is(err, model.ErrOverLimit) {
			return 0, err
		}
		if want = min(want-1, limit-used); want <= 0 {
			return 0, nil
		}
	}
}

// ViewsLeft says, with *ExceededError, that a website has reached today's limit of page views.
func (k *Keeper) ViewsLeft(ctx context.Context, account, website string) error {
	overrides, err := k.st.AccountLimits(ctx, account)
	if err != nil {
		return err
	}
	limit := Of(overrides, BeaconsPerDay)
	now := k.now()
	used, err := k.st.Used(ctx, account, beaconCounter(website), model.Day(now))
	if err != nil {
		return err
	}
	if used >= limit {
		return &ExceededError{Limit: BeaconsPerDay, Value: limit, Used: used, Requested: 1, Resets: NextDay(now), At: now}
	}
	return nil
}
