package certexpiry

import (
	"testing"
	"time"
)

func TestHuman(t *testing.T) {
	for d, want := range map[time.Duration]string{
		45 * time.Second:                 "45s",
		30*time.Minute + 5*time.Second:   "30m5s",
		time.Hour:                        "1h0m",
		3*time.Hour + 20*time.Minute:     "3h20m",
		52 * time.Hour:                   "2d4h",
		200 * 365 * 24 * time.Hour:       "200 years",
		time.Hour + 500*time.Millisecond: "1h0m",
	} {
		if got := human(d); got != want {
			t.Errorf("human(%s) = %q, want %q", d, got, want)
		}
	}
}
