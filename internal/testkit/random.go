package testkit

import (
	"math/rand/v2"
	"sync"
	"testing"
	"time"
)

// Rand returns a random source for t's seeded rounds (a crash test's
// order, its kill points): seeded from the clock so that every run tries
// other rounds, with the seed in t's log so that a failing run's plan can
// be replayed (NewRand with that seed). It is safe for concurrent use.
func Rand(t testing.TB) *rand.Rand {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	return NewRand(seed)
}

// NewRand is the source Rand returns for seed.
func NewRand(seed uint64) *rand.Rand {
	return rand.New(&lockedSource{src: rand.NewPCG(seed, 0)})
}

// lockedSource lets the rounds of one test, run a few at a time, draw from
// one generator.
type lockedSource struct {
	mu  sync.Mutex
	src *rand.PCG
}

func (s *lockedSource) Uint64() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.src.Uint64()
}

// SleepRandomly sleeps for a moment drawn from rng in [0, upTo): a random
// moment to act at (to kill a child mid-work), never a wait for anything.
func SleepRandomly(rng *rand.Rand, upTo time.Duration) {
	time.Sleep(time.Duration(rng.Int64N(int64(upTo))))
}
