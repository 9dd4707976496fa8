package endpoints

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"
	"time"
)

func TestParseStall(t *testing.T) {
	s, err := ParseStall("1s/5s")
	if err != nil || s.Pause != time.Second || s.Every != 5*time.Second {
		t.Fatalf("ParseStall(1s/5s) = %+v, %v", s, err)
	}
	for _, bad := range []string{"", "1s", "5s/1s", "1s/1s", "x/5s", "0s/5s", "-1s/5s"} {
		if _, err := ParseStall(bad); err == nil {
			t.Errorf("ParseStall(%q) accepted", bad)
		}
	}
}

func TestStallUntil(t *testing.T) {
	start := time.Unix(1000, 0)
	s := Stall{Pause: time.Second, Every: 5 * time.Second, Start: start}
	cases := []struct {
		at   time.Duration
		want time.Duration
	}{
		{0, 0},
		{3999 * time.Millisecond, 0},
		{4 * time.Second, time.Second},
		{4500 * time.Millisecond, 500 * time.Millisecond},
		{5 * time.Second, 0},
		{9250 * time.Millisecond, 750 * time.Millisecond},
		{-time.Second, 0},
	}
	for _, c := range cases {
		if got := s.Until(start.Add(c.at)); got != c.want {
			t.Errorf("Until(start+%v) = %v, want %v", c.at, got, c.want)
		}
	}
}

// TestStallHandler checks, on synctest's fake clock, that a request in a
// pause is answered when the pause ends and one outside it at once.
func TestStallHandler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := Stall{Pause: time.Second, Every: 5 * time.Second, Start: time.Now()}
		h := s.Handler(Handler())
		serve := func() time.Duration {
			t0 := time.Now()
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
			if rec.Code != 200 || rec.Body.String() != "Hello, World!" {
				t.Fatalf("got %d %q", rec.Code, rec.Body)
			}
			return time.Since(t0)
		}
		if d := serve(); d != 0 {
			t.Errorf("outside the pause: took %v", d)
		}
		time.Sleep(4200 * time.Millisecond)
		if d := serve(); d != 800*time.Millisecond {
			t.Errorf("in the pause: took %v, want the 800ms left of it", d)
		}
	})
}

// fillerReader repeats the filler across reads of any size.
func TestFillerReader(t *testing.T) {
	for _, size := range []int{1, 7, 32 << 10, 100_000} {
		p := make([]byte, size)
		if n, err := (fillerReader{}).Read(p); n != size || err != nil {
			t.Fatalf("Read(%d bytes) = %d, %v", size, n, err)
		}
		for i := range p {
			if p[i] != filler[i%len(filler)] {
				t.Fatalf("Read(%d bytes): byte %d is %q, want %q", size, i, p[i], filler[i%len(filler)])
			}
		}
	}
}
