package settingsapi

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFlightCoalescesSameKeyOnly(t *testing.T) {
	var f flight[int]
	release := make(chan struct{})
	joined := make(chan string, 16)
	f.joined = func(k string) { joined <- k }
	var calls atomic.Int64
	fn := func() (int, error) {
		calls.Add(1)
		<-release
		return 7, nil
	}
	var wg sync.WaitGroup
	results := make(chan int, 10)
	for range 5 {
		wg.Go(func() {
			v, err := f.do(context.Background(), "a", fn)
			assert.NoError(t, err)
			results <- v
		})
	}
	for range 5 {
		<-joined
	}
	other, err := f.do(context.Background(), "b", func() (int, error) { return 9, nil })
	<-joined
	require.NoError(t, err)
	assert.Equal(t, 9, other, "another key is not held up by key a")
	close(release)
	wg.Wait()
	close(results)
	for v := range results {
		assert.Equal(t, 7, v)
	}
	assert.EqualValues(t, 1, calls.Load())

	// A finished call is forgotten: the next call runs fn again.
	_, err = f.do(context.Background(), "a", func() (int, error) { calls.Add(1); return 0, errors.New("boom") })
	<-joined
	assert.EqualError(t, err, "boom")
	assert.EqualValues(t, 2, calls.Load())
}

func TestFlightWaiterCancelLeavesCallRunning(t *testing.T) {
	var f flight[string]
	release := make(chan struct{})
	joined := make(chan string, 4)
	f.joined = func(k string) { joined <- k }
	fn := func() (string, error) { <-release; return "done", nil }

	ctx, cancel := context.WithCancel(context.Background())
	first := make(chan error, 1)
	go func() { _, err := f.do(ctx, "k", fn); first <- err }()
	<-joined
	second := make(chan string, 1)
	go func() { v, _ := f.do(context.Background(), "k", fn); second <- v }()
	<-joined
	cancel()
	assert.ErrorIs(t, <-first, context.Canceled)
	close(release)
	assert.Equal(t, "done", <-second)
}
