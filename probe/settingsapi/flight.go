package settingsapi

import (
	"context"
	"sync"
)

// flight coalesces concurrent calls with the same key into one: the first
// caller starts fn in its own goroutine, every caller that arrives while it
// runs waits for the same result. It is a minimal singleflight (no new
// dependency); the zero value is ready to use.
type flight[T any] struct {
	mu    sync.Mutex
	calls map[string]*flightCall[T]
	// joined, when set (tests only), is called with each key a caller
	// joins or starts, after the call is registered.
	joined func(key string)
}

type flightCall[T any] struct {
	done chan struct{}
	val  T
	err  error
}

// do returns fn's result for key, running fn only if no call for key is in
// flight. fn runs detached from ctx: a waiter whose ctx ends returns
// ctx.Err() while fn keeps running for the others (fn must bound itself).
func (f *flight[T]) do(ctx context.Context, key string, fn func() (T, error)) (T, error) {
	f.mu.Lock()
	c, running := f.calls[key]
	if !running {
		if f.calls == nil {
			f.calls = make(map[string]*flightCall[T])
		}
		c = &flightCall[T]{done: make(chan struct{})}
		f.calls[key] = c
		go f.run(key, c, fn)
	}
	f.mu.Unlock()
	if f.joined != nil {
		f.joined(key)
	}

	select {
	case <-c.done:
		return c.val, c.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

func (f *flight[T]) run(key string, c *flightCall[T], fn func() (T, error)) {
	defer func() {
		f.mu.Lock()
		delete(f.calls, key)
		f.mu.Unlock()
		close(c.done)
	}()
	c.val, c.err = fn()
}
