package testkit_test

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/internal/testkit"
)

// logRecorder is a testing.TB that keeps what is logged.
type logRecorder struct {
	testing.TB
	logged []string
}

func (r *logRecorder) Logf(format string, args ...any) {
	r.logged = append(r.logged, fmt.Sprintf(format, args...))
}

// TestRandLogsASeedThatReplaysIt: the seed Rand logs gives the same
// sequence through NewRand, and two runs get different seeds.
func TestRandLogsASeedThatReplaysIt(t *testing.T) {
	seeds := make([]uint64, 2)
	for i := range seeds {
		rec := &logRecorder{TB: t}
		rng := testkit.Rand(rec)
		require.Len(t, rec.logged, 1)
		s, ok := strings.CutPrefix(rec.logged[0], "seed ")
		require.True(t, ok, rec.logged[0])
		seed, err := strconv.ParseUint(s, 10, 64)
		require.NoError(t, err)
		replay := testkit.NewRand(seed)
		for range 100 {
			require.Equal(t, replay.Uint64(), rng.Uint64())
		}
		seeds[i] = seed
		// Windows' clock moves in steps of up to 16 ms.
		testkit.Eventually(t, "the clock to move", waitLimit, func() bool { return uint64(time.Now().UnixNano()) > seed })
	}
	assert.NotEqual(t, seeds[0], seeds[1])
}

// TestRandIsSafeForConcurrentRounds: rounds run a few at a time draw from
// one source (the race detector checks the sharing) and together get
// exactly the one sequence.
func TestRandIsSafeForConcurrentRounds(t *testing.T) {
	const rounds, draws = 4, 250
	rng, replay := testkit.NewRand(7), testkit.NewRand(7)
	got := make(chan uint64, rounds*draws)
	var wg sync.WaitGroup
	for range rounds {
		wg.Go(func() {
			for range draws {
				got <- rng.Uint64()
			}
		})
	}
	wg.Wait()
	close(got)
	want := map[uint64]bool{}
	for range rounds * draws {
		want[replay.Uint64()] = true
	}
	n := 0
	for v := range got {
		assert.True(t, want[v], "a value outside the sequence: %d", v)
		n++
	}
	assert.Equal(t, rounds*draws, n)
}

// TestSleepRandomlySleepsItsDrawnMoment: each sleep lasts at least the
// moment drawn from the source, a moment below the bound.
func TestSleepRandomlySleepsItsDrawnMoment(t *testing.T) {
	const upTo = 20 * time.Millisecond
	rng, replay := testkit.NewRand(1), testkit.NewRand(1)
	moments := map[time.Duration]bool{}
	for range 5 {
		want := time.Duration(replay.Int64N(int64(upTo)))
		start := time.Now()
		testkit.SleepRandomly(rng, upTo)
		assert.GreaterOrEqual(t, time.Since(start), want)
		assert.Less(t, want, upTo)
		moments[want] = true
	}
	assert.Greater(t, len(moments), 1, "the moments are drawn, not fixed")
}
