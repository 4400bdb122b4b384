package store

import (
	"math"
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
		s.SetExpireEffort(effort)
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
		s.SetHz(tc.hz)
		s.SetExpireEffort(tc.effort)
		hz, effort := s.ActiveExpire()
		if hz != tc.wantHz || effort != tc.wantEff {
			t.Errorf("SetHz(%d), SetExpireEffort(%d): hz %d effort %d, want %d %d", tc.hz, tc.effort, hz, effort, tc.wantHz, tc.wantEff)
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

// TestEffortLeavesAnExpirerOffAlone: setting the effort of a group whose
// active expirer is off does not switch it on.
func TestEffortLeavesAnExpirerOffAlone(t *testing.T) {
	s := New(Options{ActiveExpireInterval: -1})
	defer s.Close()
	s.SetExpireEffort(5)
	if hz, effort := s.ActiveExpire(); hz != 0 || effort != 5 {
		t.Fatalf("hz %d effort %d, want 0 (off) and 5", hz, effort)
	}
}

// TestFrozenClockHoldsExpiry: while the clock is frozen (a script runs),
// neither a lookup nor the active expirer sees a key expire that expires
// after the frozen instant; thawed, it is gone.
func TestFrozenClockHoldsExpiry(t *testing.T) {
	now := int64(1_000_000)
	s := New(Options{Shards: 1, ActiveExpireInterval: -1, Now: func() int64 { return now }})
	defer s.Close()
	if _, _, _, err := s.Set(nil, []byte("k"), []byte("v"), SetOptions{ExpireAt: now + 10}); err != nil {
		t.Fatal(err)
	}
	s.FreezeClock(now)
	now += 100
	s.activeExpire(time.Hour)
	if _, found, _ := s.Get(nil, []byte("k")); !found || s.shards[0].volatile != 1 {
		t.Fatalf("frozen: found %v, keys with a TTL %d; want the key kept", found, s.shards[0].volatile)
	}
	s.ThawClock()
	if _, found, _ := s.Get(nil, []byte("k")); found {
		t.Fatal("thawed: the key is still there 90 ms past its expiry")
	}
}

// TestActiveExpireEstimatesAvgTTL: Stats.AvgTTL is 0 until a cycle has
// sampled keys with a TTL, then their average time to live in ms; later
// cycles move it by 1/50 of each new sample's average, as Redis's avg_ttl.
func TestActiveExpireEstimatesAvgTTL(t *testing.T) {
	now := int64(1_000_000)
	s := New(Options{Shards: 1, ActiveExpireInterval: -1, Now: func() int64 { return now }})
	defer s.Close()
	for i := range 20 {
		if _, _, _, err := s.Set(nil, []byte("k"+strconv.Itoa(i)), []byte("v"), SetOptions{ExpireAt: now + 60_000}); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, _, err := s.Set(nil, []byte("persistent"), []byte("v"), SetOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := s.Stats().AvgTTL; got != 0 {
		t.Fatalf("AvgTTL before any cycle = %d, want 0", got)
	}
	now += 10_000
	s.activeExpire(time.Hour)
	if got := s.Stats().AvgTTL; got != 50_000 {
		t.Fatalf("AvgTTL after the first cycle = %d, want 50000 (every key has 50 s left)", got)
	}
	now += 40_000 // 10 s left: the estimate moves 1/50 of the way
	s.activeExpire(time.Hour)
	if got, want := s.Stats().AvgTTL, int64(50_000/50*49+10_000/50); got != want {
		t.Fatalf("AvgTTL after the second cycle = %d, want %d", got, want)
	}
}

// TestAvgTTLOfFarExpiries: TTLs near the int64 limit (PEXPIREAT far in
// the future) do not overflow the estimate into a negative number.
func TestAvgTTLOfFarExpiries(t *testing.T) {
	now := int64(1_000_000)
	s := New(Options{Shards: 1, ActiveExpireInterval: -1, Now: func() int64 { return now }})
	defer s.Close()
	for i := range 4 {
		if _, _, _, err := s.Set(nil, []byte("far"+strconv.Itoa(i)), []byte("v"), SetOptions{ExpireAt: math.MaxInt64 - int64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	s.activeExpire(time.Hour)
	if got := s.Stats().AvgTTL; got <= 0 {
		t.Fatalf("AvgTTL of keys expiring near the int64 limit = %d, want a positive estimate", got)
	}
}
