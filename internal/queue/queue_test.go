package queue_test

import (
	"context"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/awstest"
	"github.com/openvitals/openvitals/internal/queue"
)

// A queue's settings are read back from the queue itself, as its creator set them (the stack
// in AWS), and its deadline is a visibility timeout for each delivery.
func TestSettingsAreTheQueuesOwn(t *testing.T) {
	clients := awstest.Clients(t)
	want := queue.Settings{VisibilityTimeout: 45 * time.Second, MaxReceives: 4}
	q := awstest.Queue(t, clients, want)
	got, err := q.Settings(context.Background())
	if err != nil || got != want {
		t.Fatalf("settings %+v (%v), want %+v", got, err, want)
	}
	if d := got.Deadline(); d != 3*time.Minute {
		t.Errorf("deadline %s, want 3m0s", d)
	}
}
