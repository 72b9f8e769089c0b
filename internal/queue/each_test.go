package queue

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/openvitals/openvitals/internal/model"
)

func TestTrackEachCountsDeletedWebsitesDone(t *testing.T) {
	website := func(j string) (string, error) {
		if j == "gone" {
			return "", fmt.Errorf("website: %w", model.ErrNotFound)
		}
		return "site of " + j, nil
	}
	var tracked []string
	p, err := TrackEach([]string{"a", "gone", "b"}, website, func(j, w string, p *Progress) error {
		tracked = append(tracked, w)
		p.Remaining++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if p.Done != 1 || p.Remaining != 2 || strings.Join(tracked, ",") != "site of a,site of b" {
		t.Errorf("progress %+v, tracked %q; want 1 done, 2 remaining, a and b tracked", p, tracked)
	}

	bad := errors.New("read failed")
	if _, err := TrackEach([]string{"a"}, website, func(string, string, *Progress) error { return bad }); !errors.Is(err, bad) {
		t.Errorf("err = %v, want the tracking error", err)
	}
	if _, err := TrackEach([]string{"a"}, func(string) (string, error) { return "", bad }, func(string, string, *Progress) error { return nil }); !errors.Is(err, bad) {
		t.Errorf("err = %v, want the website's error", err)
	}
}

func TestSweepEachSweepsEveryPendingPieceAndNamesFailures(t *testing.T) {
	list := func(context.Context) ([]string, error) { return []string{"a", "b", "c"}, nil }
	swept, err := SweepEach(context.Background(), list, func(p string) string { return "piece " + p }, func(p string, s *Swept) error {
		if p == "b" {
			return errors.New("stuck")
		}
		s.Requeued++
		return nil
	})
	if swept.Requeued != 2 {
		t.Errorf("requeued %d, want 2 (a failure does not stop the others)", swept.Requeued)
	}
	if err == nil || err.Error() != "piece b: stuck" {
		t.Errorf("err = %v, want the failed piece named", err)
	}

	bad := errors.New("list failed")
	if _, err := SweepEach(context.Background(), func(context.Context) ([]string, error) { return nil, bad }, func(p string) string { return p },
		func(string, *Swept) error { t.Error("swept with no list"); return nil }); !errors.Is(err, bad) {
		t.Errorf("err = %v, want the listing's error", err)
	}
}
