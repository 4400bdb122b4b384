package store

import (
	"strconv"
	"testing"
	"time"
)

// TestActiveExpireEffortWalksFurther: in one cycle, effort 1 stops a shard
// whose first sample is at most a quarter expired, as before; effort 10
// samples more keys per step and goes on down to 7% expired, so it reclaims
// every expired key of the same shard.
func TestActiveExpireEffortWalksFurther(t *testing.T) {
	reclaimed := func(effort int) int64 {
		now := int64(1_000_000)
		s := New(Options{Shards: 1, ActiveExpireInterval: -1, Now: func() int64 { return now }})
		defer s.Close()
		s.SetActiveExpire(10, effort)
		for i := range 100 {
			at := now + 60_000
			if i%5 == 0 { // every fifth key, spread over the shard: 20% expired
				at = now + 10
			}
			if _, _, _, err := s.Set(nil, []byte("k"+strconv.Itoa(i)), []byte("v"), SetOptions{ExpireAt: at}); err != nil {
				t.Fatal(err)
			}
		}
		now += 100
		s.activeExpire(time.Hour)
		return int64(100 - s.shards[0].volatile) // not Stats: it reclaims expired keys itself
	}
	low, high := reclaimed(1), reclaimed(10)
	if low == 0 || low >= 20 {
		t.Errorf("effort 1 reclaimed %d of 20 expired keys in a cycle; want some, not all (one sample, 20%% ≤ 25%%)", low)
	}
	if high != 20 {
		t.Errorf("effort 10 reclaimed %d of 20 expired keys in a cycle; want all", high)
	}
}

// TestHzSetsTheExpiryInterval: hz is clamped to 1..500 and sets the cycle's
// interval, the background goroutine's tick and the cycle's budget (25% of
// the interval, 2% more per step of effort).
func TestHzSetsTheExpiryInterval(t *testing.T) {
	s := New(Options{})
	defer s.Close()
	if hz, effort := s.ActiveExpire(); hz != 10 || effort != 1 {
		t.Fatalf("default hz %d effort %d, want 10 and 1", hz, effort)
	}
	for _, tc := range []struct {
		hz, effort       int
		wantHz, wantEff  int
		tick, budgetOf1s time.Duration
	}{
		{500, 1, 500, 1, 2 * time.Millisecond, 250 * time.Millisecond},
		{1, 10, 1, 10, 100 * time.Millisecond, 430 * time.Millisecond},
		{0, 0, 1, 1, 100 * time.Millisecond, 250 * time.Millisecond},
		{100000, 11, 500, 10, 2 * time.Millisecond, 430 * time.Millisecond},
	} {
		s.SetActiveExpire(tc.hz, tc.effort)
		hz, effort := s.ActiveExpire()
		if hz != tc.wantHz || effort != tc.wantEff {
			t.Errorf("SetActiveExpire(%d, %d): hz %d effort %d, want %d %d", tc.hz, tc.effort, hz, effort, tc.wantHz, tc.wantEff)
		}
		if got := s.tick(); got != tc.tick {
			t.Errorf("hz %d: background ticks every %v, want %v", hz, got, tc.tick)
		}
		if got := s.expireBudget(time.Second); got != tc.budgetOf1s {
			t.Errorf("effort %d: a 1 s interval's budget is %v, want %v", effort, got, tc.budgetOf1s)
		}
	}
	other := s.NewDB()
	if hz, effort := other.ActiveExpire(); hz != 500 || effort != 10 {
		t.Errorf("a database of the same group has hz %d effort %d, want the group's 500 and 10", hz, effort)
	}
}
