package engines

import (
	"context"
	"testing"
	"time"
)

// pending's wait returns when the count is back to zero, or at its deadline.
func TestPending(t *testing.T) {
	var p pending
	if err := p.wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	p.add(2)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	err := p.wait(ctx)
	cancel()
	if err != context.DeadlineExceeded {
		t.Fatalf("wait with work pending: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		done <- p.wait(ctx)
	}()
	p.add(-1)
	p.add(-1)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
